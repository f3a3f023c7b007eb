// xstage gate layer: Mann-Whitney U test (see mann_whitney.hpp). Ranks with mid-ranks for ties; the exact
// null distribution by the usual counting recursion over (n1, n2).
#include "xs/gate/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace xs::gate {

namespace {

// Number of arrangements of m values from the first sample and n from the second with U = u, for all u
// (0..m*n), as doubles (C(100, 50) ~ 1e29 fits). f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u).
std::vector<double> u_counts(std::size_t m, std::size_t n) {
  // table[j][u] holds f(i, j, u) for the current i.
  std::vector<std::vector<double>> table(n + 1);
  for (std::size_t j = 0; j <= n; ++j) table[j] = {1.0};  // f(0, j, 0) = 1
  for (std::size_t i = 1; i <= m; ++i) {
    std::vector<std::vector<double>> next(n + 1);
    next[0] = {1.0};  // f(i, 0, 0) = 1
    for (std::size_t j = 1; j <= n; ++j) {
      next[j].assign(i * j + 1, 0.0);
      for (std::size_t u = 0; u < next[j].size(); ++u) {
        if (u >= j && u - j < table[j].size()) next[j][u] += table[j][u - j];  // the largest value is from sample 1
        if (u < next[j - 1].size()) next[j][u] += next[j - 1][u];              // ... from sample 2
      }
    }
    table = std::move(next);
  }
  return table[n];
}

double normal_sf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

}  // namespace

double smallest_p_value(std::size_t n1, std::size_t n2) {
  if (n1 == 0 || n2 == 0) return 1.0;
  // 2 / C(n1 + n2, n1) through logs: no overflow for any n.
  const double log_c = std::lgamma(double(n1 + n2) + 1) - std::lgamma(double(n1) + 1) - std::lgamma(double(n2) + 1);
  return std::min(1.0, 2.0 * std::exp(-log_c));
}

UTestResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) throw std::invalid_argument("Mann-Whitney U test needs two non-empty samples");
  std::vector<std::pair<double, int>> all;
  all.reserve(a.size() + b.size());
  for (double v : a) all.emplace_back(v, 0);
  for (double v : b) all.emplace_back(v, 1);
  for (const auto& [v, side] : all) {
    if (!std::isfinite(v)) throw std::invalid_argument("Mann-Whitney U test got a non-finite sample");
  }
  std::sort(all.begin(), all.end());
  const double n1 = double(a.size()), n2 = double(b.size()), n = n1 + n2;
  double rank_sum_a = 0, tie_term = 0;  // tie_term = sum over tie groups of (t^3 - t)
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double mid_rank = (double(i + 1) + double(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k) rank_sum_a += all[k].second == 0 ? mid_rank : 0.0;
    const double t = double(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  UTestResult r;
  r.u = rank_sum_a - n1 * (n1 + 1) / 2.0;
  const double mean = n1 * n2 / 2.0;
  if (tie_term == 0 && a.size() <= kExactMaxSamples && b.size() <= kExactMaxSamples) {
    // Two-sided exact p: twice the tail beyond the observed U on its side of the (symmetric) mean.
    const std::vector<double> counts = u_counts(a.size(), b.size());
    const auto u_tail = static_cast<std::size_t>(std::llround(std::min(r.u, n1 * n2 - r.u)));
    double total = 0, tail = 0;
    for (std::size_t u = 0; u < counts.size(); ++u) {
      total += counts[u];
      if (u <= u_tail) tail += counts[u];
    }
    r.p_value = std::min(1.0, 2.0 * tail / total);
    r.exact = true;
    return r;
  }
  const double variance = n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) {  // every value equal: no evidence of any shift
    r.p_value = 1.0;
    return r;
  }
  const double z = (std::fabs(r.u - mean) - 0.5) / std::sqrt(variance);
  r.p_value = std::min(1.0, 2.0 * normal_sf(std::max(z, 0.0)));
  return r;
}

}  // namespace xs::gate
