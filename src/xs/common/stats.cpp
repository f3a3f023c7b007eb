// xstage common layer: order statistics (see stats.hpp).
#include "xs/common/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace xs {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

Summary summarize(std::vector<double> samples) {
  Summary s;
  if (!samples.empty()) {
    s.median = quantile(samples, 0.5);
    s.p10 = quantile(samples, 0.1);
    s.p90 = quantile(samples, 0.9);
    s.min = *std::min_element(samples.begin(), samples.end());
    s.max = *std::max_element(samples.begin(), samples.end());
  }
  s.samples = std::move(samples);
  return s;
}

}  // namespace xs
