// xstage fit layer: R, the effective drain rate, from zero-gap periodic points (paper section 3.3):
// drain-dominated steady state gives T_period = V/R (eq. 1) whatever the K/B decomposition of V.
//
// Drain-dominance criterion, two conditions on a zero-gap point:
// (i) Issue cannot explain the period. At G = 0, T_period = max(T_iss^0, V/R) (eq. 2). T_iss^0 is bounded
//     from above by every issue time measured for the same (K,B): the positive-gap periodic points (the
//     largest gap sits on the plateau), the isolated points (eq. 7 >= T_iss^0) and, failing those, the
//     local-memory control. T_ref = the smallest; where (K,B) has none, the same B at the nearest K (each
//     producer issues its own B concurrently, so T_iss^0 follows B first). Require
//       T_period >= drain_dominance * T_ref                                        (default 1.25).
// (ii) The point is in steady state. Each zero-gap burst leaves about V - R T_iss^0 more outstanding, so
//     X-Stage fills only after n_fill = Q / (V - R T_ref) bursts; until then bursts issue at T_iss^0 and
//     the period is below V/R. Require n_fill <= warmup + (num_bursts - warmup)/4, so that three quarters
//     of the measured bursts (and hence their median) are past the fill. Needs R and Q: the fit iterates
//     R -> T_iss^0 -> Q -> selection until the selection is stable (settle_drain_plan).
// (iii) The point shares the drain branch's V/T_period: of the points passing (i) and (ii), the lowest
//     cluster agreeing within envelope_tolerance (transients lie above R; rate_cluster.cpp).
// Points with no T_ref at all are left out while any point has one. If no point has one, the envelope
// rule applies: the V/T_period cluster spanning the most K (issue-limited points give a different V/T
// per K), trusted only if >= 2 K agree.
// If nothing is drain-dominated (e.g. an HBM target), R is reported as a lower bound, max V/T_period
// (eq. 2 gives T_period >= V/R in steady state; a point still filling X-Stage could exceed it).
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

double max_rate(const Dataset& data, const std::vector<int>& idx, const std::vector<double>& period_s) {
  double r = 0;
  for (int i : idx) r = std::max(r, data.obs[i].volume_bytes / period_s[i]);
  return r;
}

}  // namespace

double FillHint::capacity_bytes(int num_producers) const {
  if (capacity_by_k.empty()) return 0;
  if (num_producers <= capacity_by_k.front().first) return capacity_by_k.front().second;
  if (num_producers >= capacity_by_k.back().first) return capacity_by_k.back().second;
  auto hi = std::lower_bound(capacity_by_k.begin(), capacity_by_k.end(), std::pair(num_producers, -1.0));
  auto lo = std::prev(hi);
  const double w = double(num_producers - lo->first) / double(hi->first - lo->first);
  return lo->second + w * (hi->second - lo->second);
}

namespace {

// Condition (ii); T_ref absent counts as T_iss^0 = 0 (the most the burst could leave outstanding). A burst
// that leaves nothing outstanding never fills X-Stage: it is issue-limited, which (i) rejects.
bool fills_in_warmup(const Obs& o, std::optional<double> t_ref_s, const FillHint& fill) {
  if (fill.capacity_by_k.empty()) return true;
  const double excess_bytes = o.volume_bytes - fill.drain_rate_bps * t_ref_s.value_or(0.0);
  if (!(excess_bytes > 0)) return true;
  const double num_fill_bursts = fill.capacity_bytes(o.num_producers) / excess_bytes;
  return num_fill_bursts <= o.warmup_bursts + 0.25 * (o.num_bursts - o.warmup_bursts);
}

}  // namespace

DrainPlan plan_drain_rate(const Dataset& data, const FitOptions& options, const FillHint& fill) {
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

  std::vector<int> unreferenced, steady, issue_cannot_explain;
  int num_referenced = 0, num_filling = 0;
  for (int i : plan.zero_gap) {
    const Obs& o = data.obs[i];
    const auto ref = refs.lookup(o.num_producers, o.bytes_per_producer);
    if (!fills_in_warmup(o, ref, fill)) { ++num_filling; continue; }
    steady.push_back(i);
    if (!ref) { unreferenced.push_back(i); continue; }
    ++num_referenced;
    if (o.period_s >= options.drain_dominance * *ref) issue_cannot_explain.push_back(i);
  }
  const std::string filling_note =
      num_filling ? fmt::format("; {} still filling X-Stage after warm-up (Q / (V - R T_ref) bursts) left out",
                                num_filling)
                  : "";
  const Values med = median_values(data);
  const double tol = options.envelope_tolerance;
  if (!issue_cannot_explain.empty()) {
    plan.used = lowest_rate_cluster(data, issue_cannot_explain, med.period_s, tol);
    plan.note = fmt::format("{} of {} zero-gap points drain-dominated (T_period >= {} x T_iss^0 bound, and in "
                            "the lowest V/T_period cluster within {}%)", plan.used.size(), plan.zero_gap.size(),
                            options.drain_dominance, 100 * tol);
    if (issue_cannot_explain.size() > plan.used.size())
      plan.note += fmt::format("; {} above that cluster (period shorter than V/R: still filling) left out",
                               issue_cannot_explain.size() - plan.used.size());
    if (!unreferenced.empty())
      plan.note += fmt::format("; {} without a T_iss^0 bound left out", unreferenced.size());
    plan.note += filling_note;
    return plan;
  }
  if (num_referenced == 0) {
    plan.used = widest_k_rate_cluster(data, steady, med.period_s, tol);
    std::set<int> ks;
    for (int i : plan.used) ks.insert(data.obs[i].num_producers);
    if (ks.size() >= 2) {
      plan.note = fmt::format("no T_iss^0 bound for any zero-gap point: drain dominance inferred from {} "
                              "points of {} K agreeing on V/T_period", plan.used.size(), ks.size()) + filling_note;
      return plan;
    }
    plan.used.clear();
  }
  plan.lower_bound = true;
  plan.constrained = false;
  plan.note = num_referenced > 0
                  ? fmt::format("no zero-gap point is drain-limited (T_period < {} x T_iss^0 bound for all {}): "
                                "R >= value = max V/T_period (if in steady state), unconstrained", options.drain_dominance,
                                num_referenced)
                  : "drain dominance not established (no T_iss^0 bound, fewer than two K agree): R >= value = "
                    "max V/T_period, unconstrained";
  plan.note += filling_note;
  return plan;
}

DrainPlan settle_drain_plan(const Dataset& data, const FitOptions& options) {
  DrainPlan plan = plan_drain_rate(data, options);
  const bool has_isolated = std::any_of(data.obs.begin(), data.obs.end(),
                                        [](const Obs& o) { return o.suite == Suite::kIsolated; });
  if (!has_isolated) {
    plan.note += "; no isolated points, so no Q: steady state after warm-up not checked";
    return plan;
  }
  const Values med = median_values(data);
  for (int pass = 0; pass < 6 && !plan.lower_bound; ++pass) {
    FillHint fill;
    fill.drain_rate_bps = drain_rate_from(data, plan, med);
    std::vector<Tiss0Fit> rows;
    for (const auto& p : plan_tiss0(data, fill.drain_rate_bps, options))
      rows.push_back(tiss0_row(data, p, fill.drain_rate_bps, med));
    for (const auto& p : plan_capacity(data, fill.drain_rate_bps, true, rows, options))
      fill.capacity_by_k.emplace_back(p.num_producers, capacity_from(data, p, med, fill.drain_rate_bps));
    DrainPlan next = plan_drain_rate(data, options, fill);
    const bool stable = next.used == plan.used && next.lower_bound == plan.lower_bound;
    plan = std::move(next);
    if (stable) break;
  }
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
  const detail::DrainPlan plan = detail::settle_drain_plan(data, options);
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
