// xstage fit layer, internal: the point bootstrap behind every 95% interval.
// Scheme ("points+repetitions"): each replicate (a) redraws, within each stage's group of used points
// (R's drain cluster, each T_iss^0 row's plateau points, each Q(K)'s drain branch), as many points as the
// group has, with replacement, so the scatter between points and the model's misfit widen the interval;
// and (b) redraws every used point's per-repetition samples and takes their median, so repetition noise
// does too. Point selection (which points are drain-dominated, on the plateau, above the knee) stays as
// decided from the medians. Percentile interval [2.5%, 97.5%]; seeded, one stream per replicate. An
// estimate whose replicates never vary (one point with one repetition, zero resamples) gets no interval
// (null, with a note "no interval: ..."); one resting on a single point with several repetitions keeps
// its repetition interval, noted as such (there is no between-point scatter to include).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "xs/fit/stages.hpp"

namespace xs::fit::detail {

struct Interval {
  double lo = 0, hi = 0;
};

// Fills `out` with one value per parameter from one set of point values.
using Estimator = std::function<void(const Values& values, std::vector<double>& out)>;

// `issue_obs` / `period_obs`: the obs whose T_iss / T_period the estimator reads (only those are redrawn;
// the others keep their medians). `groups`: disjoint sets of obs resampled as cases (count[obs]). With
// resamples <= 0 every interval collapses to the median estimate.
std::vector<Interval> bootstrap_ci95(const Dataset& data, const std::vector<int>& issue_obs,
                                     const std::vector<int>& period_obs, const std::vector<std::vector<int>>& groups,
                                     int resamples, std::uint64_t seed, const Estimator& estimate);

// Writes `iv` into `e`, or no interval (NaN, a note "no interval: ...") when it has zero width; notes an
// interval that rests on a single point's repetitions.
void set_ci95(Estimate& e, const Interval& iv, std::size_t num_points);
// The percentile interval widened about `value` for num_points resampled points (set_ci95's correction);
// unchanged for fewer than 2 points or a value outside it.
Interval expand_ci95(const Interval& iv, double value, std::size_t num_points);
void clear_ci95(Estimate& e, const std::string& why);

}  // namespace xs::fit::detail
