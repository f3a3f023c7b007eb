// Mutation tests on committed files (issue 27 item 6), under rule fa_frozen_aligned_refutable: the frozen FA
// prediction judged against committed host measurements must be able to fail. Each mutation (the measured
// exposure x3 as if the Q-loops had grown, R x0.5, T_iss^0 x10, Q shifted down) must turn an agreement into a
// disagreement; T_iss^0 x10 cannot on these data, and its test says why and asserts what does hold. The rule's
// three outcomes are checked row by row on the committed H200 files, and the constant predictors run through
// the same scorer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "xs/attention/point/fa_app_point.hpp"
#include "xs/attention/io/fa_result_reader.hpp"
#include "xs/attention/judge/fa_judgement.hpp"
#include "xs/attention/judge/fa_sensitivity.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/result_file.hpp"

namespace xs::attention::judge {
namespace {

using nlohmann::json;
const std::string kRepo = std::string(XS_TEST_DATA_DIR) + "/../../";

// The H100 run of device call 7 (09:32Z): a calibration with FA-A2A's own burst shape, then fa_a2a host at
// M = 3K..64K. Under the refutable rule: M = 3K agrees; 4K and 5K disagree with decided intervals; 6K, 8K and
// 16K disagree with intervals too wide to agree (the measurement lies above them); 32K and 64K are not decided.
struct DataSet {
  std::vector<std::string> results, calibrations;
};
const DataSet kH100 = {{"results/h100/predictions-3a97dd2/fa-a2a-host.json"},
                       {"results/h100/predictions-3a97dd2/calibration-host-fa.json"}};
// The canonical H200 files of 2026-12-02 and their four calibrations (prediction-score.json): no interval is
// decided there (T_iss^0 at FA's V and Q(132) not identified), so every outcome is "disagrees" or "not decided".
const DataSet kH200 = {{"results/h200/fa_a2a/3238301-bars/results/fa-a2a-host.json",
                        "results/h200/fa_a2a/b531dd7-bars/results/fa-a2a-host.json",
                        "results/h200/fa_a2a/b531dd7-bars/results/fa-a2a-host-kv2.json",
                        "results/h200/fa_a2a/d2f1042-bars-grid/results/fa-a2a-host.json"},
                       {"results/h200/fa_a2a/3238301-bars/results/calibration-host-small-k.json",
                        "results/h200/fa_a2a/b531dd7-bars/results/calibration-host-small-k.json",
                        "results/h200/fa_a2a/d2f1042-bars-grid/results/calibration-host-small-k.json",
                        "results/h200/calibration/calibration-host.json"}};

struct Point {
  FaA2aPointSpec spec;
  FaA2aPointResult result;
};
std::vector<Point> points_of(const DataSet& set) {
  std::vector<Point> out;
  for (const auto& f : set.results) {
    const json doc = report::read_json_file(kRepo + f);  // bound: a temporary's member would dangle
    for (const json& p : doc.at("points"))
      if (p.value("suite", "") == kFaSuiteId && p.value("status", "") == "ok")
        out.push_back({fa_point_spec_from_json(p), fa_point_result_from_json(p)});
  }
  return out;
}
const std::vector<Point>& h100_points() {
  static const std::vector<Point> points = points_of(kH100);
  return points;
}
const std::vector<Point>& h200_points() {
  static const std::vector<Point> points = points_of(kH200);
  return points;
}
json calibration_json(const std::string& f) { return json::parse(report::read_text_file(kRepo + f)); }
FaCalibration calibration_of(const json& doc, const std::string& name) { return load_fa_calibration(doc.dump(), name); }

// Every (calibration, point) judged, with `mutate_cal` applied to each calibration file and `mutate_point` to each
// measured point.
std::vector<FaJudgement> judgements(const DataSet& set, const std::vector<Point>& points,
                                    const std::function<void(json&)>& mutate_cal,
                                    const std::function<void(FaA2aPointResult&)>& mutate_point) {
  std::vector<FaJudgement> out;
  for (const auto& f : set.calibrations) {
    json doc = calibration_json(f);
    mutate_cal(doc);
    const FaCalibration cal = calibration_of(doc, f);
    for (Point p : points) {
      mutate_point(p.result);
      out.push_back(judge_point(p.spec, p.result, cal));
    }
  }
  return out;
}
std::vector<std::string> outcomes(const std::function<void(json&)>& mutate_cal,
                                  const std::function<void(FaA2aPointResult&)>& mutate_point) {
  std::vector<std::string> out;
  for (const FaJudgement& j : judgements(kH100, h100_points(), mutate_cal, mutate_point)) out.push_back(j.model.result);
  return out;
}
void no_cal(json&) {}
void no_point(FaA2aPointResult&) {}

// Agreements of `before` that `after` turns into disagreements, and the count of agreements each way.
struct Flips {
  int agree_before = 0, agree_after = 0, agree_to_disagree = 0;
};
Flips flips(const std::vector<std::string>& before, const std::vector<std::string>& after) {
  Flips f;
  for (std::size_t i = 0; i < before.size(); ++i) {
    f.agree_before += before[i] == "agrees";
    f.agree_after += after[i] == "agrees";
    f.agree_to_disagree += before[i] == "agrees" && after[i] == "disagrees";
  }
  return f;
}

void scale(Summary& t, double k) {
  t.median *= k; t.p10 *= k; t.p90 *= k;
  for (double& x : t.samples) x *= k;
}
void scale_number(json& j, const char* key, double k) {
  if (j.contains(key) && j[key].is_number()) j[key] = j[key].get<double>() * k;
}
void scale_pair(json& j, const char* key, double k) {
  if (j.contains(key) && j[key].is_array())
    for (auto& x : j[key]) x = x.get<double>() * k;
}
// T_iss^0 x k in a calibration: the fitted rows and the measured bursts that bound it.
std::function<void(json&)> issue_time_times(double k) {
  return [k](json& c) {
    for (json& row : c["model"]["tiss0"]) {
      scale_number(row, "s", k);
      scale_pair(row, "ci95", k);
    }
    for (json& p : c["points"])
      if (p.contains("issue_time_s"))
        for (const char* key : {"median", "min", "max", "p10", "p90"}) scale_number(p["issue_time_s"], key, k);
  };
}

TEST(FaCommittedMutation, TheCommittedFilesHaveAgreementsToLose) {
  const auto before = outcomes(no_cal, no_point);
  const Flips f = flips(before, outcomes(no_cal, no_point));
  EXPECT_GT(f.agree_before, 0);
  EXPECT_EQ(f.agree_before, f.agree_after);  // judging is deterministic
  EXPECT_EQ(h100_points().size(), 8u);
  // What the current rule says on these data (see kH100), with Q's bracket of 2026-12-08 (past the floor, from the
  // lowest V'' - R_hi T_max of the measured isolated bursts around and below the burst's volume to the nearest
  // burst's V'' - R_lo T_p10, PlatformModel::capacity_bracket): 1 agrees, 2 disagree, 5 not decided (the upper end
  // lifts the intervals' low ends; at 32K and 64K above measurements that fall with M). With the lower end alone
  // (2026-12-07 late): 1 / 0 / 7; with the floor-only bracket before it: 1 / 5 / 2; with the next burst's
  // V'' - R_hi T_p90 alone (an intermediate rule an adversarial review refuted): 1 / 4 / 3.
  int agrees = 0, disagrees = 0, not_decided = 0, other = 0;
  for (const auto& o : before) {
    agrees += o == "agrees";
    disagrees += o == "disagrees";
    not_decided += o == "not decided";
    other += o != "agrees" && o != "disagrees" && o != "not decided";
  }
  EXPECT_EQ(agrees, 1);
  EXPECT_EQ(disagrees, 2);
  EXPECT_EQ(not_decided, 5);
  EXPECT_EQ(other, 0);
}

TEST(FaCommittedMutation, ExposureTimesThreeInTheQLoopsDisagrees) {
  const auto before = outcomes(no_cal, no_point);
  const Flips f = flips(before, outcomes(no_cal, [](FaA2aPointResult& r) {
    scale(r.e_res_sender_paired, 3);  // the judged boundary's rounds
    scale(r.e_res_paired, 3);
    scale(r.critical_qloop_paired, 3);  // a diagnostic: must not matter
  }));
  EXPECT_GT(f.agree_to_disagree, 0);
  EXPECT_EQ(f.agree_after, 0);
}

// Half the drain rate turns the agreement (3K) into a disagreement and most rows with it; with the upper end of
// Q's bracket it also meets the measurement at 16K, so the count of agreements alone does not fall (1 and 1): an
// agreement count cannot tell this wrong calibration from the measured one, which is why the interval score ranks.
TEST(FaCommittedMutation, HalfTheDrainRateDisagrees) {
  const auto before = outcomes(no_cal, no_point);
  const auto after = outcomes([](json& c) {
    scale_number(c["model"], "R_Bps", 0.5);
    scale_pair(c["model"], "R_ci95", 0.5);
  }, no_point);
  const Flips f = flips(before, after);
  EXPECT_GT(f.agree_to_disagree, 0);
  const auto disagreements = [](const std::vector<std::string>& v) {
    return static_cast<int>(std::count(v.begin(), v.end(), "disagrees"));
  };
  EXPECT_GE(disagreements(after), disagreements(before) + 4);
}

// T_iss^0 x10 cannot turn the agreement (M = 3K) into a disagreement, and this is why. Per wave of the aligned
// case E_res = T + max([V/R - T - G - sigma/2]+, [V - R T - Q]+ / R) = max(T, V/R - G - sigma/2, (V - Q)/R)
// (eqs. 6, 7, 18, 19): T_iss^0 enters only where it exceeds both the drain stall and the capacity excess. At the
// agreement every corner of the calibration's box is drain- or capacity-bound by a wide margin (the interval's
// low end per wave, ~42 us, against T_iss^0 <= 0.71 us), so x10 leaves the interval where it was, to the
// picosecond. What the test asserts instead: that margin holds (x10 T_iss^0's top below the interval's low end
// per wave, computed from the files); x10 adds no agreement and leaves the 3K agreement and its interval
// unchanged; the mutation did reach the prediction (issue-bound large-M intervals moved); and T_iss^0 raised until
// its own low end alone exceeds twice the agreed interval's top (a factor computed from the prediction, not tuned)
// turns the agreement into a disagreement (over).
TEST(FaCommittedMutation, TenTimesTheIssueTimeCannotMoveADrainBoundAgreement) {
  const auto base = judgements(kH100, h100_points(), no_cal, no_point);
  const auto times10 = judgements(kH100, h100_points(), issue_time_times(10), no_point);
  std::vector<std::string> before, after;
  for (const auto& j : base) before.push_back(j.model.result);
  for (const auto& j : times10) after.push_back(j.model.result);
  const Flips f = flips(before, after);
  EXPECT_LE(f.agree_after, f.agree_before);
  std::size_t agreed = base.size();
  bool moved = false;
  for (std::size_t i = 0; i < base.size(); ++i) {
    if (before[i] == "agrees") agreed = i;
    moved = moved || times10[i].prediction.e_res.hi != base[i].prediction.e_res.hi ||
            times10[i].prediction.e_res.lo != base[i].prediction.e_res.lo;
  }
  // Where x10 moved no prediction, every row must be drain- or capacity-bound by the same margin as the agreement
  // (the mutation did reach the inputs: checked on the agreement's T_iss^0 below).
  if (!moved)
    for (const FaJudgement& j : base)
      if (j.inputs.tiss0.range.bounded() && std::isfinite(j.prediction.e_res.lo) && j.prediction.num_bursts > 0) {
        EXPECT_LT(10 * j.inputs.tiss0.range.hi, j.prediction.e_res.lo / j.prediction.num_bursts)
            << "T_iss^0 x10 moved no prediction, yet this row is not drain- or capacity-bound by that margin";
      }
  ASSERT_LT(agreed, base.size());
  EXPECT_GT(times10[agreed].inputs.tiss0.range.hi, 5 * base[agreed].inputs.tiss0.range.hi) << "x10 did not reach T_iss^0";
  const FaFrozenPrediction& p = base[agreed].prediction;
  const Interval tiss0 = base[agreed].inputs.tiss0.range;
  ASSERT_TRUE(tiss0.bounded() && tiss0.lo > 0);
  EXPECT_LT(10 * tiss0.hi, p.e_res.lo / p.num_bursts) << "the agreement is not drain-bound: the reason above fails";
  EXPECT_EQ(after[agreed], "agrees");
  EXPECT_NEAR(times10[agreed].prediction.e_res.lo, p.e_res.lo, 1e-12);
  EXPECT_NEAR(times10[agreed].prediction.e_res.hi, p.e_res.hi, 1e-12);
  // Past the drain stall the issue term decides: N_t k T_iss^0.lo > 2 x the interval's top.
  const double k = 2 * p.e_res.hi / (p.num_bursts * tiss0.lo);
  EXPECT_GT(k, 10) << "x10 should have reached the issue-bound regime";
  const auto beyond = judgements(kH100, h100_points(), issue_time_times(k), no_point);
  EXPECT_GE(beyond[agreed].prediction.e_res.lo * (1 + 1e-9), 2 * p.e_res.hi);  // = at the lo corner
  EXPECT_EQ(beyond[agreed].model.result, "disagrees");
  EXPECT_EQ(beyond[agreed].model.direction, "over");
}

// A shifted Q. Since drained bursts no longer bound an unidentified Q (2026-12-07 evening: under per-point offsets
// they excluded the planted Q), the one committed agreement left on these files does not rest on Q, so no shift of Q
// can lose it: the test instead shows that the verdicts read Q. Every Q number x4 (rows, intervals, the floors'
// evidence) gains agreements a correct calibration does not have, which only a verdict that depends on Q can do;
// x0.25 moves the predicted intervals.
TEST(FaCommittedMutation, AShiftedCapacityMovesTheVerdicts) {
  const auto both = [](const std::function<void(json&)>& cal) {
    std::vector<FaJudgement> out;
    for (const DataSet* set : {&kH200, &kH100})
      for (FaJudgement& j : judgements(*set, set == &kH200 ? h200_points() : h100_points(), cal, no_point))
        out.push_back(std::move(j));
    return out;
  };
  const auto shift = [](double f) {
    return [f](json& c) {
      for (json& row : c["model"]["Q"]) {
        scale_number(row, "bytes", f);
        scale_pair(row, "ci95", f);
      }
      if (c["model"].contains("fit") && c["model"]["fit"].contains("Q"))
        for (json& e : c["model"]["fit"]["Q"]) {
          scale_number(e, "floor_lower_bound_bytes", f);
          scale_number(e, "drain_start_V_bytes", f);
        }
    };
  };
  const std::vector<FaJudgement> base = both(no_cal), up = both(shift(4.0)), down = both(shift(0.25));
  ASSERT_EQ(base.size(), up.size());
  int agree_base = 0, agree_up = 0, moved_down = 0;
  for (std::size_t i = 0; i < base.size(); ++i) {
    agree_base += base[i].model.result == "agrees";
    agree_up += up[i].model.result == "agrees";
    moved_down += down[i].prediction.e_res.lo != base[i].prediction.e_res.lo ||
                  down[i].prediction.e_res.hi != base[i].prediction.e_res.hi;
  }
  EXPECT_GT(agree_up, agree_base) << "Q x4 changed no verdict: the verdicts do not read Q";
  EXPECT_GT(moved_down, 0) << "Q x0.25 moved no prediction";
}

// The rule, row by row on every committed H200 and H100 judgement: disagrees exactly where the predicted
// interval and the measured median's interval are disjoint (at any width); where they meet, measurement not
// decisive where the measured interval is wider than the tolerance (v4), else agrees only where the prediction
// is decided, not decided where it is not.
TEST(FaCommittedMutation, TheRefutableRuleRowByRow) {
  int wide_refuted = 0, below_zero_rows = 0;
  for (const DataSet* set : {&kH200, &kH100})
    for (const FaJudgement& j : judgements(*set, set == &kH200 ? h200_points() : h100_points(), no_cal, no_point)) {
      ASSERT_TRUE(j.measured.measured);
      const Interval& e = j.prediction.e_res;
      // Rule v5: the measured interval as one of E_res >= 0, raised to the tolerance where it reaches below 0.
      const double m_lo = std::max(j.measured.median_ci95.lo, 0.0);
      double m_hi = std::max(j.measured.median_ci95.hi, 0.0);
      // Rule v4's tolerance, max(20% |median|, 1% T_FA): it raises a below-zero interval (v5) and, since v6,
      // only labels a wide measurement.
      const double tol = std::max(0.2 * std::fabs(j.measured.median_s), 0.01 * j.inputs.compute_only.t_fa_s);
      const bool decisive = 0.5 * (j.measured.median_ci95.hi - j.measured.median_ci95.lo) <= tol;
      EXPECT_EQ(j.model.on_a_wide_measurement, !decisive);
      if (j.measured.median_ci95.lo < 0) m_hi = std::max(m_hi, tol);
      const bool disjoint = e.hi < m_lo || e.lo > m_hi;
      const bool below_zero = j.measured.median_ci95.hi < 0;
      below_zero_rows += below_zero;
      const std::string expected = disjoint ? "disagrees" : (j.prediction.decided ? "agrees" : "not decided");
      EXPECT_EQ(j.model.result, expected) << j.model.reason;
      wide_refuted += disjoint && !j.prediction.decided;
    }
  // The committed data have such rows (H200 48K-64K: the fused kernel 52-681 us faster than FA-only).
  EXPECT_GT(below_zero_rows, 0);
  // The defect v3 fixes: wide predictions the measurement lies outside of (H200 3238301 M = 8K: at most 92.8 us
  // predicted, 210.8 us measured) were "not decided" under v2.
  EXPECT_GT(wide_refuted, 0);
}

// On the H200 files no prediction is decided, so there is no agreement to lose; a wide prediction can still be
// refuted: the exposure x3 turns rows that were not decided into disagreements, and every miss below the
// measurement stays one.
TEST(FaCommittedMutation, ExposureTimesThreeRefutesWidePredictionsOnTheH200Files) {
  const auto before = judgements(kH200, h200_points(), no_cal, no_point);
  const auto after = judgements(kH200, h200_points(), no_cal, [](FaA2aPointResult& r) {
    scale(r.e_res_sender_paired, 3);
    scale(r.e_res_paired, 3);
  });
  ASSERT_EQ(before.size(), 80u);
  int not_decided_to_disagree = 0, disagree_to_other = 0, agrees = 0;  // disagree_to_other: "under" lost
  for (std::size_t i = 0; i < before.size(); ++i) {
    agrees += before[i].model.result == "agrees";
    not_decided_to_disagree += before[i].model.result == "not decided" && after[i].model.result == "disagrees";
    // A miss below the measurement stays one (x3 moves a positive interval up). A miss above it need not: x3
    // also widens a measured interval that straddles zero (e.g. -637.9 .. 4.1 us against a predicted 5.2 us ..).
    const bool lost = before[i].model.direction == "under" && after[i].model.direction != "under";
    disagree_to_other += lost;
    if (lost) ADD_FAILURE() << before[i].model.reason << "\n -> " << after[i].model.reason;
  }
  EXPECT_EQ(agrees, 0);
  EXPECT_GT(not_decided_to_disagree, 0);
  EXPECT_EQ(disagree_to_other, 0);
}

TEST(FaCommittedMutation, TheConstantPredictorsThroughTheSameScorer) {
  int agree = 0, by_hand = 0;
  for (const FaJudgement& j : judgements(kH100, h100_points(), no_cal, no_point)) {
    // zero agrees exactly where the measured median's interval reaches down to 0 (rule v5 maps it to E_res >= 0,
    // so a wholly negative one holds 0 too; v6 has no precision test: counted here by hand from the intervals).
    agree += j.zero.result == "agrees";
    by_hand += j.measured.measured && j.measured.median_ci95.lo <= 0;
    EXPECT_EQ(j.zero.result, score({0, 0}, 0, true, "", j.measured).result);
    // unhidden (remote bytes / R over R's interval) is the same function with its own interval.
    const Outcome u = score(j.prediction.unhidden_range, j.prediction.unhidden_s, j.prediction.unhidden_range.bounded(),
                            "", j.measured);
    EXPECT_EQ(j.unhidden.result, u.result);
    EXPECT_EQ(j.unhidden.direction, u.direction);
  }
  EXPECT_EQ(agree, by_hand);
}

}  // namespace
}  // namespace xs::attention::judge

namespace xs::attention::judge {
namespace {

// fa-score's sensitivity block over a committed data set's points and calibrations.
json sensitivity_of(const DataSet& set) {
  std::vector<FaSensitivityPoint> points;
  for (const auto& p : points_of(set)) points.push_back({p.spec, p.result});
  std::vector<std::pair<std::string, json>> cals;
  for (const auto& f : set.calibrations) cals.emplace_back(f, calibration_json(f));
  return fa_score_sensitivity(points, cals);
}

// The sensitivity block's row of one mutation (nullptr where the block has none of that name).
const json* mutation_row(const json& sensitivity, const std::string& name) {
  for (const json& m : sensitivity.at("mutations"))
    if (m.at("mutation") == name) return &m;
  return nullptr;
}

// A wrong Q gained agreements on the committed H200 files under rule v6 with the floor-only bracket (an adversarial
// review of 2026-12-07: Q x4 gave 16, 10 on wide measurements, against the calibrations' 0); with the bracket of
// 2026-12-07 late it gains none (18 disagree, 62 not decided of 80). Q x4 scales the model's and the fitter's Q rows,
// not the isolated bursts whose V - R T now sets the bracket's lower end past the floor, so it reaches less than
// it did. What stays asserted: the block carries the row, every row judged.
TEST(FaCommittedMutation, TheSensitivityBlockCarriesAWrongCapacity) {
  const json s = sensitivity_of(kH200);
  const json* q4 = mutation_row(s, "Q x4");
  ASSERT_NE(q4, nullptr) << s.dump();
  ASSERT_FALSE(q4->contains("error")) << q4->dump();
  const json& m = q4->at("model");
  EXPECT_EQ(m.at("agrees").get<int>() + m.at("disagrees").get<int>() + m.at("not_decided").get<int>() +
                m.at("not_measured").get<int>(),
            m.at("interval_score_rows").get<int>())
      << q4->dump();
}

// A drain rate 20% low ranked better than the measured calibration on the H100 set with the floor-only bracket (the
// model was short there, and a lower R widens and raises its intervals); with the bracket of 2026-12-07 late it ranks
// worse (0.97 ms against 0.88 ms). The block must carry the row with its score either way, for the README to name
// a mutation that ranks better (an adversarial review of 2026-12-07 found it left out).
TEST(FaCommittedMutation, TheSensitivityBlockScoresALowerDrainRate) {
  const json s = sensitivity_of(kH100);
  const json* r08 = mutation_row(s, "R x0.8");
  ASSERT_NE(r08, nullptr) << s.dump();
  ASSERT_FALSE(r08->contains("error")) << r08->dump();
  Tally base;
  for (const FaJudgement& j : judgements(kH100, h100_points(), no_cal, no_point)) base.add(j.model);
  const json b = base.to_json();
  ASSERT_TRUE(b.at("interval_score_median_s").is_number()) << b.dump();
  ASSERT_TRUE(r08->at("model").at("interval_score_median_s").is_number()) << r08->dump();
  EXPECT_EQ(r08->at("ranks_better_than_the_calibration_as_measured").get<bool>(),
            r08->at("model").at("interval_score_median_s").get<double>() < b.at("interval_score_median_s").get<double>())
      << r08->dump();
}

// fa-score's sensitivity block (fa_sensitivity.hpp) applies each mutation: on the H100 file R x0.5 loses its
// agreement (the test above), so the block must say so; an unmutated run would report no change.
TEST(FaCommittedMutation, TheScoreFilesSensitivityBlockSeesAWrongDrainRate) {
  const json s = sensitivity_of(kH100);
  ASSERT_EQ(s.at("mutations").size(), fa_mutations().size());
  const json& half = s.at("mutations").at(0);
  ASSERT_EQ(half.at("mutation"), "R x0.5");
  ASSERT_FALSE(half.contains("error")) << half.dump();
  EXPECT_GT(half.at("agreements_turned_disagreements").get<int>(), 0) << half.dump();
  EXPECT_GE(half.at("agreements_lost").get<int>(), half.at("agreements_turned_disagreements").get<int>());
  // The mutated tally keeps the width of each disagreement (a review found it counted every one as wide).
  EXPECT_LE(half.at("model").at("disagrees_with_a_wide_interval").get<int>(),
            half.at("model").at("disagrees").get<int>());
  // T_iss^0 x10 leaves the H100 outcomes as they are (TenTimesTheIssueTime... above): its tally, wide
  // disagreements included, must equal the unmutated one.
  Tally base;
  for (const FaJudgement& j : judgements(kH100, h100_points(), no_cal, no_point)) base.add(j.model);
  const json& tiss = s.at("mutations").at(2);
  ASSERT_EQ(tiss.at("mutation"), "T_iss^0 x10");
  // (the counts; the interval scores move with the intervals, which x10 does change)
  for (const char* k : {"agrees", "disagrees", "not_decided", "not_measured", "agrees_on_a_wide_measurement",
                        "disagrees_with_a_wide_interval"})
    EXPECT_EQ(tiss.at("model").at(k), base.to_json().at(k)) << k << ": " << tiss.dump();
  int total = 0;
  for (const char* k : {"agrees", "disagrees", "not_decided", "not_measured"})
    total += half.at("model").at(k).get<int>();
  EXPECT_EQ(total, static_cast<int>(points_of(kH100).size() * kH100.calibrations.size()));
}

}  // namespace
}  // namespace xs::attention::judge
