// xstage sim tests: the simulator reproduces the Burst-Gap regimes of the paper's section 3 from its
// mechanics (issue rate, drain R, capacity Q): eq. 1 at zero gap, T_iss^0 at large gaps, eq. 3 over a
// gap sweep, the isolated-burst knee of eq. 7, and a gap-insensitive local-memory control.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "xs/backends/sim/simulator.hpp"
#include "sim_test_points.hpp"

namespace xs::sim {
namespace {

using namespace test_points;
constexpr std::uint64_t kKiB = 1024;

struct Split { int num_producers; std::uint64_t bytes_per_producer; int num_bursts; int warmup_bursts; };

TEST(SimRegimes, ZeroGapPeriodIsDrainHorizon) {
  // K r > R for all of these, so zero gap drives the path to the drain-limited plateau (eq. 1). The
  // 132 x 4 KiB point needs ~9 bursts to fill Q, hence its longer warm-up.
  const SimParams params;
  for (const Split& split : {Split{33, 32 * kKiB, 32, 8}, Split{66, 64 * kKiB, 32, 8},
                             Split{132, 4 * kKiB, 64, 24}, Split{132, 32 * kKiB, 32, 8},
                             Split{132, 256 * kKiB, 32, 8}}) {
    PointSpec spec = periodic(split.num_producers, split.bytes_per_producer, 0);
    spec.num_bursts = split.num_bursts;
    spec.warmup_bursts = split.warmup_bursts;
    const PointRecord r = simulate_point(params, spec);
    SCOPED_TRACE(::testing::Message() << "K=" << spec.num_producers << " B=" << spec.bytes_per_producer);
    EXPECT_NEAR(rel_err(r.period_s.median, drain_horizon_s(params, spec)), 0.0, 0.02);
    // In the drain-limited regime the whole period is issue: T_iss = V/R - 0.
    EXPECT_NEAR(rel_err(r.issue_time_s.median, drain_horizon_s(params, spec)), 0.0, 0.02);
  }
}

TEST(SimRegimes, ZeroGapPeriodFollowsPlantedDrainRate) {
  SimParams params;
  params.drain_rate_bps = 300e9;
  const PointSpec spec = periodic(66, 64 * kKiB, 0);
  EXPECT_NEAR(rel_err(simulate_point(params, spec).period_s.median, drain_horizon_s(params, spec)), 0.0, 0.02);
}

TEST(SimRegimes, ZeroGapBelowDrainRateStaysIssueLimited) {
  // 8 producers inject 8 r ~ 345 GB/s < R: nothing accumulates, so T_period = T_iss^0 > V/R (eq. 2).
  const SimParams params;
  const PointSpec spec = periodic(8, 32 * kKiB, 0);
  const PointRecord r = simulate_point(params, spec);
  EXPECT_NEAR(rel_err(r.period_s.median, tiss0_s(params, spec.bytes_per_producer)), 0.0, 0.02);
  EXPECT_GT(r.period_s.median, 1.5 * drain_horizon_s(params, spec));
}

TEST(SimRegimes, LargeGapIssueTimeIsBackpressureFree) {
  SimParams params;
  params.issue_overhead_s = 0.1e-6;
  for (int k : {1, 33, 132}) {
    for (std::uint64_t b : {4 * kKiB, 16 * kKiB, 32 * kKiB}) {  // below the isolated knee for every K here
      PointSpec spec = periodic(k, b, 0);
      spec.gap_s = 3 * drain_horizon_s(params, spec) + 5e-6;
      const PointRecord r = simulate_point(params, spec);
      SCOPED_TRACE(::testing::Message() << "K=" << k << " B=" << b);
      EXPECT_NEAR(rel_err(r.issue_time_s.median, tiss0_s(params, b)), 0.0, 0.02);
      EXPECT_NEAR(rel_err(r.period_s.median, tiss0_s(params, b) + spec.gap_s), 0.0, 0.02);
    }
  }
}

TEST(SimRegimes, GapSweepFollowsEq3AwayFromTheCorner) {
  const SimParams params;
  for (const Split& split : {Split{132, 32 * kKiB, 32, 8}, Split{66, 32 * kKiB, 32, 8}}) {
    PointSpec spec = periodic(split.num_producers, split.bytes_per_producer, 0);
    const double corner_gap_s = drain_horizon_s(params, spec) - tiss0_s(params, spec.bytes_per_producer);  // G*
    int num_checked = 0;
    for (double gap_s = 0; gap_s <= 2.5 * drain_horizon_s(params, spec); gap_s += 0.25e-6) {
      if (std::abs(gap_s - corner_gap_s) < 0.3e-6) continue;
      spec.gap_s = gap_s;
      const PointRecord r = simulate_point(params, spec);
      SCOPED_TRACE(::testing::Message() << "K=" << spec.num_producers << " G=" << gap_s);
      EXPECT_NEAR(rel_err(r.issue_time_s.median, eq3_issue_s(params, spec)), 0.0, 0.03);
      EXPECT_NEAR(rel_err(r.period_s.median, eq2_period_s(params, spec)), 0.0, 0.03);
      ++num_checked;
    }
    EXPECT_GT(num_checked, 10);
  }
}

TEST(SimRegimes, IsolatedBurstShowsCapacityKnee) {
  // K = 132: the knee of eq. 6 sits at B = Q / (K - R/r) ~ 38 KB per producer.
  const SimParams params;
  const double capacity_bytes = capacity_for(params, 132);
  for (std::uint64_t b = 1 * kKiB; b <= 1024 * kKiB; b *= 2) {
    const PointSpec spec = isolated(132, b);
    const PointRecord r = simulate_point(params, spec);
    SCOPED_TRACE(::testing::Message() << "B=" << b);
    if (b <= 32 * kKiB) {
      EXPECT_NEAR(rel_err(r.issue_time_s.median, tiss0_s(params, b)), 0.0, 0.01);
    } else {
      const double drain_branch_s = (static_cast<double>(spec.volume_bytes()) - capacity_bytes) / params.drain_rate_bps;
      EXPECT_GT(drain_branch_s, 2 * tiss0_s(params, b));  // the knee really separates the branches here
      EXPECT_NEAR(rel_err(r.issue_time_s.median, drain_branch_s), 0.0, 0.02);
    }
    EXPECT_TRUE(r.period_s.samples.empty());
  }
}

TEST(SimRegimes, EveryIsolatedBurstStartsIntoAnEmptyPath) {
  // Back to back, 132 x 256 KiB bursts would settle at V/R; isolated ones each pay only (V - Q)/R.
  const SimParams params;
  PointSpec spec = isolated(132, 256 * kKiB);
  spec.num_bursts = 8;
  spec.warmup_bursts = 2;
  const PointRecord r = simulate_point(params, spec);
  EXPECT_NEAR(rel_err(r.issue_time_s.median, eq7_isolated_s(params, spec, capacity_for(params, 132))), 0.0, 0.02);
  EXPECT_LT(r.issue_time_s.median, 0.95 * drain_horizon_s(params, spec));
}

TEST(SimRegimes, IsolatedKneeMovesWithCapacityPerProducer) {
  SimParams params;
  params.capacity_per_producer_bytes = 16 * kKiB;  // Q(33) = 528 KiB instead of 4.25 MiB
  const PointSpec spec = isolated(33, 256 * kKiB);
  const double capacity_bytes = 33.0 * 16 * kKiB;
  ASSERT_DOUBLE_EQ(capacity_for(params, 33), capacity_bytes);
  const PointRecord r = simulate_point(params, spec);
  EXPECT_NEAR(rel_err(r.issue_time_s.median, eq7_isolated_s(params, spec, capacity_bytes)), 0.0, 0.02);
  // With the default, larger Q the same burst stays on the backpressure-free branch.
  EXPECT_NEAR(rel_err(simulate_point(SimParams{}, spec).issue_time_s.median, tiss0_s(params, 256 * kKiB)), 0.0, 0.01);
}

TEST(SimRegimes, LocalControlIsGapInsensitive) {
  // 132 x 512 KiB would backpressure heavily on the remote path; local memory has no path limits.
  const SimParams params;
  for (std::uint64_t b : {32 * kKiB, 512 * kKiB}) {
    for (double gap_s : {0.0, 1e-6, 5e-6, 50e-6}) {
      PointSpec spec = periodic(132, b, gap_s);
      spec.suite = Suite::kLocalControl;
      spec.target = "local";
      const PointRecord r = simulate_point(params, spec);
      SCOPED_TRACE(::testing::Message() << "B=" << b << " G=" << gap_s);
      EXPECT_NEAR(rel_err(r.issue_time_s.median, tiss0_s(params, b)), 0.0, 1e-6);
      EXPECT_NEAR(rel_err(r.period_s.median, tiss0_s(params, b) + gap_s), 0.0, 1e-6);
    }
  }
  // The remote path at the same point is far from T_iss^0, so the control separates the two causes.
  EXPECT_GT(simulate_point(params, periodic(132, 32 * kKiB, 0)).issue_time_s.median,
            4 * tiss0_s(params, 32 * kKiB));
}

TEST(SimRegimes, LocalTargetOnPeriodicSuiteIsUnlimited) {
  const SimParams params;
  PointSpec spec = periodic(132, 512 * kKiB, 0);
  spec.target = "local";
  EXPECT_NEAR(rel_err(simulate_point(params, spec).issue_time_s.median, tiss0_s(params, 512 * kKiB)), 0.0, 1e-6);
}

TEST(SimRegimes, RandomPointsRespectTheBurstGapBounds) {
  // Noiseless, any platform and point, with o = issue_overhead_s spent before a producer's first store:
  //   isolated: T_iss = o + max(B/r, (V - Q)/R) exactly (eq. 7 with the overhead in front; Q in whole
  //             512 B requests);
  //   periodic: T_iss^0 <= T_iss <= o + max(B/r, V/R) (a burst never waits for more than a full path
  //             plus itself) and T_period = T_iss + G.
  std::mt19937_64 rng(20260725);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto log_uniform = [&](double lo, double hi) { return lo * std::pow(hi / lo, unit(rng)); };
  for (int i = 0; i < 300; ++i) {
    SimParams params;
    params.drain_rate_bps = log_uniform(50e9, 2e12);
    params.capacity_bytes = std::round(log_uniform(64e3, 64e6));
    params.tiss0_ref_s = log_uniform(0.1e-6, 5e-6);
    params.issue_overhead_s = params.tiss0_ref_s * 0.5 * unit(rng);
    params.completion_latency_s = log_uniform(1e-9, 5e-6);
    PointSpec spec = periodic(1 + static_cast<int>(log_uniform(1, 200)),
                              16 * static_cast<std::uint64_t>(log_uniform(1, 65536)), 0);
    spec.gap_s = unit(rng) < 0.2 ? 0.0 : log_uniform(1e-9, 3 * drain_horizon_s(params, spec));
    spec.completion = true;
    if (i % 3 == 0) spec = isolated(spec.num_producers, spec.bytes_per_producer), spec.completion = true;
    const PointRecord r = simulate_point(params, spec);
    const double overhead_s = params.issue_overhead_s;
    const double inject_s = tiss0_s(params, spec.bytes_per_producer) - overhead_s;  // B / r
    SCOPED_TRACE(::testing::Message() << "case " << i << " K=" << spec.num_producers << " B=" << spec.bytes_per_producer
                                      << " G=" << spec.gap_s << " Q=" << params.capacity_bytes);
    EXPECT_GE(r.completion_s->median, r.issue_time_s.median + params.completion_latency_s * (1 - 1e-9));
    if (spec.suite == Suite::kIsolated) {
      const double capacity_bytes = std::floor(params.capacity_bytes / 512) * 512;
      const double fill_s = (static_cast<double>(spec.volume_bytes()) - capacity_bytes) / params.drain_rate_bps;
      EXPECT_NEAR(rel_err(r.issue_time_s.median, overhead_s + std::max(inject_s, fill_s)), 0.0, 1e-6);
    } else {
      EXPECT_GE(r.issue_time_s.median, (overhead_s + inject_s) * (1 - 1e-9));
      EXPECT_LE(r.issue_time_s.median, (overhead_s + std::max(inject_s, drain_horizon_s(params, spec))) * (1 + 1e-9));
      EXPECT_NEAR(rel_err(r.period_s.median, r.issue_time_s.median + spec.gap_s), 0.0, 1e-9);
    }
  }
}

}  // namespace
}  // namespace xs::sim
