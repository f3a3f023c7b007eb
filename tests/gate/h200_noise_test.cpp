// xstage gate tests: the noise test on the committed back-to-back H200 calibrations (results/h200): its
// p-values match scipy.stats.mannwhitneyu on the same samples, the run-to-run outliers are NOISE, and a
// planted 15% slowdown of every point is WORSE. Uses its own config, not configs/gate (tuned elsewhere).
#include <gtest/gtest.h>

#include "xs/gate/compare.hpp"
#include "xs/report/result_file.hpp"

namespace xs::gate {
namespace {
using nlohmann::json;

const std::string kRoot = std::string(XS_TEST_DATA_DIR) + "/../..";

json load(const std::string& relative) { return report::to_json(report::read_result_file(kRoot + relative)); }

GateConfig issue_time_gate() {
  return gate_config_from_json(json::parse(R"({"schema": {"name": "xstage.gate", "version": "1.0"},
      "metrics": [{"name": "points[*].issue_time_s.median", "direction": "lower", "rel_tol": 0.05, "abs_tol": 2e-08}]})"));
}

const Comparison* row(const GateReport& r, const std::string& instance) {
  for (const Comparison& c : r.rows) {
    if (c.instance == instance) return &c;
  }
  return nullptr;
}

TEST(GateNoiseOnH200Results, PValuesMatchScipyAndOutliersAreNoise) {
  const json run1 = load("/results/h200/archive/2026-12-01-04c54be/refit/calibration-host.json");
  const json run2 = load("/results/h200/archive/2026-12-01-04c54be/refit/calibration-host-run2.json");
  const GateReport r = compare(run1, run2, issue_time_gate());
  // scipy.stats.mannwhitneyu(run1_samples, run2_samples, alternative="two-sided") on these points:
  const Comparison* k16 = row(r, "isolated K=16 B=16KiB G=0");  // +19% median shift, 7 + 7 samples
  ASSERT_NE(k16, nullptr);
  ASSERT_TRUE(k16->p_value.has_value());
  EXPECT_NEAR(*k16->p_value, 0.05303030303030303, 1e-12);
  EXPECT_EQ(k16->status, Status::kNoise);
  const Comparison* k66 = row(r, "isolated K=66 B=64KiB G=0");  // +7.3%
  ASSERT_NE(k66, nullptr);
  EXPECT_NEAR(*k66->p_value, 0.011072261072261072, 1e-12);
  EXPECT_EQ(k66->status, Status::kWorse);
  const Comparison* g40 = row(r, "periodic K=132 B=16KiB G=40us");  // -24.7%, 5 + 5 samples
  ASSERT_NE(g40, nullptr);
  EXPECT_NEAR(*g40->p_value, 0.42063492063492064, 1e-12);
  EXPECT_EQ(g40->status, Status::kNoise);
  // Without the samples the same shifts are all decided by the tolerance alone.
  EXPECT_EQ(r.count(Status::kNoise), 5u);
  EXPECT_EQ(r.count(Status::kWorse), 1u);
}

TEST(GateNoiseOnH200Results, PlantedSlowdownFails) {
  const json run1 = load("/results/h200/archive/2026-12-01-04c54be/refit/calibration-host.json");
  json slow = load("/results/h200/archive/2026-12-01-04c54be/refit/calibration-host-run2.json");
  for (json& p : slow["points"]) {
    json& s = p["issue_time_s"];
    if (!s.is_object()) continue;
    for (const char* key : {"median", "p10", "p90", "min", "max"}) s[key] = s[key].get<double>() * 1.15;
    for (json& v : s["samples"]) v = v.get<double>() * 1.15;
  }
  const GateReport r = compare(run1, slow, issue_time_gate());
  EXPECT_FALSE(r.passed());
  // 142 of 165 points are WORSE; 18 stay SAME (sub-150 ns times whose 15% is inside the 20 ns abs_tol,
  // though p = 0.00058 there) and 5 are NOISE (the noisiest knee and corner points, p 0.05-0.84).
  EXPECT_GT(r.count(Status::kWorse), r.rows.size() * 8 / 10) << r.count(Status::kWorse) << " of " << r.rows.size();
  EXPECT_EQ(r.count(Status::kBetter), 0u);
  for (const Comparison& c : r.rows) {
    ASSERT_TRUE(c.p_value.has_value()) << c.instance;  // 5 or 7 samples a side: always testable
    if (c.status == Status::kNoise) {
      EXPECT_GE(*c.p_value, 0.05) << c.instance;
    }
    if (c.status == Status::kWorse) {
      EXPECT_LT(*c.p_value, 0.05) << c.instance;
    }
  }
}

}  // namespace
}  // namespace xs::gate
