// xstage fit tests: the repetition bootstrap is seeded and reproducible, collapses on noiseless data and
// widens with repetition noise.
#include <gtest/gtest.h>

#include "fit/fit.hpp"
#include "fit_helpers.hpp"

namespace xs::fit {
namespace {

using namespace xs::fit::testing;

std::vector<PointRecord> sweep(double noise) {
  sim::SimParams params;
  params.noise = noise;
  return simulate(params, calibration_specs(SweepShape{}, params.drain_rate_bps));
}

TEST(FitBootstrap, NoiselessDataGiveZeroWidthIntervals) {
  const CalibrationFit fit = fit_calibration(sweep(0));
  EXPECT_DOUBLE_EQ(fit.drain.drain_rate_bps.ci95_lo, fit.drain.drain_rate_bps.value);
  EXPECT_DOUBLE_EQ(fit.drain.drain_rate_bps.ci95_hi, fit.drain.drain_rate_bps.value);
  for (const auto& q : fit.capacity) EXPECT_DOUBLE_EQ(q.capacity_bytes.ci95_hi, q.capacity_bytes.ci95_lo);
}

TEST(FitBootstrap, SeededAndReproducible) {
  const auto points = sweep(0.02);
  FitOptions options;
  options.bootstrap_resamples = 200;
  const CalibrationFit a = fit_calibration(points, options), b = fit_calibration(points, options);
  EXPECT_EQ(a.to_json().dump(), b.to_json().dump());
  options.seed += 1;
  const CalibrationFit c = fit_calibration(points, options);
  EXPECT_DOUBLE_EQ(a.drain.drain_rate_bps.value, c.drain.drain_rate_bps.value);  // the estimate itself
  EXPECT_NE(a.drain.drain_rate_bps.ci95_lo, c.drain.drain_rate_bps.ci95_lo);
}

TEST(FitBootstrap, NoiseWidensTheIntervals) {
  const CalibrationFit fit = fit_calibration(sweep(0.02));
  const Estimate& r = fit.drain.drain_rate_bps;
  EXPECT_LT(r.ci95_lo, r.ci95_hi);
  // Each point's median of 5 repetitions moves by ~1% of R at 2% noise; 15 drain-dominated points
  // average it down, so the interval is a fraction of a percent, not zero and not several percent.
  EXPECT_GT((r.ci95_hi - r.ci95_lo) / r.value, 1e-4);
  EXPECT_LT((r.ci95_hi - r.ci95_lo) / r.value, 0.03);
  for (const auto& q : fit.capacity) {
    if (q.bound == "fit") {
      EXPECT_LT(q.capacity_bytes.ci95_lo, q.capacity_bytes.ci95_hi);
    }
  }
}

TEST(FitBootstrap, ZeroResamplesCollapseToTheEstimate) {
  FitOptions options;
  options.bootstrap_resamples = 0;
  const CalibrationFit fit = fit_calibration(sweep(0.02), options);
  EXPECT_EQ(fit.drain.drain_rate_bps.ci95_lo, fit.drain.drain_rate_bps.value);
  for (const auto& row : fit.tiss0) EXPECT_EQ(row.issue_time_s.ci95_hi, row.issue_time_s.value);
}

}  // namespace
}  // namespace xs::fit
