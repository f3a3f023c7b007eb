// xstage attention judge layer: scoring a frozen FA-A2A prediction against the measured residual (issue 27
// item 2). The measured E_res is the median of the judged boundary's same-round (fused - FA-only) differences,
// in wall time; its uncertainty is a bootstrap of that median over rounds (95%, percentile). Rule
// fa_frozen_aligned_refutable (fa_judgement.hpp), for a prediction interval [lo, hi]:
//   disagrees    the interval and the measured median's interval are disjoint, at any width (with the
//                direction): "E_res <= 92.8 us" met by 210 us is refuted, however little else it said;
//   agrees       the prediction is decided (sharp, fa_frozen_prediction.hpp) and the two intervals meet;
//   not decided  the prediction is not decided (too wide or unbounded) and the two intervals meet.
// (Rule v2 returned "not decided" for every undecided prediction, refuted or not.)
// Rule v4 (fa_frozen_decisive_measurement) adds, for every predictor alike: where the measured median's 95%
// interval is wider than the bar's tolerance on each side (half-width > max(20% of |median|, 1% of T_FA)), the
// measurement cannot tell a right prediction from a near one, and intervals that meet give
//   measurement not decisive   instead of "agrees" or "not decided".
// A disjoint pair still disagrees: a refutation needs no precision, an agreement does.
// Rule v5 (fa_frozen_interval_score) adds two things, for every predictor alike:
//   - E_res >= 0 by definition, so the measured interval is judged as an interval of E_res: [lo, hi] becomes
//     [max(lo, 0), max(hi, 0)], and where it reaches below zero (lo < 0: the launches' own variation has shown
//     at least |lo|) its upper end is raised to at least the tolerance: the measurement cannot tell zero from
//     anything below what it resolves. A measurement wholly below zero therefore still refutes a prediction
//     whose low end is above its tolerance (an exposure of milliseconds against a fused kernel that ran faster),
//     and a measurement [-638, +4] us no longer refutes a prediction of 5 us. Decisiveness is v4's, on the
//     measured half-width. (Under v4 a wholly negative interval refuted the model and E_res = 0 alike.)
//   - agreement counts are not a ranking (a constant interval of factor-two width collects agreements by
//     luck): every measured row also gets the interval score of the prediction at y = max(measured median, 0),
//       IS = (hi - lo) + (2/alpha) (lo - y)+ + (2/alpha) (y - hi)+,   alpha = 0.05,
//     a proper scoring rule for a central 95% interval (Gneiting and Raftery 2007): it charges the width and
//     every miss, so a wide interval, a narrow wrong one and an unbounded one (IS = inf) all lose to a sharp
//     right one. A predictor with no interval at a row scores inf there (abstaining is not rewarded). Tallies
//     rank the predictors by the median IS over every measured row, decisive or not: the same rows for all.
// Rule v6 (fa_frozen_three_outcomes) keeps v5 and drops v4's fourth outcome: an outcome is agrees, disagrees or
// not decided, and nothing else (issue 27). Intervals that meet give "agrees" where the prediction is decided and
// "not decided" where it is not, whatever the measured width. A measured interval wider than the tolerance
// (half-width > max(20% of |median|, 1% of T_FA)) is said with the row (`on_a_wide_measurement`) and counted
// beside the tallies (`agrees_on_a_wide_measurement`): there it is the measurement that admits the prediction, and
// every predictor whose interval meets it agrees alike. The median interval score (v5) stays the ranking, which
// charges a predictor's width whatever the measurement's.
// There is no "explained": a decomposition of what happened is a diagnostic (fa_diagnostics.hpp). The same
// scorer judges the trivial predictors beside the model:
//   zero      E_res = 0: the stores always hide;
//   unhidden  E_res = remote bytes / R over R's interval: nothing hides.
// Plain C++.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/attention/point/fa_point.hpp"
#include "xs/attention/model/fa_calibration.hpp"

namespace xs::attention::judge {

// The model's terms and frozen predictions (attention/model/) are what the judge scores.
using namespace xs::attention::model;

struct MeasuredResidual {
  bool measured = false;
  std::string boundary;       // "sender_side" | "remote_visible_completion"
  int num_rounds = 0;
  double median_s = 0;
  Interval median_ci95;       // bootstrap over rounds
  std::string why_not;        // where not measured
  // Rule v4's precision test, said but no longer an outcome (v6): decisive where the interval's half-width <=
  // tolerance_s = max(20% |median|, 1% T_FA). A residual whose T_FA is not known (tolerance_s 0) is tested on
  // 20% of |median| alone.
  bool decisive = true;
  double tolerance_s = 0;
  bool below_zero = false;    // rule v5: the whole measured interval < 0 (said; judged as e_res_ci95)
  Interval e_res_ci95;        // rule v5: the measured interval as an interval of E_res >= 0 (see above)
};
// Sets `decisive` and `tolerance_s` from T_FA (s, > 0; 0: unknown) per rule v4.
inline constexpr double kDecisiveRelative = 0.20, kDecisiveOfTfa = 0.01;
void set_decisiveness(MeasuredResidual& m, double t_fa_s);
// At least kMinRounds paired rounds are needed; fewer: not measured. The bootstrap is seeded, so a file
// re-judges identically.
inline constexpr int kMinRounds = 5;
MeasuredResidual measured_residual(const FaA2aPointResult& result);
// The same from raw per-round differences (tests; `boundary` names them).
MeasuredResidual measured_residual(const std::vector<double>& rounds_s, const std::string& boundary);

struct Outcome {
  std::string result;     // "agrees" | "disagrees" | "not decided" | "" (not measured)
  std::string direction;  // disagrees: "under" (predicted below measured) | "over"
  std::string reason;
  double point_error_s = NAN;      // predicted point - measured median, where a point exists
  double relative_error = NAN;     // point_error / measured median
  bool interval_decided = false;   // the prediction was sharp enough to agree (a disagreement needs no sharpness)
  double interval_score_s = NAN;   // rule v5: IS at the measured median (inf: unbounded; NaN: no interval)
  bool ranked = false;             // IS counts in the ranking: every measured row (inf where no interval)
  bool on_a_wide_measurement = false;  // rule v6: the measured interval is wider than the tolerance (said, not an outcome)
};
// The interval score of [lo, hi] at y for a central (1 - alpha) interval; inf where hi is not finite.
inline constexpr double kIntervalScoreAlpha = 0.05;
double interval_score(const Interval& predicted, double y);
Outcome score(const Interval& predicted, double predicted_point_s, bool decided, const std::string& why_not_decided,
              const MeasuredResidual& measured);

struct Tally {
  int agrees = 0, disagrees = 0, not_decided = 0, not_measured = 0;
  int agrees_wide_measurement = 0;  // of the agreements, those on a measurement wider than the tolerance (v6)
  int disagrees_wide = 0;  // of the disagreements, those whose interval was not decided (refuted though wide)
  std::vector<double> interval_scores_s;  // of the ranked rows (inf included)
  void add(const Outcome& o);
  double median_interval_score_s() const;  // NaN where no row is ranked
  nlohmann::json to_json() const;
};

nlohmann::json to_json(const MeasuredResidual& m);
nlohmann::json to_json(const Outcome& o);

}  // namespace xs::attention::judge
