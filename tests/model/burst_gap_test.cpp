// tests/model: properties of the Burst-Gap equations over a grid of (R, T_iss^0, V, G): the floor, the max
// law, the recovery gap, and the design test flipping exactly at its bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "xs/model/burst_gap.hpp"

namespace m = xs::model;

namespace {

struct Case {
  double drain_rate_bps, tiss0_s, volume_bytes;
};

std::vector<Case> grid() {
  std::vector<Case> cases;
  for (double r : {100e9, 717e9, 3e12})
    for (double t0 : {0.1e-6, 0.76e-6, 5e-6})
      for (double v : {4096.0, 1048576.0, 4849664.0, 64e6}) cases.push_back({r, t0, v});
  return cases;
}

std::vector<double> gaps_s(double around_s) {
  std::vector<double> g{0.0, 1e-9, 1e-6, 10e-6, 1e-3};
  for (double f : {0.25, 0.5, 0.999, 1.0, 1.001, 2.0}) g.push_back(f * around_s);
  return g;
}

TEST(BurstGap, IssueNeverFasterThanBackpressureFree) {
  for (const auto& c : grid())
    for (double g : gaps_s(c.volume_bytes / c.drain_rate_bps)) {
      const double t = m::issue_time_s(c.tiss0_s, c.volume_bytes, c.drain_rate_bps, g);
      EXPECT_GE(t, c.tiss0_s);
      EXPECT_GE(m::issue_overhead_s(c.tiss0_s, c.volume_bytes, c.drain_rate_bps, g), 0.0);
      EXPECT_DOUBLE_EQ(t - c.tiss0_s, m::issue_overhead_s(c.tiss0_s, c.volume_bytes, c.drain_rate_bps, g));
    }
}

TEST(BurstGap, PeriodFollowsMaxLawNotSum) {
  for (const auto& c : grid())
    for (double g : gaps_s(c.volume_bytes / c.drain_rate_bps)) {
      const double drain_s = c.volume_bytes / c.drain_rate_bps;
      const double period = m::period_s(c.tiss0_s, c.volume_bytes, c.drain_rate_bps, g);
      EXPECT_DOUBLE_EQ(period, std::max(c.tiss0_s + g, drain_s));
      EXPECT_GE(period, m::drain_period_s(c.volume_bytes, c.drain_rate_bps));  // never beats the drain
      // In the drain-dominated regime (V/R >= T_iss^0) the completion-coupled sum G + V/R bounds it above.
      if (drain_s >= c.tiss0_s) {
        EXPECT_GE(m::completion_coupled_period_s(c.volume_bytes, c.drain_rate_bps, g), period);
      }
    }
}

TEST(BurstGap, RecoveryGapIsWhereIssueReachesFloor) {
  for (const auto& c : grid()) {
    const double g_star = m::recovery_gap_s(c.tiss0_s, c.volume_bytes, c.drain_rate_bps);
    const double drain_s = c.volume_bytes / c.drain_rate_bps;  // V/R - (V/R - T_iss^0) rounds at eps V/R
    EXPECT_NEAR(m::issue_time_s(c.tiss0_s, c.volume_bytes, c.drain_rate_bps, g_star), c.tiss0_s,
                1e-12 * (c.tiss0_s + drain_s));
    EXPECT_EQ(m::issue_overhead_s(c.tiss0_s, c.volume_bytes, c.drain_rate_bps, g_star * 1.001), 0.0);
    if (g_star > 0) {  // V/R > T_iss^0: just short of G*, issue is stretched by exactly the shortfall
      const double short_s = 0.01 * g_star;
      EXPECT_NEAR(m::issue_overhead_s(c.tiss0_s, c.volume_bytes, c.drain_rate_bps, g_star - short_s), short_s,
                  1e-9 * g_star);
    }
  }
}

TEST(BurstGap, DesignTestFlipsAcrossRateBound) {
  for (const auto& c : grid()) {
    const double g_star = m::recovery_gap_s(c.tiss0_s, c.volume_bytes, c.drain_rate_bps);
    if (g_star == 0) continue;            // the rate bound holds at any gap
    const double q = 2 * c.volume_bytes;  // capacity never binds here
    const auto below = m::design_test(c.tiss0_s, c.volume_bytes, c.drain_rate_bps, q, 0.99 * g_star);
    const auto above = m::design_test(c.tiss0_s, c.volume_bytes, c.drain_rate_bps, q, 1.01 * g_star);
    EXPECT_FALSE(below.rate_bound_ok);
    EXPECT_EQ(below.action, m::Action::kReshape);
    EXPECT_TRUE(above.rate_bound_ok);
    EXPECT_EQ(above.action, m::Action::kPiggyback);
    EXPECT_GT(below.injection_rate_bps, c.drain_rate_bps);
  }
}

TEST(BurstGap, DesignTestFlipsAcrossCapacityBound) {
  for (const auto& c : grid()) {
    const double q_peak = m::peak_outstanding_bytes(c.tiss0_s, c.volume_bytes, c.drain_rate_bps);
    if (q_peak == 0) continue;
    const double long_gap_s = 10 * c.volume_bytes / c.drain_rate_bps;
    const auto fits = m::design_test(c.tiss0_s, c.volume_bytes, c.drain_rate_bps, 1.01 * q_peak, long_gap_s);
    const auto over = m::design_test(c.tiss0_s, c.volume_bytes, c.drain_rate_bps, 0.99 * q_peak, long_gap_s);
    EXPECT_TRUE(fits.capacity_bound_ok);
    EXPECT_EQ(fits.action, m::Action::kPiggyback);
    EXPECT_FALSE(over.capacity_bound_ok);
    EXPECT_EQ(over.action, m::Action::kReshape);
    // Eq. 7 agrees with eq. 6: the isolated burst backpressures itself exactly when q_peak > Q.
    EXPECT_EQ(m::isolated_issue_time_s(c.tiss0_s, c.volume_bytes, c.drain_rate_bps, 1.01 * q_peak),
              c.tiss0_s);
    EXPECT_GT(m::isolated_issue_time_s(c.tiss0_s, c.volume_bytes, c.drain_rate_bps, 0.99 * q_peak),
              c.tiss0_s);
  }
}

TEST(BurstGap, InterleavingOffsetsStallOneForOneAndAgreesWithSufficiency) {
  const double r = 717e9, t0 = 0.76e-6, v = 4849664, t_l2 = 2e-6, t_l1 = 1.5e-6;
  const double wave = m::issue_overhead_s(t0, v, r, t_l2);  // eq. 9 at G_wave = T_L2
  ASSERT_GT(wave, 0);
  for (double n1 : {0.0, 0.5, 1.0, 2.0, 3.0, 8.0}) {
    const double n2 = 1.0;
    const double dt_int = m::interleaved_issue_overhead_s(wave, n1, n2, t_l1);
    EXPECT_NEAR(dt_int, std::max(0.0, wave - n1 * t_l1), 1e-15);
    // Eq. 13 reaches zero exactly when eq. 14's rate bound holds (G_wave = T_L2).
    EXPECT_EQ(dt_int == 0.0, m::interleaving_sufficient(v, t0, r, t_l2, t_l1, n1, n2)) << n1;
    EXPECT_NEAR(dt_int, m::issue_overhead_s(t0, v, r, m::interleaved_gap_s(t_l2, n1, n2, t_l1)), 1e-15);
  }
}

TEST(BurstGap, FlashAttentionStallsShrinkWithSequenceLength) {
  const double r = 717e9, t0 = 0.76e-6, v = 148 * m::fa_tile_bytes(128, 128, 2), sigma = 0.79e-6;
  double previous = 1e9;
  for (double seq : {0.0, 128.0, 512.0, 896.0, 1024.0, 8192.0}) {
    const double dt = m::fa_drain_stall_s(v, r, m::qloop_gap_s(seq, 128, sigma), t0);
    EXPECT_LE(dt, previous);
    EXPECT_LE(m::fa_critical_stall_s(dt, 1e-6), dt);
    previous = dt;
  }
  EXPECT_EQ(previous, 0.0);
  // Completion-coupled exposure does not depend on M; only the burst count grows the total.
  const double dt_cc = m::completion_coupled_exposure_s(v, r, 1e-6, 0.5e-6);
  EXPECT_NEAR(dt_cc, v / r + 0.5e-6, 1e-15);
  EXPECT_DOUBLE_EQ(m::total_exposure_s(64, dt_cc), 64 * dt_cc);
  EXPECT_EQ(m::completion_coupled_exposure_s(v, r, 0, 1.0), 0.0);
}

TEST(BurstGap, HidingRatioEndpointsAndKnee) {
  EXPECT_DOUBLE_EQ(m::hiding_ratio(10, 10, 20), 1.0);  // fused = FA alone: fully hidden
  EXPECT_DOUBLE_EQ(m::hiding_ratio(20, 10, 20), 0.0);  // fused = serial: nothing hidden
  EXPECT_DOUBLE_EQ(m::speedup(20, 10), 2.0);
  EXPECT_DOUBLE_EQ(m::lead_knee_rows(128, 132, 1536), 128.0 * 132 / (2 * 1536));
  EXPECT_STREQ(m::action_name(m::Action::kPiggyback), "piggyback");
  EXPECT_STREQ(m::action_name(m::Action::kReshape), "reshape");
}

}  // namespace
