// xstage-gate on the committed H200 megamoe run (results/h200/megamoe): the file against itself passes,
// a planted 15% slowdown of one point's interleaved time fails on that point only, a wrong Combine element
// fails, and a lost speedup fails. Plants are relative to the file's own values.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "xs/gate/compare.hpp"
#include "xs/report/result_file.hpp"

namespace xs {
namespace {

const std::string kRoot = std::string(XS_TEST_DATA_DIR) + "/../..";

const nlohmann::json& baseline() {
  static const nlohmann::json j = report::read_json_file(kRoot + "/results/h200/megamoe/megamoe-dsv4_flash-bn128.json");
  return j;
}
gate::GateConfig config() { return gate::read_gate_config(kRoot + "/configs/gate/megamoe.json"); }

std::set<std::string> failing_metrics(const gate::GateReport& report) {
  std::set<std::string> out;
  for (const auto& row : report.rows)
    if (gate::is_failure(row.status)) out.insert(row.metric);
  return out;
}

TEST(GateOnMegaMoe, FileAgainstItselfPasses) {
  const gate::GateReport r = gate::compare(baseline(), baseline(), config());
  EXPECT_TRUE(r.passed()) << ::testing::PrintToString(failing_metrics(r));
  EXPECT_EQ(r.count(gate::Status::kMissing), 0u);
  EXPECT_GE(r.count(gate::Status::kSame), 8u * 7u);  // 8 points x 7 metrics
}

TEST(GateOnMegaMoe, PlantedSlowdownOfOnePointFails) {
  nlohmann::json cand = baseline();
  auto& v = cand["points"][1]["variants"]["interleaved"];
  v["median"] = 1.15 * v["median"].get<double>();
  v["p10"] = 1.15 * v["p10"].get<double>();
  v["p90"] = 1.15 * v["p90"].get<double>();
  for (auto& x : v["samples"]) x = 1.15 * x.get<double>();
  const gate::GateReport r = gate::compare(baseline(), cand, config());
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(failing_metrics(r), (std::set<std::string>{"points[*].variants.interleaved.median"}));
  std::size_t failures = 0;
  for (const auto& row : r.rows) failures += gate::is_failure(row.status) ? 1 : 0;
  EXPECT_EQ(failures, 1u) << "only the planted point";
}

TEST(GateOnMegaMoe, WrongElementsAndLostSpeedupFail) {
  nlohmann::json cand = baseline();
  cand["points"][0]["verification"]["values"]["variants"]["interleaved"]["wrong_elements"] = 3;
  EXPECT_EQ(failing_metrics(gate::compare(baseline(), cand, config())),
            (std::set<std::string>{"points[*].verification.values.variants.interleaved.wrong_elements"}));
  cand = baseline();
  auto& s = cand["points"][2]["extra"]["speedup_interleaved_vs_wave"];
  s["median"] = 0.8 * s["median"].get<double>();
  EXPECT_EQ(failing_metrics(gate::compare(baseline(), cand, config())),
            (std::set<std::string>{"points[*].extra.speedup_interleaved_vs_wave.median"}));
}

}  // namespace
}  // namespace xs
