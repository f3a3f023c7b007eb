// xstage fit layer: picks the zero-gap points that share the drain branch's V/T_period = R (eq. 1).
// Points off that branch fall on known sides of it: an issue-limited point has V/T = V/T_iss^0 < R (per-K
// constant, since T_iss^0 follows B), and a point still filling X-Stage, or partly absorbed by L2, has a
// period shorter than V/R, so V/T > R. Among points that issue cannot explain, the drain branch is the
// largest cluster agreeing on V/T (a pair of slow outliers cannot outvote many consistent points); ties go
// to the lower rate. With no issue-time reference at all it is the cluster that spans the most K.
#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <utility>

#include "xs/common/stats.hpp"
#include "xs/fit/stages.hpp"

namespace xs::fit::detail {
namespace {

double rate_of(const Dataset& data, int i, const std::vector<double>& period_s) {
  return data.obs[i].volume_bytes / period_s[i];
}

std::vector<int> window_from(const Dataset& data, const std::vector<int>& sorted, const std::vector<double>& period_s,
                             std::size_t start, double tolerance) {
  std::vector<int> out;
  const double lo = rate_of(data, sorted[start], period_s);
  const double hi = lo * (1 + tolerance) * (1 + tolerance);  // +-tolerance about its centre, in log V/T
  for (std::size_t j = start; j < sorted.size() && rate_of(data, sorted[j], period_s) <= hi; ++j)
    out.push_back(sorted[j]);
  return out;
}

// Re-centres a cluster on its own fit: keep the candidates within a factor 1 + tolerance of R_hat (either
// side, as the log-space fit and the multiplicative offsets are symmetric in log V/T), until stable.
std::vector<int> refine(const Dataset& data, const std::vector<int>& candidates, const std::vector<double>& period_s,
                        double tolerance, std::vector<int> cluster) {
  for (int iter = 0; iter < 20; ++iter) {
    const double rate = fit_log_rate(data, cluster, period_s);
    std::vector<int> next;
    for (int i : candidates)
      if (std::abs(std::log(rate_of(data, i, period_s) / rate)) <= std::log1p(tolerance)) next.push_back(i);
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

double fit_log_rate(const Dataset& data, const std::vector<int>& used, const std::vector<double>& period_s,
                    const std::vector<int>& count) {
  // Eq. 1 in log space: least squares of ln T_period = ln V - ln R, so ln R = mean ln(V/T_period). The
  // offsets between launches are multiplicative (a configuration runs a few % fast or slow), and this is
  // unbiased for the median rate under them. The relative least squares it replaces, R = sum x^2 / sum x
  // (x = V/T), weights fast points up: E = R exp(1.5 sigma^2) under lognormal offsets sigma, +1.4% at
  // sigma = 10% (truth_coverage_test, 200 datasets).
  double sum_log = 0, sum_w = 0;
  for (int i : used) {
    const double w = count.empty() ? 1.0 : count[i];
    if (w == 0) continue;
    sum_log += w * std::log(rate_of(data, i, period_s));
    sum_w += w;
  }
  return sum_w > 0 ? std::exp(sum_log / sum_w) : 0.0;
}

double clipped_log_scatter(const Dataset& data, const std::vector<int>& candidates, const std::vector<double>& period_s,
                           double centre_rate, double guard) {
  // Iterated sigma clipping at kClipSigmas (the usual 3 sigma). Start: the centre ln(centre_rate) (the first,
  // tight cluster's rate: the mode, so that another group of points cannot set the centre) and the standard
  // deviation of the candidates within the guard about it (the guard keeps other groups out of the start).
  // Then over all candidates: keep those within 3 sigma of the centre, take the kept points' median and
  // standard deviation, until the kept set is stable. A group further than 3 sigma from the branch stays out.
  // The standard deviation, not a MAD, is the scale: a MAD of ~10 points varies by about 35% from dataset to
  // dataset, and a chance clump of 4 or 5 points at 10% offsets gives a MAD of 2% that no clipping regrows.
  constexpr double kClipSigmas = 3.0;
  std::vector<double> log_rate;
  for (int i : candidates) log_rate.push_back(std::log(rate_of(data, i, period_s)));
  const auto median_and_sd = [](const std::vector<double>& x) {
    double mean = 0, ss = 0;
    for (double v : x) mean += v / static_cast<double>(x.size());
    for (double v : x) ss += (v - mean) * (v - mean);
    return std::pair(median(x), std::sqrt(ss / static_cast<double>(x.size() - 1)));
  };
  std::vector<double> kept;
  for (double x : log_rate)
    if (std::abs(x - std::log(centre_rate)) <= guard) kept.push_back(x);
  if (kept.size() < 3) return 0.0;
  auto [centre, sigma] = median_and_sd(kept);
  std::vector<double> last = kept;
  for (int iter = 0; iter < 50 && sigma > 0; ++iter) {
    kept.clear();
    for (double x : log_rate)
      if (std::abs(x - centre) <= kClipSigmas * sigma) kept.push_back(x);
    if (kept.size() < 3 || kept == last) break;
    std::tie(centre, sigma) = median_and_sd(kept);
    last = kept;
  }
  return sigma;
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
