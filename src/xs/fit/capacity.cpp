// xstage fit layer: Q(K), the effective outstanding capacity, from isolated bursts (paper section 3.5):
// T_iss^iso(K,V) = max(T_iss^0(K,V), (V - Q)/R) (eq. 7), fitted per K with R held fixed.
//
// Knee detection. A point is above the floor when its issue time exceeds the backpressure-free floor by its
// noise margin: T_iss >= (1 + m) * U, m = max(knee_margin, noise_factor * the point's relative p10-p90
// spread), U the tightest upper bound of T_iss^0(K,V) from the points below the candidate knee (every issue
// time bounds T_iss^0 at its own volume from above; T_iss^0 grows with V, and at most in proportion to V,
// so a point at V' <= V bounds it by T' V/V'), or T_iss >= 2 x the gap-sweep row bound (periodic T_iss^0
// is a mean over producers and sits lower than isolated floors). The knee must persist: it is the first
// point from which every point up to the largest V (at least knee_min_points) is above the floor, so one
// slow launch below the knee is not a knee. Leading branch points far below the fitted branch (T < half
// of (V - Q)/R: not drain-limited) return to the floor and Q is refitted.
// Fit. With R fixed, each branch point gives c = V - R T, whose standard error R T m / misfit_sigmas grows
// with T (a 1% error in T or R moves c by 1% of V - Q, which far above the knee is many Q). Q = the
// inverse-variance weighted mean of c with every point's weight capped at 1/3 of the total (water filling),
// clamped into the feasible range below: efficient where the branch is noisy far from the knee (a plain
// median of c ignores that and, on a shallow knee with 3-5% noise, missed Q by >15% in 10% of datasets),
// yet no single point, the first past the knee or one slow launch, decides Q (uncapped 1/T^2 weights gave
// the first branch point 84-100% of the weight, issue 9).
// Identification. Eq. 7 within each point's misfit margin m = max(misfit_floor, misfit_sigmas * sqrt(se^2
// + s^2)) (se: the standard error of the point's median from its p10-p90 spread; s: the between-point
// scatter of the R cluster, which per-point offsets invisible to repetitions also widen) allows, for a
// branch point, |c - Q| <= R T m, and for any other point (T >= (V - Q)/R) Q >= c - R T m. The branch follows
// (V - Q)/R when these ranges intersect, and (>= 2 distinct V) its slope dT/dV is within
// max(2 envelope_tolerance, noise) of 1/R. Otherwise bound "not_identified": value = the weighted c (unclamped),
// no interval, the reason (the conflicting ranges) in the note. The test is per point: one disturbed
// point can flag Q, never move it silently. Jointly: the floor's lower bound max(c_f) must not exceed the
// branch's inverse-variance weighted mean of c (each c's standard error R T m / misfit_sigmas) by more
// than floor_conflict_sigmas combined standard errors, one-sided. A branch shifted above (V - Q)/R as a
// whole (a drain that starts slow after idle adds a near-constant delay) keeps its slope 1/R and passes
// the per-point margins, whose widths grow with T, but not this. Both bounds, floor_lower_bound_bytes and
// branch_estimate_bytes, are reported with every row, so an unidentified Q still says what the data allow.
// Not caught: a soft knee whose excess over max(T_iss^0, (V - Q)/R) fades within one or two sweep steps
// mimics a sharp knee at a smaller Q to within noise (see truth_recovery_test SoftKnee: on K = 33, whose
// branch is only 2x steeper than the floor, Q comes out 0.81-0.84 of truth on seeds 31-35; the one signal,
// the last floor point 3-6% above the affine floor trend, is 1.6-3.9 standard errors, 2.5 on seed 31). The
// interval covers it instead: fit_calibration spans the fits without the branch's first one and two points, and
// Q under every p-norm knee the data do not reject (knee_shape.cpp, envelope).
// A branch whose V - R T tilts along it beyond its slope's and R's noise (a softer knee, a drift of R) is not
// identified: knee_shape.cpp, applied once R's interval is known (fit_calibration) or with R fixed (fit_capacity).
// No point above the knee: eq. 7 still gives Q >= V - R T_iss for every point, so Q >= max(V - R T_iss
// - R T_iss x misfit_sigmas x noise) (the noise term only: near an unseen knee a point's noise alone would
// otherwise lift the bound above Q), reported with bound "lower" and constrained = false.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"
#include "xs/fit/bootstrap.hpp"
#include "xs/fit/stages.hpp"

namespace xs::fit {
namespace detail {
namespace {

constexpr double kMinReportedCapacityBytes = 1.0;  // the model file needs Q > 0
constexpr double kGapRowKneeFactor = 2.0;
constexpr double kOffBranchFactor = 0.5;           // T below this x (V - Q)/R: not on the drain branch
constexpr double kMaxPointWeightShare = 1.0 / 3;   // no branch point carries more of Q's weight

// Tightest upper bound of T_iss^0 at `volume_bytes` from (V', T') references with V' <= V (or any V').
double floor_bound_s(const std::vector<std::pair<double, double>>& refs, double volume_bytes) {
  double bound = std::numeric_limits<double>::infinity();
  for (const auto& [v, t] : refs) bound = std::min(bound, v >= volume_bytes ? t : t * volume_bytes / v);
  return bound;
}

double excess_bytes(const Obs& o, double issue_s, double drain_rate_bps) {  // c = V - R T
  return o.volume_bytes - drain_rate_bps * issue_s;
}

double noise_margin(const Obs& o, const FitOptions& options) {
  return std::max(options.knee_margin, options.noise_factor * o.issue_spread);
}

// Least-squares slope dT/dV over `idx` (counted), per-group intercepts: groups = plans. NaN if V never varies.
void accumulate_slope(const Dataset& data, const std::vector<int>& idx, const Values& values, double& sxy, double& sxx) {
  double n = 0, sv = 0, st = 0;
  for (int i : idx) {
    n += values.count[i];
    sv += values.count[i] * data.obs[i].volume_bytes;
    st += values.count[i] * values.issue_s[i];
  }
  if (n <= 0) return;
  const double mv = sv / n, mt = st / n;
  for (int i : idx) {
    sxy += values.count[i] * (data.obs[i].volume_bytes - mv) * (values.issue_s[i] - mt);
    sxx += values.count[i] * (data.obs[i].volume_bytes - mv) * (data.obs[i].volume_bytes - mv);
  }
}

// Weighted mean of x with weights w, each weight first lowered to at most `share` of the (lowered) total:
// the largest weights are set to a common level L with sum(min(w, L)) * share = L (water filling). With
// fewer than 1/share points every point gets the same weight.
double capped_weighted_mean(const std::vector<double>& x, const std::vector<double>& w, double share) {
  if (x.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> s = w;
  std::sort(s.begin(), s.end(), std::greater<>());
  double rest = 0;  // sum of the weights below the m capped ones
  for (double v : s) rest += v;
  double level = s.back();  // no consistent level (fewer than 1/share points): equal weights
  for (std::size_t m = 0; m < s.size(); ++m) {
    const double denom = 1 - share * static_cast<double>(m);
    if (denom <= 0) break;
    const double l = share * rest / denom;
    if (l >= s[m]) {
      level = l;
      break;
    }
    rest -= s[m];
  }
  double sw = 0, swx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double wi = std::min(w[i], level);
    sw += wi;
    swx += wi * x[i];
  }
  return sw > 0 ? swx / sw : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

FloorConflict floor_conflict(const Dataset& data, const CapacityPlan& plan, double drain_rate_bps) {
  // Standard error of a point's c = V - R T in bytes: R T m / misfit_sigmas (m: its misfit margin).
  const auto se_bytes = [&](const Obs& o) { return drain_rate_bps * o.issue_s * misfit_margin(o, plan) / plan.misfit_sigmas; };
  FloorConflict fc;
  double sw = 0, swc = 0;
  for (int i : plan.drain) {
    const Obs& o = data.obs[i];
    const double w = 1 / (se_bytes(o) * se_bytes(o));
    sw += w;
    swc += w * excess_bytes(o, o.issue_s, drain_rate_bps);
  }
  if (!(sw > 0)) return fc;
  fc.branch_estimate_bytes = swc / sw;
  for (int i : plan.floor) {
    const Obs& o = data.obs[i];
    const double c = excess_bytes(o, o.issue_s, drain_rate_bps);
    if (std::isnan(fc.floor_bound_bytes) || c > fc.floor_bound_bytes) {
      fc.floor_bound_bytes = c;
      fc.floor_volume_bytes = o.volume_bytes;
    }
    fc.sigmas = std::max(fc.sigmas, (c - fc.branch_estimate_bytes) / std::sqrt(se_bytes(o) * se_bytes(o) + 1 / sw));
  }
  return fc;
}

double misfit_noise(const Obs& o, const CapacityPlan& plan) {
  // Standard error of a median of n repetitions (normal: p10-p90 = 2.563 sigma, median 1.2533 sigma/sqrt n).
  const double n = std::max<double>(1.0, o.issue_samples ? static_cast<double>(o.issue_samples->size()) : 1.0);
  const double median_se = 1.2533 * (o.issue_spread / 2.563) / std::sqrt(n);
  return plan.misfit_sigmas * std::sqrt(median_se * median_se + plan.point_scatter * plan.point_scatter);
}

double misfit_margin(const Obs& o, const CapacityPlan& plan) { return std::max(plan.misfit_floor, misfit_noise(o, plan)); }

std::size_t persistent_knee(const Dataset& data, const std::vector<int>& points,
                            const std::vector<std::pair<double, double>>& gap_rows, const FitOptions& options) {
  const std::size_t n = points.size();
  const std::size_t min_points = static_cast<std::size_t>(std::max(1, options.knee_min_points));
  std::vector<std::pair<double, double>> below;  // (V, T) of the points below the candidate knee
  for (std::size_t p = 0; p + min_points <= n; ++p) {
    bool all_above = true;
    for (std::size_t i = p; i < n && all_above; ++i) {
      const Obs& o = data.obs[points[i]];
      all_above = o.issue_s >= (1 + noise_margin(o, options)) * floor_bound_s(below, o.volume_bytes) ||
                  o.issue_s >= kGapRowKneeFactor * floor_bound_s(gap_rows, o.volume_bytes);
    }
    if (all_above) return p;
    below.emplace_back(data.obs[points[p]].volume_bytes, data.obs[points[p]].issue_s);
  }
  return n;
}

namespace {

std::map<int, std::vector<int>> isolated_by_k(const Dataset& data) {
  std::map<int, std::vector<int>> by_k;
  for (int i = 0; i < static_cast<int>(data.obs.size()); ++i)
    if (data.obs[i].suite == Suite::kIsolated) by_k[data.obs[i].num_producers].push_back(i);
  for (auto& [k, pts] : by_k)
    std::sort(pts.begin(), pts.end(), [&](int a, int b) { return data.obs[a].volume_bytes < data.obs[b].volume_bytes; });
  return by_k;
}

}  // namespace

std::vector<int> isolated_floor_points(const Dataset& data, const FitOptions& options) {
  std::vector<int> out;
  for (const auto& [k, pts] : isolated_by_k(data)) {
    const std::size_t knee = persistent_knee(data, pts, {}, options);
    out.insert(out.end(), pts.begin(), pts.begin() + static_cast<std::ptrdiff_t>(knee));
  }
  return out;
}

std::vector<CapacityPlan> plan_capacity(const Dataset& data, double drain_rate_bps, bool drain_constrained,
                                        const std::vector<Tiss0Fit>& tiss0, const FitOptions& options,
                                        double point_scatter) {
  const Values med = median_values(data);
  std::vector<CapacityPlan> plans;
  for (auto& [k, pts] : isolated_by_k(data)) {
    CapacityPlan plan;
    plan.num_producers = k;
    plan.points = pts;
    plan.misfit_floor = options.misfit_floor;
    plan.misfit_sigmas = options.misfit_sigmas;
    plan.point_scatter = point_scatter;
    plan.floor_conflict_sigmas = options.floor_conflict_sigmas;
    for (const Tiss0Fit& row : tiss0)
      if (row.num_producers == k && row.source != "isolated_floor")
        plan.gap_rows.emplace_back(row.volume_bytes, row.issue_time_s.value);
    std::sort(plan.gap_rows.begin(), plan.gap_rows.end());
    std::size_t knee_idx = persistent_knee(data, plan.points, plan.gap_rows, options);
    // Leading branch points far below the fitted branch are not drain-limited: back to the floor.
    while (plan.points.size() - knee_idx > static_cast<std::size_t>(std::max(1, options.knee_min_points))) {
      plan.drain.assign(plan.points.begin() + static_cast<std::ptrdiff_t>(knee_idx), plan.points.end());
      const double q = capacity_from(data, plan, med, drain_rate_bps);
      const Obs& first = data.obs[plan.points[knee_idx]];
      if (first.issue_s >= kOffBranchFactor * (first.volume_bytes - q) / drain_rate_bps) break;
      ++knee_idx;
    }
    plan.floor.assign(plan.points.begin(), plan.points.begin() + static_cast<std::ptrdiff_t>(knee_idx));
    plan.drain.assign(plan.points.begin() + static_cast<std::ptrdiff_t>(knee_idx), plan.points.end());
    if (plan.drain.empty()) {
      plan.constrained = false;
      plan.note = fmt::format("no persistent knee inside the sweep (no run of >= {} isolated points up to the "
                              "largest V above the T_iss^0 floor by max({}%, {} x noise)): Q >= value = "
                              "max(V - R T_iss less its noise margin)", options.knee_min_points, 100 * options.knee_margin,
                              options.noise_factor);
    } else {
      const double q = capacity_from(data, plan, med, drain_rate_bps);
      plan.note = fmt::format("{} of {} isolated points on the drain branch", plan.drain.size(), plan.points.size());
      if (plan.floor.empty()) {
        plan.constrained = false;
        plan.note += "; floor unseen: every isolated point is above the knee";
      }
      // Identification: one Q within every point's noise margin of eq. 7 ...
      const auto [lo, hi] = feasible_capacity(data, plan, med, drain_rate_bps);
      const FloorConflict fc = floor_conflict(data, plan, drain_rate_bps);
      plan.floor_bound_bytes = fc.floor_bound_bytes;
      plan.branch_estimate_bytes = fc.branch_estimate_bytes;
      if (!(q > 0)) {
        plan.not_identified = true;
        plan.note += fmt::format("; not identified: the branch gives Q = {:.4g} B <= 0, inconsistent with eq. 7", q);
      } else if (lo > hi) {
        plan.not_identified = true;
        double cmin = 1e300, cmax = -1e300;
        for (int i : plan.drain) {
          cmin = std::min(cmin, excess_bytes(data.obs[i], data.obs[i].issue_s, drain_rate_bps));
          cmax = std::max(cmax, excess_bytes(data.obs[i], data.obs[i].issue_s, drain_rate_bps));
        }
        plan.note += fmt::format("; not identified: no single Q fits eq. 7 within the points' noise (the points "
                                 "need Q >= {:.4g} B, the drain branch Q <= {:.4g} B); branch points imply "
                                 "V - R T from {:.4g} to {:.4g} B", lo, hi, cmin, cmax);
      } else if (fc.sigmas > plan.floor_conflict_sigmas) {
        // ... the floor's lower bound jointly with the branch's estimate (a per-point margin alone lets a
        // branch shifted as a whole, e.g. by a drain that starts slow after idle, pass) ...
        plan.not_identified = true;
        plan.note += fmt::format("; not identified: the floor needs Q >= {:.4g} B (V = {:.4g} B), {:.1f} standard "
                                 "errors above the drain branch's estimate {:.4g} B: the branch sits above "
                                 "(V - Q)/R as a whole, as a drain that starts slow after idle makes it",
                                 fc.floor_bound_bytes, fc.floor_volume_bytes, fc.sigmas, fc.branch_estimate_bytes);
      } else {
        // ... and its slope consistent with 1/R, weighted by each point's own uncertainty (sigma_i = T_i m_i /
        // misfit_sigmas), so the points near the knee, where a ramp or a soft knee bends the branch, count.
        double sw = 0, swv = 0, swt = 0;
        for (int i : plan.drain) {
          const Obs& o = data.obs[i];
          const double sigma = o.issue_s * misfit_margin(o, plan) / plan.misfit_sigmas;
          const double w = 1.0 / (sigma * sigma);
          sw += w;
          swv += w * o.volume_bytes;
          swt += w * o.issue_s;
        }
        double sxy = 0, sxx = 0;
        for (int i : plan.drain) {
          const Obs& o = data.obs[i];
          const double sigma = o.issue_s * misfit_margin(o, plan) / plan.misfit_sigmas;
          const double w = 1.0 / (sigma * sigma);
          sxy += w * (o.volume_bytes - swv / sw) * (o.issue_s - swt / sw);
          sxx += w * (o.volume_bytes - swv / sw) * (o.volume_bytes - swv / sw);
        }
        if (sxx > 0 && sxy > 0 && plan.drain.size() >= 3) {
          const double slope = sxy / sxx, slope_se = 1.0 / std::sqrt(sxx);
          const double rel_dev = slope * drain_rate_bps - 1, rel_se = slope_se / slope;
          const double tol = std::max(options.envelope_tolerance, plan.misfit_sigmas * rel_se);
          if (std::abs(rel_dev) > tol) {
            plan.not_identified = true;
            plan.note += fmt::format("; not identified: the branch slope dT/dV (weighted to the knee) is {:.1f}% from "
                                     "1/R (tolerance {:.1f}%): it bends, as a drain ramping up or a soft knee does",
                                     100 * rel_dev, 100 * tol);
          }
        }
      }
      if (plan.not_identified) {
        plan.constrained = false;
        if (std::isfinite(fc.floor_bound_bytes))
          plan.note += fmt::format("; the floor gives Q >= {:.4g} B (V - R T_iss at V = {:.4g} B)",
                                   fc.floor_bound_bytes, fc.floor_volume_bytes);
        plan.note += fmt::format("; the branch's weighted V - R T_iss is {:.4g} B", fc.branch_estimate_bytes);
      }
    }
    if (!drain_constrained) {
      plan.constrained = false;
      plan.note += "; R unconstrained, so Q is too";
    }
    plans.push_back(std::move(plan));
  }
  return plans;
}

std::pair<double, double> feasible_capacity(const Dataset& data, const CapacityPlan& plan, const Values& values,
                                            double drain_rate_bps) {
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  std::vector<char> on_branch(data.obs.size(), 0);
  for (int i : plan.drain) on_branch[i] = 1;
  for (int i : plan.points) {
    if (values.count[i] == 0) continue;
    const Obs& o = data.obs[i];
    const double c = excess_bytes(o, values.issue_s[i], drain_rate_bps);
    const double half = drain_rate_bps * values.issue_s[i] * misfit_margin(o, plan);
    lo = std::max(lo, c - half);
    if (on_branch[i]) hi = std::min(hi, c + half);
  }
  return {lo, hi};
}

double capacity_from(const Dataset& data, const CapacityPlan& plan, const Values& values, double drain_rate_bps) {
  if (plan.drain.empty()) {  // Q >= V - R T at every point, less its noise (exact on noise-free data)
    double q = -std::numeric_limits<double>::infinity();
    for (int i : plan.points)
      q = std::max(q, excess_bytes(data.obs[i], values.issue_s[i], drain_rate_bps) -
                          drain_rate_bps * values.issue_s[i] * misfit_noise(data.obs[i], plan));
    return q;
  }
  // Inverse-variance weighted mean of c = V - R T (c's standard error is R T m / misfit_sigmas: it grows
  // with T, so far points, noisy in c, count little), each point's weight capped at kMaxPointWeightShare of
  // the total so no single point (the first past the knee, or one slow launch) decides Q.
  std::vector<double> c, w;
  for (int i : plan.drain) {
    if (values.count[i] == 0) continue;
    const Obs& o = data.obs[i];
    const double se = drain_rate_bps * values.issue_s[i] * misfit_margin(o, plan);
    c.push_back(excess_bytes(o, values.issue_s[i], drain_rate_bps));
    w.push_back(values.count[i] / (se * se));
  }
  const double q = capped_weighted_mean(c, w, kMaxPointWeightShare);
  if (plan.not_identified) return q;
  const auto [lo, hi] = feasible_capacity(data, plan, values, drain_rate_bps);
  return lo <= hi ? std::clamp(q, lo, hi) : q;
}

double isolated_floor_scatter(const Dataset& data, const std::vector<CapacityPlan>& plans, const Values& values) {
  std::vector<double> scaled;
  for (const auto& p : plans)
    for (std::size_t j = 1; j + 1 < p.floor.size(); ++j) {
      const int a = p.floor[j - 1], i = p.floor[j], b = p.floor[j + 1];
      const double va = data.obs[a].volume_bytes, vi = data.obs[i].volume_bytes, vb = data.obs[b].volume_bytes;
      if (!(vb > va)) continue;
      const double w = (vi - va) / (vb - va);
      const double line = (1 - w) * values.floor_issue_s[a] + w * values.floor_issue_s[b];
      if (!(line > 0)) continue;
      scaled.push_back(std::abs(values.floor_issue_s[i] / line - 1) / std::sqrt(1 + w * w + (1 - w) * (1 - w)));
    }
  return scaled.size() < 3 ? std::numeric_limits<double>::quiet_NaN() : 1.4826 * median(scaled);
}

double isolated_drain_rate(const Dataset& data, const std::vector<CapacityPlan>& plans, const Values& values) {
  double sxy = 0, sxx = 0;
  for (const auto& p : plans)
    if (!p.drain.empty()) accumulate_slope(data, p.drain, values, sxy, sxx);
  return (sxx > 0 && sxy > 0) ? sxx / sxy : std::numeric_limits<double>::quiet_NaN();
}

namespace {

// V where the drain branch (V - Q)/R meets T_iss^0(K,V), i.e. V = Q + R T_iss^0(V) (eq. 6 at the knee).
// T_iss^0 near the knee: affine through the last two floor points, proportional to V through one, or the
// nearest gap-sweep row; the result is kept between the last floor point and the first drain point.
double knee_volume_bytes(const Dataset& data, const CapacityPlan& plan, double drain_rate_bps, double q_bytes) {
  const double r = drain_rate_bps;
  double intercept_s = 0, slope_s_per_byte = 0;
  const std::size_t nf = plan.floor.size();
  if (nf >= 2) {
    const Obs& a = data.obs[plan.floor[nf - 2]];
    const Obs& b = data.obs[plan.floor[nf - 1]];
    slope_s_per_byte = std::max(0.0, (b.issue_s - a.issue_s) / (b.volume_bytes - a.volume_bytes));
    intercept_s = b.issue_s - slope_s_per_byte * b.volume_bytes;
  } else if (nf == 1) {
    slope_s_per_byte = data.obs[plan.floor[0]].issue_s / data.obs[plan.floor[0]].volume_bytes;
  } else if (!plan.gap_rows.empty()) {
    intercept_s = plan.gap_rows.front().second;
  }
  double knee = (r * slope_s_per_byte < 1) ? (q_bytes + r * intercept_s) / (1 - r * slope_s_per_byte)
                                           : std::numeric_limits<double>::infinity();
  const double hi = data.obs[plan.drain.front()].volume_bytes;
  const double lo = nf ? data.obs[plan.floor.back()].volume_bytes : 0.0;
  return std::clamp(knee, lo, hi);
}

}  // namespace

CapacityFit capacity_row(const Dataset& data, const CapacityPlan& plan, double drain_rate_bps, const Values& values) {
  CapacityFit row;
  row.num_producers = plan.num_producers;
  row.num_points_tested = static_cast<int>(plan.points.size());
  row.num_points_above_knee = static_cast<int>(plan.drain.size());
  row.bound = plan.drain.empty() ? "lower" : plan.not_identified ? "not_identified" : "fit";
  double q = capacity_from(data, plan, values, drain_rate_bps);
  std::string note = plan.note;
  bool constrained = plan.constrained;
  if (!(q >= kMinReportedCapacityBytes)) {
    note += fmt::format("; the data put no positive bound on Q (V - R T_iss = {:.4g} B): reported as {} B",
                        q, kMinReportedCapacityBytes);
    q = kMinReportedCapacityBytes;
    constrained = false;
  }
  row.capacity_bytes = {q, q, q, constrained, note};
  if (!plan.drain.empty()) row.drain_start_volume_bytes = data.obs[plan.drain.front()].volume_bytes;
  row.floor_lower_bound_bytes = plan.floor_bound_bytes;
  row.branch_estimate_bytes = plan.branch_estimate_bytes;
  if (plan.drain.empty()) {
    row.knee_volume_bytes = data.obs[plan.points.back()].volume_bytes;  // the knee lies beyond
    row.quality = quality_of({}, {});
    return row;
  }
  row.knee_volume_bytes = knee_volume_bytes(data, plan, drain_rate_bps, q);
  if (!plan.floor.empty()) {
    // Above the knee T grows as V/R, on the floor about as T_iss^0/V per byte. When the two slopes are
    // close the branches meet at a shallow angle and a small bias in T_iss moves Q by (V - Q)/Q times it.
    const Obs& last = data.obs[plan.floor.back()];
    const double steepness = last.volume_bytes / (drain_rate_bps * values.issue_s[plan.floor.back()]);
    if (steepness < 3)
      row.capacity_bytes.note += fmt::format("; soft knee: the drain branch is only {:.2f}x steeper than the "
                                             "floor, so Q is sensitive to small issue-time biases", steepness);
    // Below 1.5x a 1% issue-time bias moves Q by several percent of V: not a measurement of Q.
    if (steepness < 1.5) row.capacity_bytes.constrained = false;
  }
  std::vector<double> measured, predicted;
  for (int i : plan.drain) {
    measured.push_back(values.issue_s[i]);
    predicted.push_back((data.obs[i].volume_bytes - q) / drain_rate_bps);  // drain branch of eq. 7
  }
  row.quality = quality_of(measured, predicted);
  return row;
}

void set_capacity_ci95(CapacityFit& row, const CapacityPlan& plan, const Interval& iv) {
  if (plan.drain.empty()) return clear_ci95(row.capacity_bytes, "Q is a lower bound");
  if (plan.not_identified) return clear_ci95(row.capacity_bytes, "Q is not identified");
  // Replicates may dip below the reported 1-byte floor; the interval follows the same floor.
  const double lo = std::max(iv.lo, kMinReportedCapacityBytes);
  set_ci95(row.capacity_bytes, {lo, std::max(iv.hi, lo)}, plan.drain.size());
}

bool clearly_on_floor(const Dataset& data, const CapacityPlan& plan, int obs_idx, double drain_rate_bps,
                      double capacity_bytes, const FitOptions& options) {
  if (plan.drain.empty()) return true;  // the true Q exceeds the bound: every point is on the floor
  const double drain_branch_s = (data.obs[obs_idx].volume_bytes - capacity_bytes) / drain_rate_bps;
  return data.obs[obs_idx].issue_s >= (1 + options.knee_margin) * drain_branch_s;
}

}  // namespace detail

std::vector<CapacityFit> fit_capacity(const std::vector<PointRecord>& points, double drain_rate_bps,
                                      const std::vector<Tiss0Fit>& tiss0, const FitOptions& options) {
  if (!(drain_rate_bps > 0)) throw input_error("drain_rate_bps", "must be > 0 (fit R first)");
  const detail::Dataset data = detail::build_dataset(points, options);
  auto plans = detail::plan_capacity(data, drain_rate_bps, true, tiss0, options);
  for (auto& p : plans)  // R held fixed here: no R error in the knee-shape contrast
    detail::reject_knee_shape(p, detail::knee_shape(data, p, drain_rate_bps, 0.0), drain_rate_bps, options.knee_shape_sigmas);
  std::vector<int> read;
  std::vector<std::vector<int>> groups;
  for (const auto& p : plans) {
    read.insert(read.end(), p.points.begin(), p.points.end());
    groups.push_back(p.drain);
  }
  const auto ci = detail::bootstrap_ci95(data, read, {}, groups, options.bootstrap_resamples, options.seed,
                                         [&](const detail::Values& v, std::vector<double>& out) {
                                           out.clear();
                                           for (const auto& p : plans)
                                             out.push_back(detail::capacity_from(data, p, v, drain_rate_bps));
                                         });
  const detail::Values med = detail::median_values(data);
  std::vector<CapacityFit> rows;
  for (std::size_t r = 0; r < plans.size(); ++r) {
    rows.push_back(detail::capacity_row(data, plans[r], drain_rate_bps, med));
    detail::set_capacity_ci95(rows.back(), plans[r], ci[r]);
  }
  return rows;
}

}  // namespace xs::fit
