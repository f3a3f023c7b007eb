// xstage fit layer: T_iss^0(K,V), the backpressure-free issue time, from the recovered plateau of the
// periodic gap sweep (paper section 3.5: "we sweep G and obtain T_iss^0 from the large-gap plateau").
//
// Plateau criterion: a periodic point of (K,B) is on the plateau when G >= plateau_gap_factor * V/R. By
// eq. 3, T_iss = max(T_iss^0, V/R - G) equals T_iss^0 as soon as G >= V/R - T_iss^0; requiring G >= V/R
// (times a margin for R's error) holds whatever T_iss^0 is. The estimate is the median of the plateau
// points' medians (robust to one disturbed point). A (K,B) with no plateau point is flagged
// (constrained = false) and reports the smallest T_iss seen, an upper bound of T_iss^0, never a guess.
// Caveat: if V exceeds the isolated knee, the "plateau" is T_iss^iso > T_iss^0 (eq. 7); it still predicts
// that (K,B)'s large-gap issue time, and the calibration notes such rows (calibration.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"
#include "xs/fit/bootstrap.hpp"
#include "xs/fit/stages.hpp"
#include "xs/model/burst_gap.hpp"

namespace xs::fit {
namespace detail {
namespace {

constexpr double kDrainingSlope = -0.5;  // dT/dG below this: closer to the drain law (-1) than to a plateau (0)

// dT/dG over the plateau points (least squares in G), or between the one plateau point and the largest gap
// below it; 0 when that cannot be measured.
double plateau_slope(const Dataset& data, const Tiss0Plan& p) {
  std::vector<int> pts = p.estimate_from;
  if (pts.size() == 1) {
    int prev = -1;
    for (int i : p.sweep)
      if (data.obs[i].gap_s < data.obs[pts[0]].gap_s && (prev < 0 || data.obs[i].gap_s > data.obs[prev].gap_s)) prev = i;
    if (prev < 0) return 0.0;
    pts.push_back(prev);
  }
  double n = 0, sg = 0, st = 0;
  for (int i : pts) {
    n += 1;
    sg += data.obs[i].gap_s;
    st += data.obs[i].floor_issue_s;
  }
  double sxy = 0, sxx = 0;
  for (int i : pts) {
    sxy += (data.obs[i].gap_s - sg / n) * (data.obs[i].floor_issue_s - st / n);
    sxx += (data.obs[i].gap_s - sg / n) * (data.obs[i].gap_s - sg / n);
  }
  return sxx > 0 ? sxy / sxx : 0.0;
}

}  // namespace

std::vector<Tiss0Plan> plan_tiss0(const Dataset& data, double drain_rate_bps, const FitOptions& options) {
  // Every (K,B) with at least one positive-gap periodic point is part of the gap sweep.
  std::map<std::pair<int, std::uint64_t>, Tiss0Plan> by_kb;
  for (int i = 0; i < static_cast<int>(data.obs.size()); ++i) {
    const Obs& o = data.obs[i];
    if (o.suite == Suite::kPeriodic && o.gap_s > 0) {
      Tiss0Plan& p = by_kb[{o.num_producers, o.bytes_per_producer}];
      p.num_producers = o.num_producers;
      p.bytes_per_producer = o.bytes_per_producer;
    }
  }
  for (int i = 0; i < static_cast<int>(data.obs.size()); ++i) {
    const Obs& o = data.obs[i];
    if (o.suite != Suite::kPeriodic) continue;
    auto it = by_kb.find({o.num_producers, o.bytes_per_producer});
    if (it == by_kb.end()) continue;
    it->second.sweep.push_back(i);
    if (o.gap_s >= options.plateau_gap_factor * o.volume_bytes / drain_rate_bps) it->second.estimate_from.push_back(i);
  }
  std::vector<Tiss0Plan> plans;
  for (auto& [kb, p] : by_kb) {
    const double falls = plateau_slope(data, p);
    if (!p.estimate_from.empty() && falls < kDrainingSlope) {
      // Points taken as plateau that still fall with G follow the drain law T = V/R - G (slope -1), not
      // T_iss^0 (slope 0): R is too high (absorbed zero-gap points) or the sweep stops short. Their T_iss
      // bounds T_iss^0 from above only (issue 27: a host-like plateau row came out 93x too large).
      p.estimate_from.clear();
      p.note = fmt::format("the points taken as plateau (G >= {} x V/R) still fall with G (dT/dG = {:.2f}, the drain "
                           "law gives -1): drain-limited, ", options.plateau_gap_factor, falls);
    }
    if (p.estimate_from.empty()) {
      double largest_gap_s = 0;
      for (int i : p.sweep) {
        if (data.obs[i].gap_s > 0) p.estimate_from.push_back(i);
        largest_gap_s = std::max(largest_gap_s, data.obs[i].gap_s);
      }
      const double v = static_cast<double>(p.num_producers) * static_cast<double>(p.bytes_per_producer);
      p.source = "max_gap";
      p.note += fmt::format("no plateau point (needs G >= {:.3g} s = {} x V/R; largest G {:.3g} s): value is "
                           "the smallest T_iss seen, an upper bound of T_iss^0",
                           options.plateau_gap_factor * v / drain_rate_bps, options.plateau_gap_factor,
                           largest_gap_s);
    }
    plans.push_back(std::move(p));
  }
  return plans;
}

double tiss0_from(const Tiss0Plan& plan, const Values& values) {
  if (plan.source == "max_gap") {
    double t = values.floor_issue_s[plan.estimate_from.front()];
    for (int i : plan.estimate_from) t = std::min(t, values.floor_issue_s[i]);
    return t;
  }
  if (plan.estimate_from.size() == 1) return values.floor_issue_s[plan.estimate_from.front()];
  return counted_median(plan.estimate_from, values.floor_issue_s, values.count);
}

Tiss0Fit tiss0_row(const Dataset& data, const Tiss0Plan& plan, double drain_rate_bps, const Values& values) {
  Tiss0Fit row;
  row.num_producers = plan.num_producers;
  row.bytes_per_producer = plan.bytes_per_producer;
  row.volume_bytes = static_cast<double>(plan.num_producers) * static_cast<double>(plan.bytes_per_producer);
  row.source = plan.source;
  const double t0 = tiss0_from(plan, values);
  row.issue_time_s = {t0, t0, t0, plan.source != "max_gap", plan.note};
  row.num_plateau_points = plan.source == "plateau" ? static_cast<int>(plan.estimate_from.size()) : 0;
  // Quality: eq. 3 with this T_iss^0 and the fixed R over the whole gap sweep of (K,B).
  std::vector<double> measured, predicted;
  for (int i : plan.sweep) {
    measured.push_back(values.issue_s[i]);
    predicted.push_back(model::issue_time_s(t0, row.volume_bytes, drain_rate_bps, data.obs[i].gap_s));
  }
  row.quality = quality_of(measured, predicted);
  return row;
}

void set_tiss0_ci95(Tiss0Fit& row, const Tiss0Plan& plan, const Interval& iv) {
  if (plan.source == "max_gap") return clear_ci95(row.issue_time_s, "an upper bound (smallest T_iss seen)");
  set_ci95(row.issue_time_s, iv, plan.estimate_from.size());
}

}  // namespace detail

std::vector<Tiss0Fit> fit_tiss0(const std::vector<PointRecord>& points, double drain_rate_bps,
                                const FitOptions& options) {
  if (!(drain_rate_bps > 0)) throw input_error("drain_rate_bps", "must be > 0 (fit R first)");
  const detail::Dataset data = detail::build_dataset(points, options);
  const std::vector<detail::Tiss0Plan> plans = detail::plan_tiss0(data, drain_rate_bps, options);
  std::vector<int> read;
  std::vector<std::vector<int>> groups;
  for (const auto& p : plans) {
    read.insert(read.end(), p.estimate_from.begin(), p.estimate_from.end());
    if (p.source == "plateau") groups.push_back(p.estimate_from);
  }
  const auto ci = detail::bootstrap_ci95(data, read, {}, groups, options.bootstrap_resamples, options.seed,
                                         [&](const detail::Values& v, std::vector<double>& out) {
                                           out.clear();
                                           for (const auto& p : plans) out.push_back(detail::tiss0_from(p, v));
                                         });
  const detail::Values med = detail::median_values(data);
  std::vector<Tiss0Fit> rows;
  for (std::size_t r = 0; r < plans.size(); ++r) {
    rows.push_back(detail::tiss0_row(data, plans[r], drain_rate_bps, med));
    detail::set_tiss0_ci95(rows.back(), plans[r], ci[r]);
  }
  return rows;
}

}  // namespace xs::fit
