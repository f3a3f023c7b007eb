// xstage fit layer: Q(K), the effective outstanding capacity, from isolated bursts (paper section 3.5):
// T_iss^iso(K,V) = max(T_iss^0(K,V), (V - Q)/R) (eq. 7), fitted per K with R held fixed.
//
// Knee detection. A point is above the knee when its issue time clearly exceeds the backpressure-free
// floor: T_iss >= (1 + knee_margin) * U, where U is the tightest upper bound of T_iss^0(K,V) that the other
// measurements of the same K give: every issue time bounds T_iss^0 at its own volume from above, T_iss^0
// grows with V (so a point at V' >= V bounds it by its T') and grows at most in proportion to V (a fixed
// cost plus B over a per-producer rate; so a point at V' < V bounds it by T' V/V'). The references are the
// gap-sweep T_iss^0 rows of this K and the other isolated points. Beyond the first clearly-above point,
// every larger V is on the drain branch (its slope 1/R exceeds the floor's, or there would be no knee).
// Fit. With the drain set fixed, least squares of relative residuals ((V - Q)/R - T)/T over Q alone is
// closed-form: Q = sum w c / sum w with c = V - R T and w = 1/T^2 (exact, no search needed).
// No point above the knee: eq. 7 still gives Q >= V - R T_iss for every point, so Q >= max(V - R T_iss)
// (= largest V - R T_iss^0 tested), reported with bound "lower" and constrained = false.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "common/error.hpp"
#include "fit/bootstrap.hpp"
#include "fit/stages.hpp"

namespace xs::fit {
namespace detail {
namespace {

constexpr double kMinReportedCapacityBytes = 1.0;  // the model file needs Q > 0

// Tightest upper bound of T_iss^0 at `volume_bytes` from (V', T') references, leaving out index `skip`.
double floor_bound_s(const std::vector<std::pair<double, double>>& refs, double volume_bytes, std::size_t skip) {
  double bound = std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < refs.size(); ++j) {
    if (j == skip) continue;
    const auto [v, t] = refs[j];
    bound = std::min(bound, v >= volume_bytes ? t : t * volume_bytes / v);
  }
  return bound;
}

double excess_bytes(const Obs& o, double issue_s, double drain_rate_bps) {  // c = V - R T
  return o.volume_bytes - drain_rate_bps * issue_s;
}

}  // namespace

std::vector<CapacityPlan> plan_capacity(const Dataset& data, double drain_rate_bps, bool drain_constrained,
                                        const std::vector<Tiss0Fit>& tiss0, const FitOptions& options) {
  const Values med = median_values(data);
  std::map<int, CapacityPlan> by_k;
  for (int i = 0; i < static_cast<int>(data.obs.size()); ++i)
    if (data.obs[i].suite == Suite::kIsolated) by_k[data.obs[i].num_producers].points.push_back(i);
  std::vector<CapacityPlan> plans;
  for (auto& [k, plan] : by_k) {
    plan.num_producers = k;
    std::sort(plan.points.begin(), plan.points.end(),
              [&](int a, int b) { return data.obs[a].volume_bytes < data.obs[b].volume_bytes; });
    for (const Tiss0Fit& row : tiss0)
      if (row.num_producers == k) plan.gap_rows.emplace_back(row.volume_bytes, row.issue_time_s.value);
    std::sort(plan.gap_rows.begin(), plan.gap_rows.end());
    // References: the isolated points themselves (index = position in `points`). An isolated T_iss is the
    // aligned burst's slowest producer, while a gap-sweep T_iss^0 is the mean over producers, so the
    // periodic rows sit lower than isolated floors by the producers' spread; they only mark a point as
    // past the knee when it exceeds them by far (x2), which is what reveals a knee below the sweep.
    std::vector<std::pair<double, double>> refs;
    for (int i : plan.points) refs.emplace_back(data.obs[i].volume_bytes, data.obs[i].issue_s);
    constexpr double kGapRowKneeFactor = 2.0;
    std::size_t knee_idx = plan.points.size();
    for (std::size_t p = 0; p < plan.points.size(); ++p) {
      const Obs& o = data.obs[plan.points[p]];
      const bool above_isolated = o.issue_s >= (1 + options.knee_margin) * floor_bound_s(refs, o.volume_bytes, p);
      const bool above_gap_rows =
          o.issue_s >= kGapRowKneeFactor * floor_bound_s(plan.gap_rows, o.volume_bytes, plan.gap_rows.size());
      if (above_isolated || above_gap_rows) {
        knee_idx = p;
        break;
      }
    }
    plan.floor.assign(plan.points.begin(), plan.points.begin() + static_cast<std::ptrdiff_t>(knee_idx));
    plan.drain.assign(plan.points.begin() + static_cast<std::ptrdiff_t>(knee_idx), plan.points.end());
    // A drain branch that puts Q at or below zero contradicts eq. 7 (e.g. stragglers lengthening every
    // issue time of a soft knee): keep only what eq. 7 guarantees, the lower bound.
    if (!plan.drain.empty() && !(capacity_from(data, plan, med, drain_rate_bps) > 0)) {
      plan.drain.clear();
      plan.constrained = false;
      plan.note = "the points above the knee give Q <= 0, inconsistent with eq. 7: Q >= value = max(V - R T_iss)";
    } else if (plan.drain.empty()) {
      plan.constrained = false;
      plan.note = fmt::format("no knee inside the sweep (no isolated point exceeds its T_iss^0 floor by {}%): "
                              "Q >= value = max(V - R T_iss)", 100 * options.knee_margin);
    } else if (plan.floor.empty()) {
      plan.constrained = false;
      plan.note = "floor unseen: every isolated point is above the knee; Q from the drain branch only";
    } else {
      plan.note = fmt::format("{} of {} isolated points above the knee", plan.drain.size(), plan.points.size());
    }
    if (!drain_constrained) {
      plan.constrained = false;
      plan.note += "; R unconstrained, so Q is too";
    }
    plans.push_back(std::move(plan));
  }
  return plans;
}

double capacity_from(const Dataset& data, const CapacityPlan& plan, const Values& values, double drain_rate_bps) {
  if (plan.drain.empty()) {
    double q = -std::numeric_limits<double>::infinity();
    for (int i : plan.points) q = std::max(q, excess_bytes(data.obs[i], values.issue_s[i], drain_rate_bps));
    return q;
  }
  double sum_wc = 0, sum_w = 0;
  for (int i : plan.drain) {
    const double w = 1.0 / (values.issue_s[i] * values.issue_s[i]);
    sum_wc += w * excess_bytes(data.obs[i], values.issue_s[i], drain_rate_bps);
    sum_w += w;
  }
  return sum_wc / sum_w;
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
  row.bound = plan.drain.empty() ? "lower" : "fit";
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

void set_capacity_ci95(CapacityFit& row, double lo_bytes, double hi_bytes) {
  // Replicates may dip below the reported 1-byte floor; the interval follows the same floor.
  row.capacity_bytes.ci95_lo = std::max(lo_bytes, kMinReportedCapacityBytes);
  row.capacity_bytes.ci95_hi = std::max(hi_bytes, row.capacity_bytes.ci95_lo);
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
  const auto plans = detail::plan_capacity(data, drain_rate_bps, true, tiss0, options);
  std::vector<int> read;
  for (const auto& p : plans) read.insert(read.end(), p.points.begin(), p.points.end());
  const auto ci = detail::bootstrap_ci95(data, read, {}, options.bootstrap_resamples, options.seed,
                                         [&](const detail::Values& v, std::vector<double>& out) {
                                           out.clear();
                                           for (const auto& p : plans)
                                             out.push_back(detail::capacity_from(data, p, v, drain_rate_bps));
                                         });
  const detail::Values med = detail::median_values(data);
  std::vector<CapacityFit> rows;
  for (std::size_t r = 0; r < plans.size(); ++r) {
    rows.push_back(detail::capacity_row(data, plans[r], drain_rate_bps, med));
    detail::set_capacity_ci95(rows.back(), ci[r].lo, ci[r].hi);
  }
  return rows;
}

}  // namespace xs::fit
