// xstage fit layer, internal: the repetition bootstrap behind every 95% interval.
// Scheme: each replicate redraws, with replacement, every used point's per-repetition samples (as many as
// it has) and takes their median as that point's value; the point set and each stage's plan (which points
// are drain-dominated, on the plateau, above the knee) stay as decided from the medians. So the intervals
// cover measurement noise between repetitions, not the choice of points or model misfit. Percentile
// interval [2.5%, 97.5%] over the replicates; seeded and order-independent (one stream per replicate).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "fit/stages.hpp"

namespace xs::fit::detail {

struct Interval {
  double lo = 0, hi = 0;
};

// Fills `out` with one value per parameter from one set of point values.
using Estimator = std::function<void(const Values& values, std::vector<double>& out)>;

// `issue_obs` / `period_obs`: the obs whose T_iss / T_period the estimator reads (only those are redrawn;
// the others keep their medians). With resamples <= 0 every interval collapses to the median estimate.
std::vector<Interval> bootstrap_ci95(const Dataset& data, const std::vector<int>& issue_obs,
                                     const std::vector<int>& period_obs, int resamples, std::uint64_t seed,
                                     const Estimator& estimate);

}  // namespace xs::fit::detail
