// xstage gate tests: units read from metric keys and values/differences printed in them, and the short
// instance labels ("periodic K=132 B=16KiB G=5us") that stay unique where points collide.
#include <gtest/gtest.h>

#include "xs/gate/labels.hpp"
#include "xs/gate/units.hpp"

namespace xs::gate {
namespace {
using nlohmann::json;

TEST(Units, FromMetricKeySuffix) {
  EXPECT_EQ(unit_of_metric("model.R_Bps"), Unit::kBytesPerSecond);
  EXPECT_EQ(unit_of_metric("points[*].issue_time_s.median"), Unit::kSeconds);
  EXPECT_EQ(unit_of_metric("points[*].period_s.p90"), Unit::kSeconds);
  EXPECT_EQ(unit_of_metric("model.tiss0[*].s"), Unit::kSeconds);
  EXPECT_EQ(unit_of_metric("model.Q[*].bytes"), Unit::kBytes);
  EXPECT_EQ(unit_of_metric("model.Q[*].knee_V_bytes"), Unit::kBytes);
  EXPECT_EQ(unit_of_metric("validation.issue_median_rel_err"), Unit::kRelErr);
  EXPECT_EQ(unit_of_metric("points[*].sm_clock_hz"), Unit::kHertz);
  EXPECT_EQ(unit_of_metric("points[*].verification.wrong"), Unit::kNone);
  EXPECT_EQ(unit_of_metric("model.R_ci95[0]"), Unit::kNone);  // R has no unit suffix
  EXPECT_EQ(unit_of_metric("extra.reference.copy_engine_Bps"), Unit::kBytesPerSecond);
}

TEST(Units, ValuesWithScaledUnits) {
  EXPECT_EQ(format_value(52593191255.5, Unit::kBytesPerSecond), "52.6 GB/s");
  EXPECT_EQ(format_value(1.9e-7, Unit::kSeconds), "190 ns");
  EXPECT_EQ(format_value(9.01797e-06, Unit::kSeconds), "9.02 us");
  EXPECT_EQ(format_value(2.5, Unit::kSeconds), "2.50 s");
  EXPECT_EQ(format_value(2148898.9, Unit::kBytes), "2.05 MiB");  // binary prefixes for sizes
  EXPECT_EQ(format_value(577040.5, Unit::kBytes), "564 KiB");
  EXPECT_EQ(format_value(512, Unit::kBytes), "512 B");
  EXPECT_EQ(format_value(1.98e9, Unit::kHertz), "1.98 GHz");
  EXPECT_EQ(format_value(0.020812, Unit::kRelErr), "2.08%");
  EXPECT_EQ(format_value(0, Unit::kSeconds), "0 s");
  EXPECT_EQ(format_value(3, Unit::kNone), "3");
  EXPECT_EQ(format_value(0.125, Unit::kNone), "0.125");
  EXPECT_EQ(format_value(NAN, Unit::kSeconds), "nan");
}

TEST(Units, SignedDifferences) {
  EXPECT_EQ(format_delta(13.3e6, Unit::kBytesPerSecond), "+13.3 MB/s");
  EXPECT_EQ(format_delta(-1.6e-7, Unit::kSeconds), "-160 ns");
  EXPECT_EQ(format_delta(0.00555, Unit::kRelErr), "+0.555 pp");  // percentage points, not percent
  EXPECT_EQ(format_delta(-448, Unit::kBytes), "-448 B");
  EXPECT_EQ(format_delta(2, Unit::kNone), "+2");
  EXPECT_EQ(format_delta(0, Unit::kSeconds), "0");
}

TEST(Units, CompactAxisValues) {
  EXPECT_EQ(compact_bytes(16384), "16KiB");
  EXPECT_EQ(compact_bytes(2097152), "2MiB");
  EXPECT_EQ(compact_bytes(1000), "1000B");
  EXPECT_EQ(compact_seconds(5e-6), "5us");
  EXPECT_EQ(compact_seconds(3.0000000000000004e-05), "30us");
  EXPECT_EQ(compact_seconds(7.500000000000001e-06), "7.5us");
  EXPECT_EQ(compact_seconds(0), "0");
  EXPECT_EQ(axis_text("B_bytes", 16384), "B=16KiB");
  EXPECT_EQ(axis_text("G_s", 5e-6), "G=5us");
  EXPECT_EQ(axis_text("K", 132), "K=132");
  EXPECT_EQ(axis_text("suite", "isolated"), "suite=isolated");
}

MetricSpec points_metric() {
  MetricSpec m;
  m.match_by_names = {"id", "spec"};
  m.match_by = {parse_metric_path("id", "", false), parse_metric_path("spec", "", false)};
  return m;
}

json point(const std::string& id, const std::string& suite, int k, double b, double g, int bursts) {
  return {{"id", id}, {"spec", {{"suite", suite}, {"K", k}, {"B_bytes", b}, {"G_s", g}, {"num_bursts", bursts}}}};
}

TEST(Labels, PointsGetShortLabels) {
  const json a = point("remote_store.periodic.host", "periodic", 132, 16384, 5e-6, 42);
  const json b = point("remote_store.isolated.host", "isolated", 16, 2097152, 0, 1);
  EXPECT_EQ(element_labels({&a, &b}, points_metric()),
            (std::vector<std::string>{"periodic K=132 B=16KiB G=5us", "isolated K=16 B=2MiB G=0"}));
}

TEST(Labels, CollidingPointsGetTheAxesThatTellThemApart) {
  // Same suite/K/B/G: the axis that differs (num_bursts) and the id where it differs are appended.
  const json a = point("remote_store.periodic.host", "periodic", 132, 16384, 0, 42);
  const json b = point("remote_store.periodic.host", "periodic", 132, 16384, 0, 84);
  const json c = point("other.periodic.host", "periodic", 66, 16384, 0, 84);
  const auto labels = element_labels({&a, &b, &c}, points_metric());
  EXPECT_EQ(labels[0], "periodic K=132 B=16KiB G=0 num_bursts=42");
  EXPECT_EQ(labels[1], "periodic K=132 B=16KiB G=0 num_bursts=84");
  EXPECT_EQ(labels[2], "periodic K=66 B=16KiB G=0");  // no collision: stays short
  const json d = point("kernel_b.periodic.host", "periodic", 132, 16384, 0, 42);
  const auto by_id = element_labels({&a, &d}, points_metric());
  EXPECT_EQ(by_id[0], "periodic K=132 B=16KiB G=0 remote_store.periodic.host");
  EXPECT_EQ(by_id[1], "periodic K=132 B=16KiB G=0 kernel_b.periodic.host");
}

TEST(Labels, MatchByArraysShowTheirKeysWithUnits) {
  MetricSpec m;
  m.match_by_names = {"K", "V_bytes"};
  m.match_by = {parse_metric_path("K", "", false), parse_metric_path("V_bytes", "", false)};
  const json row = {{"K", 66}, {"V_bytes", 1048576.0}, {"s", 1.9e-7}};
  EXPECT_EQ(element_labels({&row}, m), std::vector<std::string>{"K=66 V=1MiB"});
}

}  // namespace
}  // namespace xs::gate
