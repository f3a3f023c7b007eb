// xstage fit layer: extracts M_X = (T_iss^0(K,V), R, Q(K)) from measurement records, as the paper does:
//   R        from zero-gap periodic points, T_period = V / R (through the origin, many V and K/B splits);
//   T_iss^0  from the large-gap plateau of the periodic gap sweep (per K, V);
//   Q(K)     from the isolated-burst knee, fitting T_iss^iso = max(T_iss^0, (V - Q)/R) with R held fixed.
// Every parameter carries a 95% bootstrap interval (point resampling, bootstrap.hpp) or none (null, with a
// note) and fit quality. Parameters the data do not constrain are flagged (Q with no knee inside the sweep
// becomes a lower bound; a branch that eq. 7 does not fit is "not_identified"), never invented. The
// criteria are documented where they are applied: dataset.cpp, drain_rate.cpp, tiss0.cpp, capacity.cpp.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/fit/validation.hpp"  // Validation, cross_validate, attach_predictions
#include "xs/model/platform_model.hpp"
#include "xs/report/records.hpp"

namespace xs::fit {

struct FitOptions {
  int bootstrap_resamples = 1000;
  std::uint64_t seed = 12345;
  // A gap point is on the recovered plateau when G >= plateau_gap_factor * V/R (for the T_iss^0 fit).
  double plateau_gap_factor = 1.5;
  // Zero-gap points below this volume never enter the R fit (0: no floor).
  double min_zero_gap_volume_bytes = 0;
  // Zero-gap points whose stream (num_bursts * V) is shorter never enter the R fit: a short stream can be
  // partly absorbed by L2 (0: no floor). They still appear in the convergence record.
  double min_stream_bytes = 0;
  // A zero-gap point enters the R fit only if drain-limited: T_period(G=0) >= drain_dominance * T_ref,
  // T_ref the smallest measured issue time bounding its T_iss^0 from above (see drain_rate.cpp).
  double drain_dominance = 1.25;
  // Drain-branch points share one V/T_period = R (eq. 1): the R fit keeps the largest cluster agreeing
  // within max(envelope_tolerance, misfit_sigmas * the median standard error of the points' medians).
  double envelope_tolerance = 0.05;
  // An isolated point is above the floor when T_iss^iso >= (1 + m) * U, m = max(knee_margin, noise_factor *
  // its relative p10-p90 spread), U the tightest upper bound of T_iss^0(K,V) from the floor measurements of
  // that K; the knee needs knee_min_points consecutive points above it up to the largest V (capacity.cpp).
  double knee_margin = 0.08;
  double noise_factor = 2.0;
  int knee_min_points = 2;
  // Q is identified when one Q fits eq. 7 at every isolated point within max(misfit_floor, misfit_sigmas *
  // (the point's median standard error (+) the R cluster's between-point scatter)) (see capacity.cpp).
  double misfit_floor = 0.02;
  double misfit_sigmas = 4.0;
  // ... and the floor's lower bound on Q (max V - R T_iss over the floor points) does not exceed the drain
  // branch's weighted estimate of Q by more than floor_conflict_sigmas combined standard errors (one-sided).
  double floor_conflict_sigmas = 3.0;
  // ... and the branch's V - R T does not tilt along it: its weighted slope against R T stays within
  // knee_shape_sigmas standard errors (its own and R's; two-sided, a false alarm of 0.27% per K at 3 under eq. 7
  // with the measured noise; knee_shape.cpp).
  double knee_shape_sigmas = 3.0;
  // The copy-engine rate of the same path measured in the same calibration (0: none). Where the copy engine
  // bounds what the path carries (the host path: SM stores and the copy engine share one PCIe link), a
  // zero-gap point faster than path_rate_limit_bps x (1 + max(path_rate_tolerance, the cluster tolerance)) is
  // partly absorbed, not drained at R, and leaves the R fit; an R whose ci95 still lies above
  // path_rate_limit_bps x (1 + path_rate_tolerance) is flagged (constrained = false, caveat). The tolerance
  // covers the copy engine's own run-to-run spread (55.2-55.3 GB/s over three H200 runs) with margin.
  double path_rate_limit_bps = 0;
  double path_rate_tolerance = 0.03;
  // Remote target to fit ("host", "peer:1", ...). Empty: the points must name exactly one.
  std::string target;
};

struct Estimate {
  double value = 0;
  double ci95_lo = 0;       // NaN (JSON null) when the data give no interval: the note says why
  double ci95_hi = 0;
  bool constrained = true;  // false: data do not pin it down (see note)
  std::string note;         // e.g. "no knee inside the sweep: Q >= value"
  bool has_ci95() const { return std::isfinite(ci95_lo) && std::isfinite(ci95_hi); }
};

struct Quality {
  int num_points = 0;
  double r_squared = 0;
  double worst_rel_residual = 0;  // max |meas - fit| / meas over the points used
};

// R measured at one (K,B), G = 0 over a stream of num_bursts * V bytes (the L2-absorption check).
struct StreamRate { int num_producers = 0; std::uint64_t bytes_per_producer = 0; double stream_bytes = 0;
                    double rate_bps = 0; };
// bound "lower": no zero-gap point was drain-limited, R >= value = max V/T_period (constrained = false);
// "not_identified": fewer than two agreeing drain-limited points spanning V and K/B (value: their rate).
// iso_rate_bps: 1 / slope dT/dV of the isolated drain branches (NaN: none), the independent cross-check.
struct DrainRateFit { Estimate drain_rate_bps; Quality quality; std::string bound = "fit";
                      double iso_rate_bps = std::numeric_limits<double>::quiet_NaN();
                      std::pair<double, double> iso_ci95{std::nan(""), std::nan("")};
                      std::optional<bool> iso_rate_agrees; std::string iso_note;
                      std::vector<StreamRate> convergence; std::optional<bool> converged;
                      std::string convergence_note;
                      std::string caveat; };  // why R is no point value though fitted (model.R_caveat)
// source: "plateau" (median T_iss of the large-gap points), "max_gap" (no plateau point: smallest T_iss
// seen, an upper bound, constrained = false) or "isolated_floor" (an isolated point on the eq. 7 floor).
struct Tiss0Fit { int num_producers = 0; std::uint64_t bytes_per_producer = 0; double volume_bytes = 0;
                  Estimate issue_time_s; Quality quality; std::string source = "plateau";
                  int num_plateau_points = 0; };
// knee_volume_bytes: V where (V - Q)/R meets T_iss^0(K,V); for bound "lower", the largest V tested (the
// knee lies beyond it). bound "not_identified": the drain branch does not follow (V - Q)/R (note says how);
// value is the branch's capped inverse-variance weighted mean of V - R T (capacity.cpp), with no interval.
struct CapacityFit { int num_producers = 0; Estimate capacity_bytes; std::string bound = "fit";
                     double knee_volume_bytes = 0; Quality quality; int num_points_above_knee = 0;
                     int num_points_tested = 0;
                     double drain_start_volume_bytes = 0;  // smallest V measured on the branch (0: none)
                     // The eq. 7 bounds the data give, reported also when Q is not identified (NaN: none):
                     // Q >= floor_lower_bound_bytes (max V - R T_iss over the floor points) and the branch's
                     // inverse-variance weighted mean of V - R T_iss.
                     double floor_lower_bound_bytes = std::numeric_limits<double>::quiet_NaN();
                     double branch_estimate_bytes = std::numeric_limits<double>::quiet_NaN(); };

struct CalibrationFit {
  DrainRateFit drain;
  std::vector<Tiss0Fit> tiss0;
  std::vector<CapacityFit> capacity;
  std::vector<std::string> notes;  // ignored points, missing suites
  FitOptions options;              // as used (recorded in the `fit` block)
  // Never throws for an unidentified parameter: null intervals are left out and "not_identified" Q rows
  // are read as "lower" (the reader knows "fit"/"lower"); R keeps its value (see the note).
  model::PlatformModel to_platform_model() const;
  // The result file's `model` section (PlatformModel::from_json reads the first keys of each):
  //   R_Bps, R_ci95 [lo,hi] or null, R_bound "fit"|"lower"|"not_identified", R_constrained,
  //   tiss0[{K, V_bytes, s, B_bytes, ci95 or null, constrained, source, num_plateau_points}],
  //   Q[{K, bytes, ci95 or null, bound "fit"|"lower"|"not_identified", knee_V_bytes, constrained}],
  //   fit{target, R{..., iso_rate_Bps, iso_agrees, convergence[{K, B_bytes, stream_bytes, rate_Bps}]},
  //   tiss0[...], Q[{..., drain_start_V_bytes, floor_lower_bound_bytes, branch_estimate_bytes}], criteria,
  //   bootstrap, notes}: qualities (num_points, r_squared or null when the points do not vary,
  //   worst_rel_residual) and notes. Numbers are finite or null.
  nlohmann::json to_json() const;
};

// The issue time each equation describes. Periodic points: eq. 3's per-producer mean over producer-bursts
// (issue_time_s). Isolated points: eq. 7's aggregate burst issue span, i.e. the slowest producer
// (issue_time_max_s) where recorded, else issue_time_s (files from before it was recorded for isolated
// points, when issue_time_s was that span). Eq. 7 is a statement about the burst: the drain is
// work-conserving, so its last store issues once V - Q has drained however unevenly producers were served,
// while the producers' mean span also depends on that unevenness (on the H200 the mean drifts to
// V - R T = 5-17 MiB on long bursts while the burst span stays at V - R T = 0.4-0.6 MiB).
const Summary& modelled_issue_time(const PointRecord& point);

// Throws input_error if a required kind of point is missing (e.g. no zero-gap periodic points). An R that
// the points cannot identify is reported (bound "not_identified"), not thrown.
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
