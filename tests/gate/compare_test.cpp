// xstage gate tests: SAME/BETTER/WORSE/MISSING/NEW per direction and tolerance, point matching by
// id + spec, and configs that do not fit the baseline.
#include <gtest/gtest.h>

#include "xs/common/error.hpp"
#include "xs/gate/compare.hpp"
#include "xs/report/result_file.hpp"

namespace xs::gate {
namespace {
using nlohmann::json;

json baseline() { return report::to_json(report::read_result_file(XS_TEST_DATA_DIR "/gate/baseline.json")); }

GateConfig one_metric(const json& metric) {
  return gate_config_from_json(
      {{"schema", {{"name", "xstage.gate"}, {"version", "1.0"}}}, {"metrics", json::array({metric})}});
}

Status judge_r(const char* direction, double candidate_r, double rel_tol = 0.05, double abs_tol = 0) {
  const GateConfig c = one_metric({{"name", "model.R_Bps"}, {"direction", direction}, {"rel_tol", rel_tol},
                                   {"abs_tol", abs_tol}});
  json cand = baseline();
  cand["model"]["R_Bps"] = candidate_r;
  const GateReport r = compare(baseline(), cand, c);
  EXPECT_EQ(r.rows.size(), 1u);
  return r.rows.at(0).status;
}

TEST(Compare, DirectionsAndTolerances) {
  const double b = 7.17e11;
  EXPECT_EQ(judge_r("higher", b * 1.03), Status::kSame);
  EXPECT_EQ(judge_r("higher", b * 1.10), Status::kBetter);
  EXPECT_EQ(judge_r("higher", b * 0.90), Status::kWorse);
  EXPECT_EQ(judge_r("lower", b * 1.10), Status::kWorse);
  EXPECT_EQ(judge_r("lower", b * 0.90), Status::kBetter);
  EXPECT_EQ(judge_r("lower", b * 0.97), Status::kSame);
  EXPECT_EQ(judge_r("either", b * 1.10), Status::kWorse);
  EXPECT_EQ(judge_r("either", b * 0.90), Status::kWorse);
  EXPECT_EQ(judge_r("either", b * 1.04), Status::kSame);
  EXPECT_EQ(judge_r("either", b), Status::kSame);
  // Zero tolerance: any change counts; abs_tol widens rel_tol (the larger one applies).
  EXPECT_EQ(judge_r("higher", b + 1, 0, 0), Status::kBetter);
  EXPECT_EQ(judge_r("either", b * 1.10, 0.05, 1e11), Status::kSame);
}

TEST(Compare, AbsoluteToleranceAtZeroBaseline) {
  const GateConfig c = one_metric({{"name", "points[*].verification.wrong"}, {"direction", "lower"}, {"abs_tol", 0}});
  json cand = baseline();
  cand["points"][0]["verification"]["wrong"] = 3;
  const GateReport r = compare(baseline(), cand, c);
  ASSERT_EQ(r.rows.size(), 2u);  // the skipped baseline point has nothing to compare
  EXPECT_EQ(r.count(Status::kWorse), 1u);
  EXPECT_EQ(r.count(Status::kSame), 1u);
  EXPECT_FALSE(r.passed());
}

TEST(Compare, PointsMatchByIdAndSpecNotPosition) {
  const GateConfig c = one_metric({{"name", "points[*].period_s.median"}, {"direction", "lower"}, {"rel_tol", 0.05}});
  json cand = baseline();
  std::swap(cand["points"][0], cand["points"][1]);
  const GateReport same = compare(baseline(), cand, c);
  EXPECT_EQ(same.count(Status::kSame), 2u);
  EXPECT_TRUE(same.passed());
  EXPECT_EQ(same.rows[0].instance, "periodic K=132 B=32KiB G=0");  // short label, baseline order
  EXPECT_NE(same.rows[0].instance, same.rows[1].instance);
  // Changing an axis makes it another point: the old one is MISSING, the new one NEW.
  cand["points"][0]["spec"]["G_s"] = 3e-6;
  const GateReport moved = compare(baseline(), cand, c);
  EXPECT_EQ(moved.count(Status::kMissing), 1u);
  EXPECT_EQ(moved.count(Status::kNew), 1u);
  EXPECT_FALSE(moved.passed());
}

TEST(Compare, MissingCountsAsFailure) {
  const GateConfig c = gate_config_from_json(json::parse(R"({"schema": {"name": "xstage.gate", "version": "1.0"},
      "metrics": [{"name": "model.R_Bps", "direction": "higher", "rel_tol": 0.05},
                  {"name": "points[*].completion_s.median", "direction": "lower", "rel_tol": 0.05},
                  {"name": "points[*].issue_time_s.median", "direction": "lower", "rel_tol": 0.05}]})"));
  json cand = baseline();
  cand["model"].erase("R_Bps");
  cand["points"][1].erase("completion_s");
  cand["points"][0]["skipped"] = true;
  cand["points"][0]["skip_reason"] = "unavailable: one GPU";
  const GateReport r = compare(baseline(), cand, c);
  EXPECT_EQ(r.count(Status::kMissing), 3u);  // R absent, completion absent, point 0 skipped
  EXPECT_EQ(r.count(Status::kSame), 1u);     // point 1's issue time
  EXPECT_FALSE(r.passed());
  bool saw_skip_note = false;
  for (const Comparison& row : r.rows) saw_skip_note |= row.note.find("unavailable: one GPU") != std::string::npos;
  EXPECT_TRUE(saw_skip_note);
  cand["points"] = json::array();
  EXPECT_EQ(compare(baseline(), cand, c).count(Status::kMissing), 4u);  // + point 1's issue time
}

TEST(Compare, ElementArraysMatchByConfiguredKeys) {
  const GateConfig c = one_metric({{"name", "model.Q[*].bytes"}, {"match_by", {"K"}}, {"direction", "either"}, {"rel_tol", 0.1}});
  json cand = baseline();
  cand["model"]["Q"][0]["bytes"] = 2.0e6;
  cand["model"]["Q"].push_back({{"K", 8}, {"bytes", 1e6}, {"ci95", {0.9e6, 1.1e6}}, {"bound", "lower"}});
  const GateReport r = compare(baseline(), cand, c);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].status, Status::kWorse);
  EXPECT_EQ(r.rows[0].instance, "K=132");
  EXPECT_EQ(r.rows[1].status, Status::kNew);
}

// max_missing: a fit's row that exists in one run and not the next (a T_iss^0 row at the knee) may be absent up
// to the configured count (N/A, passes); one more and every absent row is MISSING (fails).
TEST(Compare, MaxMissingBoundsTheAbsentElements) {
  json base = baseline();
  base["model"]["tiss0"] = json::array({{{"K", 16}, {"V_bytes", 262144.0}, {"s", 2.1e-7}},
                                        {{"K", 16}, {"V_bytes", 524288.0}, {"s", 5.1e-7}},
                                        {{"K", 16}, {"V_bytes", 1048576.0}, {"s", 1.17e-6}}});
  json cand = base;
  cand["model"]["tiss0"].erase(2);
  cand["model"]["tiss0"].erase(1);
  auto config = [](int max_missing) {
    json metric = {{"name", "model.tiss0[*].s"}, {"match_by", {"K", "V_bytes"}}, {"direction", "lower"},
                   {"rel_tol", 0.1}};
    if (max_missing != -1) metric["max_missing"] = max_missing;  // -1: not set
    return one_metric(metric);
  };
  const GateReport allowed = compare(base, cand, config(2));
  EXPECT_TRUE(allowed.passed());
  EXPECT_EQ(allowed.count(Status::kNotApplicable), 2u);
  EXPECT_EQ(allowed.count(Status::kSame), 1u);
  EXPECT_NE(allowed.rows[1].note.find("2 of at most 2"), std::string::npos) << allowed.rows[1].note;
  for (int max : {-1, 0, 1}) {  // absent (default 0), 0 and 1: both absent rows fail
    const GateReport r = compare(base, cand, config(max));
    EXPECT_FALSE(r.passed()) << max;
    EXPECT_EQ(r.count(Status::kMissing), 2u) << max;
  }
  // A candidate with none of the baseline's rows fails even within the allowance (a fit that stopped emitting).
  json two = base;
  two["model"]["tiss0"].erase(2);
  json empty = two;
  empty["model"]["tiss0"] = json::array();
  const GateReport gone = compare(two, empty, config(2));
  EXPECT_FALSE(gone.passed());
  EXPECT_EQ(gone.count(Status::kMissing), 2u);
  json no_key = two;
  no_key["model"].erase("tiss0");
  EXPECT_FALSE(compare(two, no_key, config(2)).passed());
  // Not for measured points.
  EXPECT_THROW(one_metric({{"name", "points[*].issue_time_s.median"}, {"direction", "lower"}, {"rel_tol", 0.1},
                           {"max_missing", 1}}), Error);
  // Every row absent is more than 2: all three fail.
  cand["model"]["tiss0"] = json::array();
  const GateReport none = compare(base, cand, config(2));
  EXPECT_EQ(none.count(Status::kMissing), 3u);
  EXPECT_FALSE(none.passed());
  // missing_only_where: only rows of the named kind may be absent; another absent row is MISSING, and it does
  // not use up the allowance.
  json kinds = base;
  kinds["model"]["tiss0"][1]["source"] = "isolated_floor";
  kinds["model"]["tiss0"][2]["source"] = "gap_sweep";
  json cand2 = kinds;
  cand2["model"]["tiss0"].erase(2);
  cand2["model"]["tiss0"].erase(1);
  json where = {{"name", "model.tiss0[*].s"}, {"match_by", {"K", "V_bytes"}}, {"direction", "lower"},
                {"rel_tol", 0.1}, {"max_missing", 2}, {"missing_only_where", {{"source", "isolated_floor"}}}};
  const GateReport narrowed = compare(kinds, cand2, one_metric(where));
  EXPECT_FALSE(narrowed.passed());
  EXPECT_EQ(narrowed.count(Status::kMissing), 1u);
  EXPECT_EQ(narrowed.count(Status::kNotApplicable), 1u);
  json lone = where;
  lone.erase("max_missing");
  EXPECT_THROW(one_metric(lone), Error);
  // Only a [*] metric has elements; a count must be a non-negative integer.
  EXPECT_THROW(one_metric({{"name", "model.R_Bps"}, {"direction", "higher"}, {"rel_tol", 0.1}, {"max_missing", 1}}),
               Error);
  EXPECT_THROW(config(-2), Error);
  json frac = {{"name", "model.tiss0[*].s"}, {"match_by", {"K"}}, {"direction", "lower"}, {"rel_tol", 0.1},
               {"max_missing", 1.5}};
  EXPECT_THROW(one_metric(frac), Error);
}

TEST(Compare, ConfigThatDoesNotFitTheBaselineIsBadInput) {
  auto field_of = [](const json& metric, const json& base) {
    try {
      compare(base, base, one_metric(metric));
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      return e.field();
    }
    return std::string("<no error>");
  };
  EXPECT_EQ(field_of({{"name", "model.nope"}, {"direction", "lower"}, {"abs_tol", 0}}, baseline()), "metrics[0].name");
  EXPECT_EQ(field_of({{"name", "meta.host"}, {"direction", "lower"}, {"abs_tol", 0}}, baseline()), "metrics[0].name");
  EXPECT_EQ(field_of({{"name", "model[*].x"}, {"match_by", {"K"}}, {"direction", "lower"}, {"abs_tol", 0}}, baseline()),
            "metrics[0].name");
  json dup = baseline();
  dup["points"].push_back(dup["points"][0]);
  EXPECT_EQ(field_of({{"name", "points[*].period_s.median"}, {"direction", "lower"}, {"abs_tol", 0}}, dup),
            "metrics[0].name");
  // Optional: reported N/A, does not fail.
  const GateReport r = compare(baseline(), baseline(),
                               one_metric({{"name", "model.nope"}, {"direction", "lower"}, {"abs_tol", 0}, {"optional", true}}));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].status, Status::kNotApplicable);
  EXPECT_TRUE(r.passed());
}

TEST(Compare, FileWithItselfPassesTheShippedConfig) {
  const GateConfig c = read_gate_config(XS_TEST_DATA_DIR "/../../configs/gate/calibration.json");
  const std::string path = XS_TEST_DATA_DIR "/gate/baseline.json";
  const GateReport r = compare_files(path, path, c);
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(r.count(Status::kSame) + r.count(Status::kNotApplicable), r.rows.size());
}

// A calibration baseline against a file that is no calibration (model: null) is bad input, not a regression (hostile
// review of 2026-12-07 evening: exit 1, every row MISSING).
TEST(Compare, ACandidateThatIsNoCalibrationIsBadInput) {
  const GateConfig c = read_gate_config(XS_TEST_DATA_DIR "/../../configs/gate/calibration.json");
  const std::string base = XS_TEST_DATA_DIR "/gate/baseline.json";
  const std::string other = XS_TEST_DATA_DIR "/../../results/h200/megamoe/matrix/megamoe-check.json";
  try {
    compare_files(base, other, c);
    ADD_FAILURE() << "accepted a candidate with no model section";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_EQ(e.field(), "--candidate");
    EXPECT_NE(std::string(e.what()).find("not a calibration"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace xs::gate
