// xstage gate tests: the noise-aware verdict. Beyond tolerance is WORSE only if the U test on the stored
// samples says p < alpha (where both sides have enough samples); too few samples are "not testable" and
// the tolerance alone decides; model values report whether their 95% intervals overlap.
#include <gtest/gtest.h>

#include "xs/common/error.hpp"
#include "xs/gate/compare.hpp"
#include "xs/report/result_file.hpp"

namespace xs::gate {
namespace {
using nlohmann::json;

json baseline() { return report::to_json(report::read_result_file(XS_TEST_DATA_DIR "/gate/baseline.json")); }

GateConfig config_with(const json& extra = json::object()) {
  json j = {{"schema", {{"name", "xstage.gate"}, {"version", "1.0"}}},
            {"metrics", json::array({{{"name", "points[*].issue_time_s.median"}, {"direction", "lower"}, {"rel_tol", 0.05}}})}};
  j.update(extra);
  return gate_config_from_json(j);
}

// Point 0's issue time: these samples, median = the middle one (they are given sorted, odd count).
void set_samples(json& doc, const std::vector<double>& samples) {
  json& s = doc["points"][0]["issue_time_s"];
  s["samples"] = samples;
  s["median"] = samples[samples.size() / 2];
}

const Comparison& row0(const GateReport& r) { return r.rows.at(0); }

TEST(Noise, SignificantShiftBeyondToleranceIsWorse) {
  json b = baseline(), c = baseline();
  set_samples(b, {1.00e-6, 1.01e-6, 1.02e-6, 1.03e-6, 1.04e-6});
  set_samples(c, {1.10e-6, 1.11e-6, 1.12e-6, 1.13e-6, 1.14e-6});  // +10%, no overlap
  const GateReport r = compare(b, c, config_with());
  EXPECT_EQ(row0(r).status, Status::kWorse);
  EXPECT_EQ(row0(r).evidence, Evidence::kUTest);
  ASSERT_TRUE(row0(r).p_value.has_value());
  EXPECT_NEAR(*row0(r).p_value, 2.0 / 252.0, 1e-12);
  EXPECT_EQ(row0(r).baseline_samples, 5u);
  EXPECT_FALSE(r.passed());
}

TEST(Noise, ShiftOfTheMedianWithinTheNoiseIsNoise) {
  json b = baseline(), c = baseline();
  set_samples(b, {0.90e-6, 0.95e-6, 1.00e-6, 1.30e-6, 1.40e-6});
  set_samples(c, {0.92e-6, 0.97e-6, 1.10e-6, 1.25e-6, 1.35e-6});  // median +10%, samples interleave
  const GateReport r = compare(b, c, config_with());
  EXPECT_EQ(row0(r).status, Status::kNoise);
  EXPECT_EQ(row0(r).evidence, Evidence::kUTest);
  EXPECT_GE(*row0(r).p_value, 0.05);
  EXPECT_TRUE(r.passed());  // NOISE does not fail the gate
  // The same samples with a looser alpha still are not significant; a stricter min_samples makes the
  // test impossible, and the tolerance alone calls it WORSE.
  EXPECT_EQ(row0(compare(b, c, config_with({{"min_samples", 6}}))).status, Status::kWorse);
  EXPECT_EQ(row0(compare(b, c, config_with({{"min_samples", 6}}))).evidence, Evidence::kNotTestable);
}

TEST(Noise, TooFewSamplesAreNotTestable) {
  // The fixture has 3 samples per side: the smallest possible p is 0.1, never < 0.05.
  json c = baseline();
  c["points"][0]["issue_time_s"]["median"] = c["points"][0]["issue_time_s"]["median"].get<double>() * 1.2;
  const GateReport r = compare(baseline(), c, config_with());
  EXPECT_EQ(row0(r).evidence, Evidence::kNotTestable);
  EXPECT_FALSE(row0(r).p_value.has_value());
  EXPECT_EQ(row0(r).status, Status::kWorse);  // tolerance alone decides
  // alpha = 0.2 with min_samples 3 makes 3 vs 3 testable (smallest p 0.1 < 0.2).
  const GateReport t = compare(baseline(), c, config_with({{"alpha", 0.2}, {"min_samples", 3}}));
  EXPECT_EQ(row0(t).evidence, Evidence::kUTest);
}

TEST(Noise, WithinToleranceStaysSameWhateverP) {
  json b = baseline(), c = baseline();
  set_samples(b, {1.00e-6, 1.001e-6, 1.002e-6, 1.003e-6, 1.004e-6});
  set_samples(c, {1.01e-6, 1.011e-6, 1.012e-6, 1.013e-6, 1.014e-6});  // +1%: significant but small
  const GateReport r = compare(b, c, config_with());
  EXPECT_EQ(row0(r).status, Status::kSame);
  EXPECT_LT(*row0(r).p_value, 0.05);
}

TEST(Noise, ModelValuesReportIntervalOverlap) {
  const GateConfig config = gate_config_from_json(json::parse(R"({"schema": {"name": "xstage.gate", "version": "1.0"},
      "metrics": [{"name": "model.R_Bps", "direction": "either", "rel_tol": 0.03},
                  {"name": "model.Q[*].bytes", "match_by": ["K"], "direction": "either", "rel_tol": 0.1}]})"));
  json c = baseline();
  c["model"]["R_ci95"] = {7.30e11, 7.40e11};  // disjoint from [7.09e11, 7.24e11]
  const GateReport r = compare(baseline(), c, config);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].evidence, Evidence::kCi95);
  EXPECT_FALSE(r.rows[0].ci95_overlap);
  EXPECT_EQ(r.rows[0].status, Status::kSame);  // information only: the value did not move
  EXPECT_EQ(r.rows[1].evidence, Evidence::kCi95);
  EXPECT_TRUE(r.rows[1].ci95_overlap);
}

TEST(Noise, ConfigKeysAreChecked) {
  EXPECT_EQ(config_with().alpha, 0.05);
  EXPECT_EQ(config_with().min_samples, 4u);
  EXPECT_EQ(config_with({{"alpha", 0.01}}).alpha, 0.01);
  for (const json& bad : {json{{"alpha", 0}}, json{{"alpha", 1.5}}, json{{"alpha", "0.05"}}, json{{"min_samples", 1}},
                          json{{"min_samples", 2.5}}}) {
    try {
      config_with(bad);
      ADD_FAILURE() << "accepted " << bad.dump();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      EXPECT_EQ(e.field(), bad.begin().key());
    }
  }
}

}  // namespace
}  // namespace xs::gate
