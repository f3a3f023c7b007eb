// xstage attention judge layer: one fa_a2a point judged (issue 27): the frozen prediction, the measured
// residual with its interval, the outcome of the model and of the trivial predictors through one scorer, and,
// kept apart, the diagnostics: measured decompositions of the judged launches, each labelled as measured and
// saying what the model missed. Diagnostics never change an outcome. Plain C++.
#pragma once
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "xs/attention/point/fa_point.hpp"
#include "xs/attention/model/fa_calibration.hpp"
#include "xs/attention/model/fa_frozen_prediction.hpp"
#include "xs/attention/judge/fa_score.hpp"

namespace xs::attention::judge {

// The model's terms and frozen predictions (attention/model/) are what the judge scores.
using namespace xs::attention::model;

// The rules, in the order they were written, and when: a rule scored on data measured before it was written is
// in-sample for those data. Every committed FA file is re-judged with the last one (kFaRule); the earlier ones
// are kept so that score files can say which data each rule saw before it was written.
struct FaRule {
  const char* id;
  const char* written_utc;  // ISO 8601 UTC: the commit that wrote the rule
  const char* what;
};
inline constexpr FaRule kFaRules[] = {
    {"fa_frozen_aligned_v1", "2026-12-05T08:28:48Z",
     "frozen aligned-case E_res interval; decided wherever it is narrower than the unhidden cost; a decided interval "
     "agrees where it meets the measured median's 95% interval and disagrees where not; an undecided one is not "
     "decided. Rejected: R x0.5 and T_iss^0 x10 raised its agreements (agreements from width, not the model)"},
    {"fa_frozen_aligned_v2", "2026-12-05T09:25:00Z",
     "as v1, but an interval decides only where it pins E_res within a factor of two (hi - lo <= lo) or to hidden "
     "within 1% of T_FA; an undecided interval is not decided even where the measurement lies outside it. "
     "Superseded: 'at most 92.8 us' met by 210.8 us was 'not decided' instead of refuted"},
    {"fa_frozen_aligned_refutable", "2026-12-05T12:36:32Z",
     "as v2's sharpness, but disjoint intervals refute at any width: disagrees wherever the predicted interval and "
     "the measured median's 95% interval are disjoint; agrees only where the interval is decided (v2's sharpness) "
     "and meets it; not decided only where it is not decided and meets it"},
    {"fa_frozen_decisive_measurement", "2026-12-05T21:50:00Z",
     "as fa_frozen_aligned_refutable, and for every predictor alike (model, zero, unhidden): where the measured "
     "median's 95% interval has a half-width above max(20% of |median|, 1% of T_FA) (issue 28's tolerance), "
     "intervals that meet are 'measurement not decisive', not 'agrees' or 'not decided'; disjoint ones still "
     "disagree. Written after a review showed Q x4 gaining 14 H200 agreements and E_res = 0 all 20 of its own "
     "from measurements too wide to refute them: in-sample for every file committed before it"},
    {"fa_frozen_interval_score", "2026-12-06T03:07:00Z",
     "as fa_frozen_decisive_measurement, and, for every predictor alike: the measured interval is judged as an "
     "interval of E_res >= 0 ([max(lo, 0), max(hi, 0)], its upper end raised to at least the tolerance where lo < 0: "
     "below zero the launches' own variation shows, and nothing under the tolerance is resolved), so a wholly "
     "negative measurement still refutes an exposure above its tolerance; every measured row gets the interval "
     "score IS = (hi - lo) + 40 (lo - y)+ + 40 (y - hi)+ at y = max(measured median, 0) (a proper scoring rule for "
     "a central 95% interval; inf where a predictor gives no interval), and predictors are ranked by its median "
     "over every measured row, not by agreements. Written after a review showed a constant interval [110, 220] us "
     "that ignores M collecting more agreements than the model, and negative measurements at 48K-64K counted as "
     "refutations of E_res = 0: in-sample for every file committed before it"},
    {"fa_frozen_three_outcomes", "2026-12-07T01:10:00Z",
     "as fa_frozen_interval_score, without v4's fourth outcome: an outcome is agrees, disagrees or not decided. "
     "Intervals that meet agree where the prediction is decided and are not decided where it is not, whatever the "
     "measured width; a measured interval wider than the tolerance (half-width above max(20% of |median|, 1% of "
     "T_FA)) is said with the row (on_a_wide_measurement) and its agreements counted beside the tallies "
     "(agrees_on_a_wide_measurement: the measurement admits every predictor that meets it alike); the median "
     "interval score stays the ranking. Written because issue 27 allows three outcomes only; it changes no "
     "refutation and no interval score: in-sample for every file committed before it"},
    // Recorded 2026-12-08 for the commit that changed it (ace5bae): Q's bracket is an input of every prediction, so
    // a change to it is a new rule, and the rows it had seen are in-sample for it.
    {"fa_frozen_q_bracket_measured_lower", "2026-12-07T23:54:20Z",
     "as fa_frozen_three_outcomes, with Q's bracket past the floor: where Q(K) is not identified and the fitter's "
     "drain branch lies below the floor, a burst of volume V past the floor's bound gets the lowest V'' - R_hi T_max "
     "of the calibration's measured isolated bursts at the largest K' <= K past that bound up to max(2V, the first "
     "V'' >= V) as its lower end (0 past every measured burst or without an R interval); before, the floor. Written "
     "after the H100 knee tables: in-sample for every file committed before it"},
    {"fa_frozen_q_bracket_both_ends", "2026-12-08T03:00:00Z",
     "as fa_frozen_q_bracket_measured_lower, and on the same condition an upper end: V'' - R_lo T_p10 (R's ci95 "
     "bottom, the burst's 10th-percentile repetition) of the nearest drained isolated burst (V'' at or above its K''s "
     "drain start) at or below V past the floor's bound, at the smallest K' >= K with bursts (the higher where two "
     "share that V''; none where it is negative); before, +inf. Written after the cross-call tables of "
     "docs/lab-notes/2026-12-08.md (other calls' burst-level median c at K 132 at or below it in 1955 of 2068 cases "
     "with an end) and an adversarial review, before the next device call: in-sample for every file committed before "
     "it"},
};
inline constexpr const FaRule& kFaRule = kFaRules[std::size(kFaRules) - 1];
inline constexpr const char* kFaRuleId = kFaRule.id;
inline constexpr const char* kFaRuleWrittenUtc = kFaRule.written_utc;
// The rules as JSON: id, written_utc, what (score and re-judged files carry it as `rules`).
nlohmann::json fa_rules_json();

struct FaJudgement {
  FaFrozenInputs inputs;
  FaFrozenPrediction prediction;
  MeasuredResidual measured;
  Outcome model, zero, unhidden;  // the model and the two trivial predictors (fa_score.hpp)
  nlohmann::json diagnostics;     // fa_diagnostics.hpp
};

FaPointConfig point_config(const FaA2aPointSpec& spec, const FaA2aPointResult& result);
FaJudgement judge_point(const FaA2aPointSpec& spec, const FaA2aPointResult& result, const FaCalibration& calibration);

// Writes `prediction` (inputs + frozen prediction), `judgement` (measured, outcomes, rule) and `diagnostics`
// into the fa_point_json object, and `agreement`, a one-line summary.
void add_judgement_json(const FaJudgement& j, nlohmann::json& point);

// Measured, not predicted: what the judged launches show beside the prediction (sigma under load, the burst
// alignment, the critical path, the clock-normalized residual), each with what the model missed.
nlohmann::json fa_diagnostics(const FaA2aPointResult& result, const FaPointConfig& config,
                              const FaFrozenPrediction& prediction, const MeasuredResidual& measured);

}  // namespace xs::attention::judge
