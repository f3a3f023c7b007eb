// xstage fit layer: R, the effective drain rate, from zero-gap periodic points (paper section 3.3):
// drain-dominated steady state gives T_period = V/R (eq. 1) whatever the K/B decomposition of V.
//
// Drain-dominance criterion. At G = 0, T_period = max(T_iss^0, V/R) (eq. 2), so a point is on the V/R
// branch when its period clearly exceeds its backpressure-free issue time. T_iss^0 is bounded from above
// by every issue time measured for the same (K,B): the positive-gap periodic points (the largest gap sits
// on the plateau), the isolated points (eq. 7 >= T_iss^0) and, failing those, the local-memory control.
// T_ref = the smallest of them; where (K,B) has none, the same B at the nearest K (each producer issues
// its own B concurrently, so T_iss^0 follows B first). A point enters the fit iff
//   T_period(G=0) >= drain_dominance * T_ref                                     (default 1.25).
// Points with no T_ref at all are left out while any point has one. If no point has one, the envelope
// rule applies: eq. 1 gives every drain-dominated point the same V/T_period = R while issue-limited ones
// fall below, so the top cluster (within envelope_tolerance) is taken, and trusted only if >= 2 K agree.
// If nothing is drain-dominated (e.g. an HBM target), R is reported as a lower bound, max V/T_period.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "common/error.hpp"
#include "fit/bootstrap.hpp"
#include "fit/stages.hpp"

namespace xs::fit {
namespace detail {
namespace {

using KB = std::pair<int, std::uint64_t>;

struct RefTable {
  std::map<KB, double> remote, local;  // (K,B) -> smallest measured T_iss (an upper bound of T_iss^0)

  static std::optional<double> nearest_k(const std::map<KB, double>& table, int k, std::uint64_t b) {
    std::optional<double> best;
    int best_dist = 0;
    for (const auto& [key, t] : table)
      if (key.second == b && (!best || std::abs(key.first - k) < best_dist)) {
        best = t;
        best_dist = std::abs(key.first - k);
      }
    return best;
  }
  std::optional<double> lookup(int k, std::uint64_t b) const {
    if (auto it = remote.find({k, b}); it != remote.end()) return it->second;
    if (auto it = local.find({k, b}); it != local.end()) return it->second;
    if (auto t = nearest_k(remote, k, b)) return t;
    return nearest_k(local, k, b);
  }
};

void keep_min(std::map<KB, double>& table, const Obs& o) {
  const KB key{o.num_producers, o.bytes_per_producer};
  auto [it, fresh] = table.emplace(key, o.issue_s);
  if (!fresh) it->second = std::min(it->second, o.issue_s);
}

// Relative least squares through the origin: minimise sum ((T - V/R)/T)^2. With x = V/T and s = 1/R this
// is sum (1 - s x)^2, so s = sum x / sum x^2 and R = sum x^2 / sum x.
double fit_through_origin(const Dataset& data, const std::vector<int>& used, const std::vector<double>& period_s) {
  double sx = 0, sxx = 0;
  for (int i : used) {
    const double x = data.obs[i].volume_bytes / period_s[i];
    sx += x;
    sxx += x * x;
  }
  return sx > 0 ? sxx / sx : 0.0;
}

double max_rate(const Dataset& data, const std::vector<int>& idx, const std::vector<double>& period_s) {
  double r = 0;
  for (int i : idx) r = std::max(r, data.obs[i].volume_bytes / period_s[i]);
  return r;
}

}  // namespace

DrainPlan plan_drain_rate(const Dataset& data, const FitOptions& options) {
  DrainPlan plan;
  RefTable refs;
  for (int i = 0; i < static_cast<int>(data.obs.size()); ++i) {
    const Obs& o = data.obs[i];
    if (o.suite == Suite::kPeriodic && o.gap_s == 0) {
      if (o.volume_bytes >= options.min_zero_gap_volume_bytes) plan.zero_gap.push_back(i);
    } else if (o.suite == Suite::kLocalControl) {
      keep_min(refs.local, o);
    } else {
      keep_min(refs.remote, o);  // periodic with G > 0, or isolated
    }
  }
  if (plan.zero_gap.empty())
    throw input_error("points", "no zero-gap periodic points: R needs T_period at G = 0 over several V "
                                "(suite periodic, G = 0, target " + data.target + ")");

  std::vector<int> unreferenced;
  int num_referenced = 0;
  for (int i : plan.zero_gap) {
    const Obs& o = data.obs[i];
    const auto ref = refs.lookup(o.num_producers, o.bytes_per_producer);
    if (!ref) { unreferenced.push_back(i); continue; }
    ++num_referenced;
    if (o.period_s >= options.drain_dominance * *ref) plan.used.push_back(i);
  }
  const Values med = median_values(data);
  if (!plan.used.empty()) {
    plan.note = fmt::format("{} of {} zero-gap points drain-dominated (T_period >= {} x T_iss^0 bound)",
                            plan.used.size(), plan.zero_gap.size(), options.drain_dominance);
    if (!unreferenced.empty())
      plan.note += fmt::format("; {} without a T_iss^0 bound left out", unreferenced.size());
    return plan;
  }
  if (num_referenced == 0) {
    // Envelope rule: iterate the selection V/T >= (1 - tol) R_hat until it is stable.
    double rate = max_rate(data, plan.zero_gap, med.period_s);
    for (int iter = 0; iter < 20; ++iter) {
      std::vector<int> used;
      for (int i : plan.zero_gap)
        if (data.obs[i].volume_bytes / med.period_s[i] >= (1 - options.envelope_tolerance) * rate) used.push_back(i);
      const bool stable = used == plan.used;
      plan.used = std::move(used);
      rate = fit_through_origin(data, plan.used, med.period_s);
      if (stable) break;
    }
    std::set<int> ks;
    for (int i : plan.used) ks.insert(data.obs[i].num_producers);
    if (ks.size() >= 2) {
      plan.note = fmt::format("no T_iss^0 bound for any zero-gap point: drain dominance inferred from {} "
                              "points of {} K agreeing on V/T_period", plan.used.size(), ks.size());
      return plan;
    }
    plan.used.clear();
  }
  plan.lower_bound = true;
  plan.constrained = false;
  plan.note = num_referenced > 0
                  ? fmt::format("no zero-gap point is drain-limited (T_period < {} x T_iss^0 bound for all {}): "
                                "R >= value = max V/T_period, unconstrained", options.drain_dominance,
                                num_referenced)
                  : "drain dominance not established (no T_iss^0 bound, fewer than two K agree): R >= value = "
                    "max V/T_period, unconstrained";
  return plan;
}

double drain_rate_from(const Dataset& data, const DrainPlan& plan, const Values& values) {
  return plan.lower_bound ? max_rate(data, plan.zero_gap, values.period_s)
                          : fit_through_origin(data, plan.used, values.period_s);
}

Quality drain_quality(const Dataset& data, const DrainPlan& plan, double drain_rate_bps) {
  std::vector<double> measured, predicted;
  for (int i : plan.used) {
    measured.push_back(data.obs[i].period_s);
    predicted.push_back(data.obs[i].volume_bytes / drain_rate_bps);  // eq. 1
  }
  return quality_of(measured, predicted);
}

}  // namespace detail

DrainRateFit fit_drain_rate(const std::vector<PointRecord>& points, const FitOptions& options) {
  const detail::Dataset data = detail::build_dataset(points, options);
  const detail::DrainPlan plan = detail::plan_drain_rate(data, options);
  const std::vector<int>& read = plan.lower_bound ? plan.zero_gap : plan.used;
  const auto ci = detail::bootstrap_ci95(data, {}, read, options.bootstrap_resamples, options.seed,
                                         [&](const detail::Values& v, std::vector<double>& out) {
                                           out.assign(1, detail::drain_rate_from(data, plan, v));
                                         });
  DrainRateFit fit;
  fit.drain_rate_bps = {detail::drain_rate_from(data, plan, detail::median_values(data)), ci[0].lo, ci[0].hi,
                        plan.constrained, plan.note};
  fit.quality = detail::drain_quality(data, plan, fit.drain_rate_bps.value);
  fit.bound = plan.lower_bound ? "lower" : "fit";
  return fit;
}

}  // namespace xs::fit
