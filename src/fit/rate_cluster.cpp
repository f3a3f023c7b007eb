// xstage fit layer: picks the zero-gap points that share the drain branch's V/T_period = R (eq. 1).
// Points off that branch fall on known sides of it: an issue-limited point has V/T = V/T_iss^0 < R (per-K
// constant, since T_iss^0 follows B), and a point still filling X-Stage, or partly absorbed by L2, has a
// period shorter than V/R, so V/T > R. Among points that issue cannot explain, the drain branch is the
// largest cluster agreeing on V/T (a pair of slow outliers cannot outvote many consistent points); ties go
// to the lower rate. With no issue-time reference at all it is the cluster that spans the most K.
#include <algorithm>
#include <cmath>
#include <set>

#include "fit/stages.hpp"

namespace xs::fit::detail {
namespace {

double rate_of(const Dataset& data, int i, const std::vector<double>& period_s) {
  return data.obs[i].volume_bytes / period_s[i];
}

std::vector<int> window_from(const Dataset& data, const std::vector<int>& sorted, const std::vector<double>& period_s,
                             std::size_t start, double tolerance) {
  std::vector<int> out;
  const double lo = rate_of(data, sorted[start], period_s);
  for (std::size_t j = start; j < sorted.size() && rate_of(data, sorted[j], period_s) <= lo * (1 + 2 * tolerance); ++j)
    out.push_back(sorted[j]);
  return out;
}

// Re-centres a cluster on its own fit: keep the candidates within +-tolerance of R_hat, until stable.
std::vector<int> refine(const Dataset& data, const std::vector<int>& candidates, const std::vector<double>& period_s,
                        double tolerance, std::vector<int> cluster) {
  for (int iter = 0; iter < 20; ++iter) {
    const double rate = fit_through_origin(data, cluster, period_s);
    std::vector<int> next;
    for (int i : candidates)
      if (std::abs(rate_of(data, i, period_s) / rate - 1) <= tolerance) next.push_back(i);
    std::sort(next.begin(), next.end());
    if (next.empty() || next == cluster) break;
    cluster = std::move(next);
  }
  return cluster;
}

std::vector<int> sorted_by_rate(const Dataset& data, std::vector<int> idx, const std::vector<double>& period_s) {
  std::sort(idx.begin(), idx.end(),
            [&](int a, int b) { return rate_of(data, a, period_s) < rate_of(data, b, period_s); });
  return idx;
}

}  // namespace

double fit_through_origin(const Dataset& data, const std::vector<int>& used, const std::vector<double>& period_s,
                          const std::vector<int>& count) {
  // Relative least squares: minimise sum ((T - V/R)/T)^2. With x = V/T and s = 1/R this is
  // sum (1 - s x)^2, so s = sum x / sum x^2 and R = sum x^2 / sum x.
  double sx = 0, sxx = 0;
  for (int i : used) {
    const double x = rate_of(data, i, period_s);
    const double w = count.empty() ? 1.0 : count[i];
    sx += w * x;
    sxx += w * x * x;
  }
  return sx > 0 ? sxx / sx : 0.0;
}

std::vector<int> largest_rate_cluster(const Dataset& data, const std::vector<int>& candidates,
                                      const std::vector<double>& period_s, double tolerance) {
  if (candidates.empty()) return {};
  const std::vector<int> sorted = sorted_by_rate(data, candidates, period_s);
  // Windows start at each rate, lowest first; a later window must be strictly larger to win.
  std::vector<int> best;
  for (std::size_t s = 0; s < sorted.size(); ++s) {
    std::vector<int> w = window_from(data, sorted, period_s, s, tolerance);
    if (w.size() > best.size()) best = std::move(w);
  }
  std::sort(best.begin(), best.end());
  return refine(data, candidates, period_s, tolerance, std::move(best));
}

std::vector<int> widest_k_rate_cluster(const Dataset& data, const std::vector<int>& candidates,
                                       const std::vector<double>& period_s, double tolerance) {
  if (candidates.empty()) return {};
  const std::vector<int> sorted = sorted_by_rate(data, candidates, period_s);
  std::vector<int> best;
  std::pair<std::size_t, std::size_t> best_score{0, 0};  // (distinct K, points)
  for (std::size_t s = 0; s < sorted.size(); ++s) {
    std::vector<int> w = window_from(data, sorted, period_s, s, tolerance);
    std::set<int> ks;
    for (int i : w) ks.insert(data.obs[i].num_producers);
    const std::pair<std::size_t, std::size_t> score{ks.size(), w.size()};
    if (score > best_score) {
      best_score = score;
      best = std::move(w);
    }
  }
  std::sort(best.begin(), best.end());
  return refine(data, candidates, period_s, tolerance, std::move(best));
}

}  // namespace xs::fit::detail
