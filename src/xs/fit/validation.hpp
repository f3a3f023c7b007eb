// xstage fit layer: validation of a platform model against measured points, in two kinds that are never
// mixed: held-out (cross_validate: k-fold, every point predicted by a model refitted WITHOUT it) and
// fixed-parameter (validate: a given model's predictions; in-sample when that model was fitted from them).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/model/platform_model.hpp"
#include "xs/report/records.hpp"

namespace xs::fit {

struct CalibrationFit;  // fit.hpp
struct FitOptions;

// Where a point sits on the Burst-Gap curves, decided from the FULL-data model (R, T_iss^0(K,V)), so a
// point keeps its regime whichever fold predicts it. Periodic points, h = V/R, t0 = T_iss^0(K,V):
//   drain_limited  G <  h - t0                  (eq. 3 drain branch: T_iss = V/R - G > T_iss^0)
//   plateau        G >= plateau_gap_factor * h  (the points the T_iss^0 plateau is fitted from)
//   transition     otherwise (the corner where eq. 3 changes branch, incl. issue-limited small-V points)
// Isolated points: isolated. A periodic point is unclassified when the full model's R is not usable.
enum class Regime { kDrainLimited, kTransition, kPlateau, kIsolated, kUnclassified };
const char* regime_name(Regime regime);  // "drain_limited", "transition", "plateau", "isolated", "unclassified"
struct RegimeBoundaries {
  double plateau_gap_factor = 1.5;  // FitOptions::plateau_gap_factor of the fit being validated
};

// A fitted model plus what its predictions may lean on. A point whose prediction needs a parameter listed
// here as unidentified is counted unpredicted with that reason, never silently dropped.
struct FittedModel {
  model::PlatformModel platform;
  std::string drain_unidentified;                                  // empty: R usable; else why not
  std::vector<std::pair<int, std::string>> capacity_unidentified;  // (K, why Q(K) is not usable)
};
// R or Q(K) with bound "fit" or "lower" is usable; any other bound (e.g. "not_identified") is not.
FittedModel fitted_model(const CalibrationFit& fit);

struct ValidationRow {
  std::size_t point_index = 0;  // into the caller's points
  Suite suite = Suite::kPeriodic;
  Regime regime = Regime::kUnclassified;
  int num_producers = 0;
  std::uint64_t bytes_per_producer = 0;
  double gap_s = 0;
  int fold = -1;                        // held-out: the fold that predicted it; fixed-parameter: -1
  std::string unpredicted_reason;       // empty: predicted
  bool capacity_lower_bound = false;    // the Q used is only a lower bound (T_iss^iso prediction is a floor)
  bool tiss0_extrapolated = false;      // T_iss^0(K,V) looked up outside the model's table
  double predicted_issue_s = 0, measured_issue_s = 0, issue_rel_err = 0;
  double predicted_period_s = 0, measured_period_s = 0, period_rel_err = 0;  // periodic only
  bool predicted() const { return unpredicted_reason.empty(); }
};

// Median / p90 of |pred - meas| / meas over the predicted rows of one regime (NaN, null in JSON, when none).
struct RegimeSummary {
  Regime regime = Regime::kUnclassified;
  int num_points = 0, num_predicted = 0;
  int num_tiss0_extrapolated = 0;  // predicted rows whose T_iss^0 lookup left the model's table (clamped)
  double issue_median_rel_err = 0, issue_p90_rel_err = 0;
  double period_median_rel_err = 0, period_p90_rel_err = 0;  // NaN for isolated
};

struct Validation {
  std::vector<ValidationRow> rows;  // every validated point, predicted or not
  std::vector<RegimeSummary> regimes;  // drain_limited, transition, plateau, isolated (+ unclassified if any)
  int num_points = 0, num_predicted = 0;
  std::vector<std::pair<std::string, int>> unpredicted;  // (reason, count)
  std::vector<std::string> notes;
  const RegimeSummary& regime(Regime regime) const;  // throws if absent
  // {num_points, num_predicted, num_unpredicted, unpredicted: [{reason, count}], regimes: {name: {num_points,
  //  num_predicted, num_unpredicted, num_tiss0_extrapolated, issue_median_rel_err, issue_p90_rel_err, period_median_rel_err,
  //  period_p90_rel_err}}, notes, columns, rows}
  nlohmann::json to_json() const;
};

// Validated points: periodic and isolated, not skipped, no wrong data, positive medians (period too, for
// periodic), of `target` when it is non-empty. Local controls are not predictions of the remote path.
bool validated_point(const PointRecord& point, const std::string& target);

// Fixed parameters, no refitting: `model`'s prediction of every validated point; regimes from `regimes_from`.
Validation validate(const std::vector<PointRecord>& points, const FittedModel& model,
                    const FittedModel& regimes_from, const RegimeBoundaries& boundaries = {},
                    const std::string& target = "");
// Same, the model being its own regime reference and with nothing flagged unidentified (xstage-bench --model).
Validation validate(const std::vector<PointRecord>& points, const model::PlatformModel& platform);

// ---- held-out: k-fold cross-validation ----------------------------------------------------------------
struct CrossValidationOptions {
  int num_folds = 5;
  RegimeBoundaries boundaries;
  std::string target;  // points of other targets are not validated (empty: all)
};
// The split rule (recorded in the file): validated points are grouped into strata (suite, K, zero-gap or
// gap sweep), strata in that order; within a stratum points are taken in sweep order (B, then G, then
// index) and dealt round-robin, fold = (running count over all strata) mod k; repeats of one configuration
// (same suite, K, B, G) share a fold. No randomness, so no seed: neighbours on a sweep land in different
// folds and every fold keeps every kind of point.
inline constexpr const char* kFoldRule =
    "stratified round-robin: strata (suite, K, zero-gap|gap) in that order, each in sweep order (B, G, index); "
    "fold = running count over all strata mod k, repeats of one (suite, K, B, G) share a fold; deterministic "
    "(no seed)";
// fold of every point (-1: not validated, kept in every training set).
std::vector<int> assign_folds(const std::vector<PointRecord>& points, int num_folds, const std::string& target = "");

struct FoldInfo {
  int fold = 0;
  int num_training = 0, num_held_out = 0;
  std::string error;  // empty: the fold's fit succeeded
};
struct CrossValidation {
  int num_folds = 0;
  std::vector<int> fold_of_point;  // [points]
  std::vector<FoldInfo> folds;
  Validation held_out;             // rows carry their fold
  // Validation::to_json plus {k, rule, fold_of_point, folds: [{fold, num_training, num_held_out, error}]}.
  nlohmann::json to_json() const;
};
// A fitter: points -> model. Throws xs::Error when the training points lack a required kind of point.
using Fitter = std::function<FittedModel(const std::vector<PointRecord>& training)>;
// Each fold f: fit on every point whose fold is not f, predict the points of fold f only. A fold whose fit
// throws xs::Error leaves its points unpredicted with the message. `full` is the all-data model (regimes).
CrossValidation cross_validate(const std::vector<PointRecord>& points, const FittedModel& full,
                               const Fitter& fitter, const CrossValidationOptions& options = {});
// With fit_calibration(training, fit_options) as the fitter.
CrossValidation cross_validate(const std::vector<PointRecord>& points, const FittedModel& full,
                               const FitOptions& fit_options, const CrossValidationOptions& options = {});

// Fills PointRecord::prediction for every non-skipped point from the platform model: periodic eqs. 2-3,
// isolated eq. 7 (period 0), local control T_iss^0 and T_iss^0 + G (no X-Stage on the HBM path). These are
// the full model's in-sample predictions when the model was fitted from the same points.
// Nothing is predicted from an unidentified R, nor for an isolated point whose Q(K) is not identified.
void attach_predictions(std::vector<PointRecord>& points, const model::PlatformModel& platform);

}  // namespace xs::fit
