// xstage fit layer: extracts M_X = (T_iss^0(K,V), R, Q(K)) from measurement records, as the paper does:
//   R        from zero-gap periodic points, T_period = V / R (through the origin, many V and K/B splits);
//   T_iss^0  from the large-gap plateau of the periodic gap sweep (per K, V);
//   Q(K)     from the isolated-burst knee, fitting T_iss^iso = max(T_iss^0, (V - Q)/R) with R held fixed.
// Every parameter carries a 95% bootstrap interval and fit quality. Parameters the data do not constrain
// are flagged (Q with no knee inside the sweep becomes a lower bound), never invented. The criteria are
// documented where they are applied: drain_rate.cpp, tiss0.cpp, capacity.cpp, bootstrap.hpp.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fit/validation.hpp"  // Validation, cross_validate, attach_predictions
#include "model/platform_model.hpp"
#include "report/records.hpp"

namespace xs::fit {

struct FitOptions {
  int bootstrap_resamples = 1000;
  std::uint64_t seed = 12345;
  // A gap point is on the recovered plateau when G >= plateau_gap_factor * V/R (for the T_iss^0 fit).
  double plateau_gap_factor = 1.5;
  // Zero-gap points below this volume never enter the R fit (0: no floor).
  double min_zero_gap_volume_bytes = 0;
  // A zero-gap point enters the R fit only if drain-limited: T_period(G=0) >= drain_dominance * T_ref,
  // T_ref the smallest measured issue time bounding its T_iss^0 from above (see drain_rate.cpp).
  double drain_dominance = 1.25;
  // Drain-branch points share one V/T_period = R (eq. 1): the R fit keeps the cluster agreeing within this
  // fraction (the lowest one; with no T_ref at all, the one spanning the most K, trusted if >= 2 K).
  double envelope_tolerance = 0.05;
  // An isolated point is above the knee when T_iss^iso >= (1 + knee_margin) * U, U the tightest upper
  // bound of T_iss^0(K,V) from the other measurements of that K (see capacity.cpp).
  double knee_margin = 0.08;
  // Remote target to fit ("host", "peer:1", ...). Empty: the points must name exactly one.
  std::string target;
};

struct Estimate {
  double value = 0;
  double ci95_lo = 0;
  double ci95_hi = 0;
  bool constrained = true;  // false: data do not pin it down (see note)
  std::string note;         // e.g. "no knee inside the sweep: Q >= value"
};

struct Quality {
  int num_points = 0;
  double r_squared = 0;
  double worst_rel_residual = 0;  // max |meas - fit| / meas over the points used
};

// bound "lower": no zero-gap point was drain-limited, R >= value = max V/T_period (constrained = false).
struct DrainRateFit { Estimate drain_rate_bps; Quality quality; std::string bound = "fit"; };
// source: "plateau" (median T_iss of the large-gap points), "max_gap" (no plateau point: smallest T_iss
// seen, an upper bound, constrained = false) or "isolated_floor" (an isolated point on the eq. 7 floor).
struct Tiss0Fit { int num_producers = 0; std::uint64_t bytes_per_producer = 0; double volume_bytes = 0;
                  Estimate issue_time_s; Quality quality; std::string source = "plateau";
                  int num_plateau_points = 0; };
// knee_volume_bytes: V where (V - Q)/R meets T_iss^0(K,V); for bound "lower", the largest V tested (the
// knee lies beyond it).
struct CapacityFit { int num_producers = 0; Estimate capacity_bytes; std::string bound = "fit";
                     double knee_volume_bytes = 0; Quality quality; int num_points_above_knee = 0;
                     int num_points_tested = 0; };

struct CalibrationFit {
  DrainRateFit drain;
  std::vector<Tiss0Fit> tiss0;
  std::vector<CapacityFit> capacity;
  std::vector<std::string> notes;  // ignored points, missing suites
  FitOptions options;              // as used (recorded in the `fit` block)
  model::PlatformModel to_platform_model() const;
  // The result file's `model` section (PlatformModel::from_json reads the first keys of each):
  //   R_Bps, R_ci95 [lo,hi], R_bound "fit"|"lower", R_constrained,
  //   tiss0[{K, V_bytes, s, B_bytes, ci95, constrained, source, num_plateau_points}],
  //   Q[{K, bytes, ci95, bound "fit"|"lower", knee_V_bytes, constrained}],
  //   fit{target, R{...}, tiss0[...], Q[...], criteria, bootstrap, notes}: qualities (num_points, r_squared
  //   or null when the points do not vary, worst_rel_residual) and notes. Numbers are finite or null.
  nlohmann::json to_json() const;
};

// Throws input_error if a required kind of point is missing (e.g. no zero-gap periodic points).
CalibrationFit fit_calibration(const std::vector<PointRecord>& points, const FitOptions& options = {});

// Separate stages, usable alone (and by tests). Each bootstraps only its own parameters, holding the
// upstream ones fixed; fit_calibration bootstraps all jointly (R's spread reaches Q) and also appends the
// "isolated_floor" T_iss^0 rows that fit_tiss0 alone does not produce.
DrainRateFit fit_drain_rate(const std::vector<PointRecord>& points, const FitOptions& options = {});
std::vector<Tiss0Fit> fit_tiss0(const std::vector<PointRecord>& points, double drain_rate_bps,
                                const FitOptions& options = {});
std::vector<CapacityFit> fit_capacity(const std::vector<PointRecord>& points, double drain_rate_bps,
                                      const std::vector<Tiss0Fit>& tiss0, const FitOptions& options = {});

}  // namespace xs::fit
