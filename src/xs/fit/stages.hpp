// xstage fit layer, internal: the filtered observations every stage reads, and each stage's "plan" (which
// points it uses, decided once from the point medians) plus a cheap estimator that re-evaluates the
// parameter from any set of point values and point multiplicities. The bootstrap replays only the
// estimators, on resampled points (bootstrap.hpp).
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/fit/fit.hpp"

namespace xs::fit::detail {

// One usable measurement (skipped, wrong-data, other-target and non-positive points are filtered out).
struct Obs {
  std::size_t point_idx = 0;   // index into the caller's points
  Suite suite = Suite::kPeriodic;
  int num_producers = 0;       // K
  std::uint64_t bytes_per_producer = 0;  // B
  double volume_bytes = 0;     // V = K B
  double gap_s = 0;            // G
  int num_bursts = 0, warmup_bursts = 0;
  const std::vector<double>* issue_samples = nullptr;   // per-repetition T_iss
  const std::vector<double>* period_samples = nullptr;  // per-repetition T_period (periodic only)
  double issue_s = 0, period_s = 0;                     // the recorded medians
  // T_iss^0 is a per-producer quantity (eq. 3's mean over producer-bursts) for every suite; issue_s is
  // modelled_issue_time (isolated: the burst span eq. 7 describes). The floor rows read these.
  const std::vector<double>* floor_issue_samples = nullptr;
  double floor_issue_s = 0;
  // Relative p10-p90 spread of the repetitions ((p90 - p10) / median; 0 with one repetition): the noise
  // scale that knee margins and cluster tolerances are tied to.
  double issue_spread = 0, period_spread = 0;
  double stream_bytes() const { return static_cast<double>(num_bursts) * volume_bytes; }
};

struct Dataset {
  std::string target;
  std::vector<Obs> obs;
  std::vector<std::string> notes;
};
Dataset build_dataset(const std::vector<PointRecord>& points, const FitOptions& options);

// Point values one estimate is computed from: the medians, or one bootstrap replicate of them. count[obs]
// is how often the replicate drew that obs within its stage (1 for the medians; 0: not drawn).
struct Values {
  std::vector<double> issue_s, period_s;  // [obs]
  std::vector<double> floor_issue_s;      // [obs] per-producer mean issue time (Obs::floor_issue_s)
  std::vector<int> count;                 // [obs]
};
// Median of values[i] over `idx`, each repeated count[i] times (NaN if none drawn).
double counted_median(const std::vector<int>& idx, const std::vector<double>& values, const std::vector<int>& count);
Values median_values(const Dataset& data);

// ---- R (drain_rate.cpp) -----------------------------------------------------------------------------
struct DrainPlan {
  std::vector<int> used;       // drain-dominated zero-gap obs
  std::vector<int> zero_gap;   // every zero-gap obs long enough (for the lower bound)
  bool lower_bound = false;    // R >= max V/T_period
  bool not_identified = false; // fewer than 2 agreeing points spanning V and K/B: value is theirs, no interval
  bool constrained = true;
  std::string note;
  std::string bound() const { return lower_bound ? "lower" : not_identified ? "not_identified" : "fit"; }
};
// Q(K) and R from an earlier pass, for the fill condition (a zero-gap point is in steady state only once
// its warm-up bursts have filled X-Stage). Empty: not known yet, condition not applied.
struct FillHint {
  double drain_rate_bps = 0;
  std::vector<std::pair<int, double>> capacity_by_k;  // sorted by K
  double capacity_bytes(int num_producers) const;     // linear in K, clamped outside
};
DrainPlan plan_drain_rate(const Dataset& data, const FitOptions& options, const FillHint& fill = {});
// Iterates plan_drain_rate with the T_iss^0 and Q fits until the drain-dominated set is stable.
DrainPlan settle_drain_plan(const Dataset& data, const FitOptions& options);
double drain_rate_from(const Dataset& data, const DrainPlan& plan, const Values& values);
// rate_cluster.cpp: R = exp(mean ln x), x = V/T_period (eq. 1 fitted in log space; each obs counted `count`
// times; empty count: once), and the selections of the drain-branch cluster.
double fit_log_rate(const Dataset& data, const std::vector<int>& used, const std::vector<double>& period_s,
                    const std::vector<int>& count = {});
// Between-point scatter of ln(V/T_period) over `candidates`: iterated 3-sigma clipping started at centre_rate
// with the standard deviation of the candidates within +-guard (in ln) of it; 0 when fewer than 3 lie there.
double clipped_log_scatter(const Dataset& data, const std::vector<int>& candidates, const std::vector<double>& period_s,
                           double centre_rate, double guard);
// The cluster with the most points agreeing within a factor 1 + tolerance of its rate, either side (ties: the
// lower rate, since L2 absorption and an unfilled X-Stage both make V/T_period too high, never too low).
std::vector<int> largest_rate_cluster(const Dataset& data, const std::vector<int>& candidates,
                                      const std::vector<double>& period_s, double tolerance);
std::vector<int> widest_k_rate_cluster(const Dataset& data, const std::vector<int>& candidates,
                                       const std::vector<double>& period_s, double tolerance);
Quality drain_quality(const Dataset& data, const DrainPlan& plan, double drain_rate_bps);
// FitOptions::path_rate_limit_bps: flags a fitted R whose ci95 lies above the copy-engine rate (caveat).
void check_path_rate(DrainRateFit& fit, const FitOptions& options);

// ---- T_iss^0 (tiss0.cpp) ----------------------------------------------------------------------------
struct Tiss0Plan {
  int num_producers = 0;
  std::uint64_t bytes_per_producer = 0;
  std::vector<int> sweep;      // every periodic obs of this (K,B), G = 0 included (quality)
  std::vector<int> estimate_from;  // plateau obs, or (no plateau) the positive-gap obs
  std::string source = "plateau";  // "plateau" (median), "max_gap" (minimum), "isolated_floor" (single)
  std::string note;
};
std::vector<Tiss0Plan> plan_tiss0(const Dataset& data, double drain_rate_bps, const FitOptions& options);
double tiss0_from(const Tiss0Plan& plan, const Values& values);
Tiss0Fit tiss0_row(const Dataset& data, const Tiss0Plan& plan, double drain_rate_bps, const Values& values);
struct Interval;
// The bootstrap interval of a T_iss^0 row, or none (an upper bound, a single point).
void set_tiss0_ci95(Tiss0Fit& row, const Tiss0Plan& plan, const Interval& iv);

// ---- Q (capacity.cpp) -------------------------------------------------------------------------------
struct CapacityPlan {
  int num_producers = 0;
  std::vector<int> points;     // isolated obs of this K, by increasing V
  std::vector<int> drain;      // those on the (V - Q)/R branch (a suffix of `points`); empty: lower bound
  std::vector<int> floor;      // the points below the knee (a prefix of `points`)
  std::vector<std::pair<double, double>> gap_rows;  // (V, T_iss^0) of this K from the gap sweep
  bool constrained = true;
  bool not_identified = false; // the branch does not follow (V - Q)/R: no Q, no interval
  double misfit_floor = 0.02, misfit_sigmas = 4.0;  // FitOptions, for each point's misfit margin
  double point_scatter = 0;    // relative between-point scatter (of the R cluster's V/T_period)
  double floor_conflict_sigmas = 3.0;  // FitOptions
  double floor_bound_bytes = std::numeric_limits<double>::quiet_NaN();      // max V - R T over `floor`
  double branch_estimate_bytes = std::numeric_limits<double>::quiet_NaN();  // weighted mean over `drain`
  std::string note;
};
double misfit_margin(const Obs& o, const CapacityPlan& plan);  // relative, see capacity.cpp
double misfit_noise(const Obs& o, const CapacityPlan& plan);   // the margin's noise term (no misfit_floor)
// The floor's lower bound on Q against the branch's estimate: c = V - R T per point, standard error
// R T m / misfit_sigmas; branch_estimate = inverse-variance weighted mean of c over `drain`; sigmas = max over
// `floor` of (c_f - branch_estimate) / sqrt(se_f^2 + se_branch^2) (-inf: no floor point).
struct FloorConflict {
  double floor_bound_bytes = std::numeric_limits<double>::quiet_NaN(), floor_volume_bytes = 0;
  double branch_estimate_bytes = std::numeric_limits<double>::quiet_NaN();
  double sigmas = -std::numeric_limits<double>::infinity();
};
FloorConflict floor_conflict(const Dataset& data, const CapacityPlan& plan, double drain_rate_bps);
// Relative between-point scatter of the drain cluster: 1.4826 x median |V/(T_period R) - 1| (0: < 3 points).
double drain_scatter(const Dataset& data, const DrainPlan& plan, double drain_rate_bps);
// The Q that eq. 7 allows within each point's noise margin m (capacity.cpp): [lo, hi], lo > hi if none.
std::pair<double, double> feasible_capacity(const Dataset& data, const CapacityPlan& plan, const Values& values,
                                            double drain_rate_bps);
// Index into `points` (sorted by V) of the persistent knee: the first point from which every point up to
// the largest V (at least knee_min_points of them) exceeds its floor bound by its noise margin; the floor
// bounds come from the points below it and from gap_rows (x2, see capacity.cpp). points.size(): no knee.
std::size_t persistent_knee(const Dataset& data, const std::vector<int>& points,
                            const std::vector<std::pair<double, double>>& gap_rows, const FitOptions& options);
// Every isolated obs below its K's persistent knee (isolated references only): the ones whose T_iss bounds
// T_iss^0 from above without being on the drain branch.
std::vector<int> isolated_floor_points(const Dataset& data, const FitOptions& options);
// Relative between-point scatter of the isolated floor (capacity.cpp): each interior floor point against the
// straight line through its two neighbours in V (T_iss^0 is affine in V between nearby volumes), r = T / line
// - 1 scaled by 1/sqrt(1 + w^2 + (1-w)^2) (w the line's weight: the neighbours scatter too); 1.4826 x median
// |r| over every K. It holds per-point offsets, repetition noise and local misfit alike: what a row taken
// from one floor point deviates by. NaN with fewer than 3 residuals.
double isolated_floor_scatter(const Dataset& data, const std::vector<CapacityPlan>& plans, const Values& values);
// 1 / (common slope dT/dV of the drain branches, per-K intercepts), counted; NaN with < 2 distinct V.
double isolated_drain_rate(const Dataset& data, const std::vector<CapacityPlan>& plans, const Values& values);
std::vector<CapacityPlan> plan_capacity(const Dataset& data, double drain_rate_bps, bool drain_constrained,
                                        const std::vector<Tiss0Fit>& tiss0, const FitOptions& options,
                                        double point_scatter = 0);
double capacity_from(const Dataset& data, const CapacityPlan& plan, const Values& values, double drain_rate_bps);
CapacityFit capacity_row(const Dataset& data, const CapacityPlan& plan, double drain_rate_bps, const Values& values);
struct Interval;
// The bootstrap interval of a Q row, or none (lower bound, not identified, a single branch point).
void set_capacity_ci95(CapacityFit& row, const CapacityPlan& plan, const Interval& iv);
// knee_shape.cpp: the drain branch's tilt against R. tilt: the weighted least-squares slope b of c = V - R T on
// x = R T over the branch (weights 1/(R T m / misfit_sigmas)^2; 0 under eq. 7 with the true R); tilt_se:
// sqrt(its standard error^2 + drain_rate_rel_se^2); sigmas = tilt / tilt_se (NaN on branches of < 3 points).
struct KneeShape {
  int num_points = 0;
  double tilt = std::numeric_limits<double>::quiet_NaN(), tilt_se = std::numeric_limits<double>::quiet_NaN();
  double sigmas = std::numeric_limits<double>::quiet_NaN();
};
KneeShape knee_shape(const Dataset& data, const CapacityPlan& plan, double drain_rate_bps, double drain_rate_rel_se);
// Marks the plan not identified (note in the format of plan_capacity's other reasons) when |ks.sigmas| exceeds
// sigmas_limit; returns whether it did.
bool reject_knee_shape(CapacityPlan& plan, const KneeShape& ks, double drain_rate_bps, double sigmas_limit);
// knee_shape.cpp: Q under a family of knee shapes, T = (T0^n + D^n)^(1/n) with D = [(V - Q)/R]+ (order n; 0:
// eq. 7's hard knee max(T0, D)), T0 the affine floor line of the clean floor points (V below the hard knee's Q).
constexpr double kKneeOrders[] = {2, 2.5, 3, 4, 6};  // the soft shapes profiled beside the hard knee
struct FloorLine {
  double intercept_s = std::numeric_limits<double>::quiet_NaN(), slope_s_per_byte = 0;
  double from_volume_bytes = 0;  // the smallest V of the line's points: the shapes are compared from there up
  int num_points = 0;
};
FloorLine knee_floor_line(const Dataset& data, const CapacityPlan& plan, const Values& values, double hard_capacity_bytes);
// Weighted least squares over every isolated point of the plan (weights count / se^2, se = T m / misfit_sigmas),
// in Q and, where rate_rel_se > 0, a relative error of R with a normal prior of that sd. chi2 includes the prior.
struct ShapeFit {
  double order = 0, capacity_bytes = std::numeric_limits<double>::quiet_NaN(), rate_scale = 1;
  double chi2 = std::numeric_limits<double>::quiet_NaN();
  int num_points = 0;
};
ShapeFit fit_knee_shape(const Dataset& data, const CapacityPlan& plan, const Values& values, double drain_rate_bps,
                        double order, const FloorLine& line, double start_capacity_bytes, double rate_rel_se);
// Q under each soft order of kKneeOrders, in that order, R fixed (NaN where a shape cannot be fitted).
void shape_capacities(const Dataset& data, const CapacityPlan& plan, const Values& values, double drain_rate_bps,
                      double hard_capacity_bytes, std::vector<double>& out);
// The shapes the data do not reject against the best one: chi2 - chi2_min <= kept_delta_chi2 (3.84, the 95%
// point of chi2 with 1 dof, times the best fit's chi2 per dof where above 1). fits[0] is the hard knee.
struct KneeEnvelope {
  std::vector<ShapeFit> fits;
  std::vector<char> kept;
  double chi2_min = std::numeric_limits<double>::quiet_NaN(), kept_delta_chi2 = 0;
  int dof = 0;
};
KneeEnvelope knee_envelope(const Dataset& data, const CapacityPlan& plan, const Values& values, double drain_rate_bps,
                           double rate_rel_se, double hard_capacity_bytes);
// Widens Q's interval `e` (a fit row's) to the union of its own and those of the soft shapes knee_envelope keeps
// (ci[first + k]: the bootstrap interval of Q under kKneeOrders[k], shape_capacities in the same replicates), or,
// where the kept shapes' Q spread wider than the hard knee's Q, marks the plan not identified and returns true.
bool widen_to_knee_shapes(const Dataset& data, CapacityPlan& plan, const Values& values, double drain_rate_bps,
                          double rate_rel_se, const std::vector<Interval>& ci, std::size_t first, Estimate& e);
// A floor point is clearly on T_iss^0, given the fitted Q, when T_iss >= (1 + knee_margin) (V - Q)/R; one
// nearer the knee may carry some backpressure, so its T_iss is only an upper bound of T_iss^0.
bool clearly_on_floor(const Dataset& data, const CapacityPlan& plan, int obs_idx, double drain_rate_bps,
                      double capacity_bytes, const FitOptions& options);

// ---- shared helpers ---------------------------------------------------------------------------------
// R^2 of predictions against measurements (NaN when the measurements do not vary) and the worst |rel| error.
Quality quality_of(const std::vector<double>& measured, const std::vector<double>& predicted);
nlohmann::json number_or_null(double x);  // JSON has no NaN/Inf: those become null

}  // namespace xs::fit::detail
