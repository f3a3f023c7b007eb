// tests/fit: mutation tests on fitted data (issue 27 item 6, the fit side). A mutated dataset must turn each
// fit result into a measurably different value (outside the unmutated fit's 95% interval) or "not
// identified": T_iss^0 x10, R x0.5 and a shifted Q on the truth generator, and T_iss^0 x10 and R x0.5 (all
// times x2) on the committed H200 host calibration's own points. Each test fails if the fitter ignored the
// change (e.g. a table lookup that kept the old row, a cluster that kept the old rate).
#include <gtest/gtest.h>

#include <string>

#include "xs/fit/fit.hpp"
#include "xs/report/result_file.hpp"
#include "truth_generator.hpp"

namespace xs::fit {
namespace {

using namespace xs::fit::truth;

CalibrationFit fit_truth(const TruthParams& p, std::uint64_t seed = 7) {
  TruthGenerator gen(p, Noise{0.01, 0.02}, Breakage{}, seed);
  FitOptions options;
  options.bootstrap_resamples = 200;
  return fit_calibration(gen.sweep(TruthSweep{}), options);
}

const Tiss0Fit* row(const CalibrationFit& f, int k, std::uint64_t b) {
  for (const auto& r : f.tiss0)
    if (r.num_producers == k && r.bytes_per_producer == b) return &r;
  return nullptr;
}

// The mutated estimate is outside the original's interval, or the mutated fit says it cannot support it.
void expect_moved(const Estimate& original, const Estimate& mutated, const std::string& what) {
  ASSERT_TRUE(original.constrained && original.has_ci95()) << what << ": the unmutated fit must identify it";
  if (!mutated.constrained) return;  // "not identified" or a bound: the fit did not carry the old value over
  EXPECT_TRUE(mutated.value < original.ci95_lo || mutated.value > original.ci95_hi)
      << what << ": " << mutated.value << " inside the unmutated interval [" << original.ci95_lo << ", "
      << original.ci95_hi << "]";
}

TEST(FitMutation, Tiss0TimesTen) {
  TruthParams p;
  const CalibrationFit base = fit_truth(p);
  p.tiss0_fixed_s *= 10;
  p.rate_per_producer_bps /= 10;
  const CalibrationFit mutated = fit_truth(p);
  for (auto [k, b] : {std::pair(132, 32 * kKiB), std::pair(33, 16 * kKiB)}) {
    const Tiss0Fit *a = row(base, k, b), *m = row(mutated, k, b);
    ASSERT_TRUE(a && m) << "K=" << k << " B=" << b;
    expect_moved(a->issue_time_s, m->issue_time_s, "T_iss^0 K=" + std::to_string(k));
    if (m->issue_time_s.constrained) {
      EXPECT_NEAR(m->issue_time_s.value / a->issue_time_s.value, 10, 1.5);
    }
  }
}

TEST(FitMutation, DrainRateHalved) {
  TruthParams p;
  const CalibrationFit base = fit_truth(p);
  p.drain_rate_bps *= 0.5;
  const CalibrationFit mutated = fit_truth(p);
  expect_moved(base.drain.drain_rate_bps, mutated.drain.drain_rate_bps, "R");
  EXPECT_NEAR(mutated.drain.drain_rate_bps.value / base.drain.drain_rate_bps.value, 0.5, 0.03);
}

TEST(FitMutation, CapacityShifted) {
  TruthParams p;
  const CalibrationFit base = fit_truth(p);
  p.capacity_max_bytes *= 1.4;
  const CalibrationFit mutated = fit_truth(p);
  int compared = 0;
  for (const CapacityFit& a : base.capacity)
    for (const CapacityFit& m : mutated.capacity)
      if (a.num_producers == m.num_producers && a.capacity_bytes.constrained) {
        expect_moved(a.capacity_bytes, m.capacity_bytes, "Q(K=" + std::to_string(a.num_producers) + ")");
        ++compared;
      }
  EXPECT_GE(compared, 1);
}

// The committed H200 host calibration: its own points, mutated.
std::vector<PointRecord> committed_points() {
  return report::read_result_file(std::string(XS_TEST_DATA_DIR) + "/../../results/h200/calibration/calibration-host.json")
      .points;
}

void scale(Summary& s, double factor) {
  for (double& x : s.samples) x *= factor;
  s = summarize(s.samples);
}

CalibrationFit fit_points(const std::vector<PointRecord>& points) {
  FitOptions options;
  options.bootstrap_resamples = 200;
  return fit_calibration(points, options);
}

TEST(FitMutation, CommittedHostCalibrationAllTimesDoubled) {  // R x 0.5, T_iss^0 x 2, Q unchanged
  std::vector<PointRecord> points = committed_points();
  const CalibrationFit base = fit_points(points);
  for (PointRecord& p : points) {
    scale(p.issue_time_s, 2);
    if (p.issue_time_max_s) scale(*p.issue_time_max_s, 2);
    if (p.spec.suite != Suite::kIsolated) scale(p.period_s, 2);
  }
  const CalibrationFit mutated = fit_points(points);
  expect_moved(base.drain.drain_rate_bps, mutated.drain.drain_rate_bps, "R (H200 host, all times x2)");
  EXPECT_NEAR(mutated.drain.drain_rate_bps.value / base.drain.drain_rate_bps.value, 0.5, 0.01);
}

TEST(FitMutation, CommittedHostCalibrationIsolatedFloorTimesTen) {
  std::vector<PointRecord> points = committed_points();
  const CalibrationFit base = fit_points(points);
  for (PointRecord& p : points)
    if (p.spec.suite == Suite::kIsolated) {
      scale(p.issue_time_s, 10);
      if (p.issue_time_max_s) scale(*p.issue_time_max_s, 10);
    }
  const CalibrationFit mutated = fit_points(points);
  int compared = 0;
  for (const Tiss0Fit& a : base.tiss0)
    if (a.source == "isolated_floor" && a.issue_time_s.constrained && a.issue_time_s.has_ci95())
      if (const Tiss0Fit* m = row(mutated, a.num_producers, a.bytes_per_producer)) {
        expect_moved(a.issue_time_s, m->issue_time_s, "T_iss^0 K=" + std::to_string(a.num_producers) +
                                                          " B=" + std::to_string(a.bytes_per_producer));
        ++compared;
      }
  EXPECT_GE(compared, 5);
}

}  // namespace
}  // namespace xs::fit
