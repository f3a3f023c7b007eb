// xstage common layer: order statistics used by every summary (median, p10/p90) and by the fitter.
#pragma once
#include <vector>

namespace xs {

// Linear-interpolated quantile (q in [0,1]) of a copy of `values`. Empty input returns NaN.
double quantile(std::vector<double> values, double q);
inline double median(const std::vector<double>& values) { return quantile(values, 0.5); }

// Summary of repeated samples of one quantity; samples are kept so fits can be redone offline. The one summary type
// of every layer: the applications' per-round times (seconds), paired differences and ratios are Summaries too.
struct Summary {
  double median = 0;
  double p10 = 0;
  double p90 = 0;
  double min = 0;
  double max = 0;
  std::vector<double> samples;
};
Summary summarize(std::vector<double> samples);
// Whether s holds a measurement: samples kept, or a median/p10/p90 written (a file's summaries may keep no samples).
inline bool has_values(const Summary& s) {
  return !s.samples.empty() || s.median != 0 || s.p10 != 0 || s.p90 != 0;
}

}  // namespace xs
