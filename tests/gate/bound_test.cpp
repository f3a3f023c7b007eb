// xstage gate tests: model values the fitter could not identify (bound "not_identified" or "lower") are
// gated on their bound, not their value: fit -> not identified fails, not identified in both is N/A.
#include <gtest/gtest.h>

#include "xs/gate/compare.hpp"

namespace xs::gate {
namespace {
using nlohmann::json;

json q_row(int k, double bytes, const char* bound) {
  return {{"K", k}, {"bytes", bytes}, {"bound", bound}, {"ci95", nullptr}};
}
json model(const char* r_bound, const char* q16_bound, double q16_bytes, const char* q32_bound, double q32_bytes) {
  return {{"model",
           {{"R_Bps", 5.0e10}, {"R_bound", r_bound},
            {"Q", json::array({q_row(16, q16_bytes, q16_bound), q_row(32, q32_bytes, q32_bound)})}}}};
}
GateConfig q_and_r() {
  return gate_config_from_json(
      {{"schema", {{"name", "xstage.gate"}, {"version", "1.0"}}},
       {"metrics", json::array({json{{"name", "model.R_Bps"}, {"direction", "either"}, {"rel_tol", 0.02}},
                                json{{"name", "model.Q[*].bytes"}, {"match_by", {"K"}}, {"direction", "either"},
                                     {"rel_tol", 0.05}}})}});
}
const Comparison& row_of(const GateReport& r, const std::string& metric, const std::string& instance_part) {
  for (const Comparison& c : r.rows)
    if (c.metric == metric && c.instance.find(instance_part) != std::string::npos) return c;
  throw std::runtime_error("no row " + metric + " " + instance_part);
}

TEST(GateBound, NotIdentifiedInBothIsInformationalWhateverTheValues) {
  // Q(K=16) moves 3x between runs, as an unidentified Q's diagnostic value does: not a failure.
  const GateReport r = compare(model("fit", "not_identified", 1.5e5, "fit", 4.0e5),
                               model("fit", "not_identified", 5.0e5, "fit", 4.1e5), q_and_r());
  EXPECT_TRUE(r.passed());
  const Comparison& q16 = row_of(r, "model.Q[*].bytes", "K=16");
  EXPECT_EQ(q16.status, Status::kNotApplicable);
  EXPECT_NE(q16.note.find("not identified in both"), std::string::npos) << q16.note;
  ASSERT_TRUE(q16.baseline && q16.candidate);  // the diagnostic values are still shown
  EXPECT_DOUBLE_EQ(*q16.candidate, 5.0e5);
  EXPECT_EQ(row_of(r, "model.Q[*].bytes", "K=32").status, Status::kSame);
}

TEST(GateBound, IdentifiedValuesAreStillComparedAsMeasurements) {
  const GateReport r = compare(model("fit", "fit", 4.0e5, "fit", 4.0e5),
                               model("fit", "fit", 4.0e5 * 1.2, "fit", 4.0e5), q_and_r());
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(row_of(r, "model.Q[*].bytes", "K=16").status, Status::kWorse);
  EXPECT_EQ(row_of(r, "model.Q[*].bytes", "K=32").status, Status::kSame);
}

TEST(GateBound, LosingIdentificationFailsEvenWithAnEqualValue) {
  for (const char* lost : {"not_identified", "lower"}) {
    const GateReport r = compare(model("fit", "fit", 4.0e5, "fit", 4.0e5),
                                 model("fit", "fit", 4.0e5, lost, 4.0e5), q_and_r());
    EXPECT_FALSE(r.passed()) << lost;
    const Comparison& q32 = row_of(r, "model.Q[*].bytes", "K=32");
    EXPECT_EQ(q32.status, Status::kWorse) << lost;
    EXPECT_NE(q32.note.find(std::string("fit -> ") + lost), std::string::npos) << q32.note;
  }
}

TEST(GateBound, DrainRateBoundIsFoundBesideRBps) {
  GateReport r = compare(model("fit", "fit", 4e5, "fit", 4e5), model("not_identified", "fit", 4e5, "fit", 4e5), q_and_r());
  EXPECT_EQ(row_of(r, "model.R_Bps", "").status, Status::kWorse);
  EXPECT_FALSE(r.passed());
  r = compare(model("not_identified", "fit", 4e5, "fit", 4e5), model("not_identified", "fit", 4e5, "fit", 4e5), q_and_r());
  EXPECT_EQ(row_of(r, "model.R_Bps", "").status, Status::kNotApplicable);
  EXPECT_TRUE(r.passed());
}

TEST(GateBound, NewlyIdentifiedIsBetterAndANullUnidentifiedValueIsNoError) {
  json base = model("fit", "not_identified", 0, "fit", 4e5);
  base["model"]["Q"][0]["bytes"] = nullptr;  // the fitter may leave an unidentified value out
  const GateReport r = compare(base, model("fit", "fit", 4e5, "fit", 4e5), q_and_r());
  EXPECT_TRUE(r.passed());
  const Comparison& q16 = row_of(r, "model.Q[*].bytes", "K=16");
  EXPECT_EQ(q16.status, Status::kBetter);
  EXPECT_FALSE(q16.baseline.has_value());
}

TEST(GateBound, AnElementGoneFromTheCandidateIsStillMissing) {
  json cand = model("fit", "not_identified", 1e5, "fit", 4e5);
  cand["model"]["Q"].erase(0);
  const GateReport r = compare(model("fit", "not_identified", 1e5, "fit", 4e5), cand, q_and_r());
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(row_of(r, "model.Q[*].bytes", "K=16").status, Status::kMissing);
}

}  // namespace
}  // namespace xs::gate
