// Tests for attention/fa_timeline on hand-made launches: the SM clock from each CTA's cycles over its global
// span, CTA start/finish spread, the tail idle fraction, Q-loop / epilogue / gap medians per warpgroup, and
// the per-CTA Q-loop speed.
#include "xs/attention/run/fa_timeline.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace xs::attention {
namespace {

namespace ka = xs::kernels::attention;

// One warpgroup's tile at a 1 GHz clock (1 cycle = 1 ns): Q-loop [start, start + qloop), epilogue after it.
// cycles_per_ns scales the cycle counts (2: a 2 GHz clock).
ka::TileRecord tile(std::uint32_t idx, std::uint64_t start_ns, std::uint64_t qloop_ns, std::uint64_t epilogue_ns,
                    std::uint32_t kv = 4, std::uint64_t cycles_per_ns = 1) {
  ka::TileRecord r;
  r.tile_idx = idx;
  r.cta_idx = idx % 2;        // grid 2, the static order
  r.cta_tile_idx = idx / 2;
  r.qloop_start_ns = start_ns;
  r.qloop_start_cycles = 5'000'000 + cycles_per_ns * start_ns;  // another origin: only differences count
  r.qloop_end_cycles = r.qloop_start_cycles + cycles_per_ns * qloop_ns;
  r.store_start_cycles = r.qloop_end_cycles + cycles_per_ns * epilogue_ns / 2;
  r.store_end_cycles = r.qloop_end_cycles + cycles_per_ns * epilogue_ns;
  r.store_end_ns = start_ns + qloop_ns + epilogue_ns;
  r.num_kv_tiles = kv;
  r.written = 1;
  return r;
}

// grid 2, tiles 0..2: CTA 0 runs tiles 0 and 2 back to back, CTA 1 runs tile 1 (starting 1 us late).
std::vector<ka::TileRecord> two_cta_launch(std::uint64_t cycles_per_ns = 1) {
  std::vector<ka::TileRecord> r(6);
  r[0] = r[1] = tile(0, 0, 40'000, 2'000, 4, cycles_per_ns);
  r[2] = r[3] = tile(1, 1'000, 60'000, 2'000, 4, cycles_per_ns);
  r[4] = r[5] = tile(2, 43'000, 40'000, 2'000, 4, cycles_per_ns);
  return r;
}

TEST(LaunchSmClock, CyclesOverEachCtasGlobalSpan) {
  auto r = two_cta_launch();
  EXPECT_NEAR(launch_sm_clock_hz(r.data(), r.size(), 2), 1e9, 1);
  r = two_cta_launch(2);  // twice the cycles in the same ns: 2 GHz
  EXPECT_NEAR(launch_sm_clock_hz(r.data(), r.size(), 2), 2e9, 1);
  EXPECT_NEAR(launch_timeline(r.data(), r.size(), 2, 2e9).qloop_median_s, 40e-6, 1e-12);
  EXPECT_EQ(launch_sm_clock_hz(r.data(), r.size(), 2, 1e9), 0.0);  // no span is long enough
  EXPECT_EQ(launch_sm_clock_hz(r.data(), r.size(), 0), 0.0);
}

TEST(LaunchTimeline, StartFinishIdleAndPerTileParts) {
  const auto r = two_cta_launch();
  const LaunchTimeline tl = launch_timeline(r.data(), r.size(), 2, 1e9);
  EXPECT_EQ(tl.num_ctas, 2);
  EXPECT_NEAR(tl.span_s, 85e-6, 1e-12);  // CTA 0 ends at 43 + 42 us
  EXPECT_NEAR(tl.cta_start_s.max, 1e-6, 1e-12);
  EXPECT_NEAR(tl.cta_finish_s.min, 63e-6, 1e-12);
  EXPECT_NEAR(tl.cta_finish_s.max, 85e-6, 1e-12);
  EXPECT_NEAR(tl.tail_idle_fraction, (85.0 - 63.0) / (2 * 85.0), 1e-9);
  EXPECT_EQ(tl.tiles_per_cta.min, 1);
  EXPECT_EQ(tl.tiles_per_cta.max, 2);
  EXPECT_NEAR(tl.qloop_median_s, 40e-6, 1e-12);
  EXPECT_NEAR(tl.epilogue_median_s, 2e-6, 1e-12);
  EXPECT_NEAR(tl.gap_median_s, 1e-6, 1e-12);  // tile 2 starts 1 us after tile 0's store issued
  // The slowest CTA's Q-loops sum to 80 us of the 85 us span.
  EXPECT_NEAR(tl.outside_qloop_fraction, 5.0 / 85.0, 1e-9);
  EXPECT_NEAR(tl.cta_sigma_s_per_kv_tile.min, 10e-6, 1e-12);
  EXPECT_NEAR(tl.cta_sigma_s_per_kv_tile.max, 15e-6, 1e-12);
}

TEST(LaunchTimeline, CtasComeFromTheRecordsNotTheTileIndex) {
  // The dynamic scheduler: CTA 1 drew tile 2 as its second tile, CTA 0 ran only tile 0.
  auto r = two_cta_launch();
  r[4] = r[5] = tile(2, 64'000, 40'000, 2'000);
  r[4].cta_idx = r[5].cta_idx = 1;
  r[4].cta_tile_idx = r[5].cta_tile_idx = 1;
  const LaunchTimeline tl = launch_timeline(r.data(), r.size(), 2, 1e9);
  EXPECT_EQ(tl.tiles_per_cta.min, 1);  // CTA 0
  EXPECT_EQ(tl.tiles_per_cta.max, 2);  // CTA 1
  EXPECT_NEAR(tl.cta_finish_s.min, 42e-6, 1e-12);
  EXPECT_NEAR(tl.cta_finish_s.max, 106e-6, 1e-12);
  EXPECT_NEAR(tl.gap_median_s, 1e-6, 1e-12);  // CTA 1's tile 2 starts 1 us after its tile 1's store
}

TEST(LaunchTimeline, TheCriticalPathIsTheWarpgroupWhoseLastStoreEndsTheLaunch) {
  // CTA 0 ends the launch at 85 us: Q-loops 40 + 40 us, epilogues 2 + 2 us, the 1 us gap between its tiles.
  auto r = two_cta_launch(2);  // at 2 GHz: cycles convert with the clock given
  LaunchTimeline tl = launch_timeline(r.data(), r.size(), 2, 2e9);
  EXPECT_EQ(tl.critical.cta_idx, 0);
  EXPECT_EQ(tl.critical.num_tiles, 2);
  EXPECT_EQ(tl.critical.num_kv_tiles, 8);
  EXPECT_NEAR(tl.critical.qloop_s, 80e-6, 1e-12);
  EXPECT_NEAR(tl.critical.epilogue_s, 4e-6, 1e-12);
  EXPECT_NEAR(tl.critical.other_s, 1e-6, 1e-12);
  // CTA 1's only tile slowed to 90 us of Q-loop after a 1 us late start: it ends the launch at 93 us.
  r = two_cta_launch();
  r[2] = r[3] = tile(1, 1'000, 90'000, 2'000);
  tl = launch_timeline(r.data(), r.size(), 2, 1e9);
  EXPECT_EQ(tl.critical.cta_idx, 1);
  EXPECT_EQ(tl.critical.num_tiles, 1);
  EXPECT_NEAR(tl.span_s, 93e-6, 1e-12);
  EXPECT_NEAR(tl.critical.qloop_s, 90e-6, 1e-12);
  EXPECT_NEAR(tl.critical.epilogue_s, 2e-6, 1e-12);
  EXPECT_NEAR(tl.critical.other_s, 1e-6, 1e-12);  // its late start
  for (auto& t : r) t.written = 0;
  EXPECT_EQ(launch_timeline(r.data(), r.size(), 2, 1e9).critical.cta_idx, -1);
}

TEST(LaunchTimeline, NothingWrittenOrNoClockIsEmpty) {
  auto r = two_cta_launch();
  EXPECT_EQ(launch_timeline(r.data(), r.size(), 2, 0).span_s, 0.0);
  for (auto& t : r) t.written = 0;
  EXPECT_EQ(launch_timeline(r.data(), r.size(), 2, 1e9).num_ctas, 0);
}

// Rounds of 3 launches: the k-th kept launch lands at position k % 3; a launch without a clock or a span is
// left out; span in cycles is span x clock (a later position that is slower only by its clock has the same
// cycles).
TEST(PositionTimelines, LaunchesLandByPositionInTheirRound) {
  PositionTimelines pt(3);
  EXPECT_TRUE(pt.empty());
  LaunchTimeline tl;
  tl.span_s = 400e-6;
  tl.tail_idle_fraction = 0.05;
  tl.cta_sigma_s_per_kv_tile.median = 1.5e-6;
  for (std::size_t k = 0; k < 6; ++k) {
    LaunchTimeline t = tl;
    if (k % 3 != 0) t.span_s = 440e-6;  // launches right after another one: 10% longer
    pt.add(k, k % 3 == 0 ? 1.8e9 : 1.8e9 / 1.1, t);
  }
  pt.add(6, 0.0, tl);         // no clock: left out
  LaunchTimeline empty_tl;
  pt.add(7, 1.8e9, empty_tl);  // no span: left out
  ASSERT_EQ(pt.positions.size(), 3u);
  EXPECT_FALSE(pt.empty());
  EXPECT_EQ(pt.positions[0].span_s.size(), 2u);
  EXPECT_EQ(pt.positions[1].span_s.size(), 2u);
  EXPECT_EQ(pt.positions[2].span_s.size(), 2u);
  EXPECT_DOUBLE_EQ(pt.positions[0].span_cycles[0], 400e-6 * 1.8e9);
  EXPECT_NEAR(pt.positions[1].span_cycles[0], pt.positions[0].span_cycles[0], 1e-3);  // clock only
  EXPECT_DOUBLE_EQ(pt.positions[2].tail_idle_fraction[1], 0.05);
  PositionTimelines none;
  none.add(0, 1.8e9, tl);  // no positions: nothing kept
  EXPECT_TRUE(none.empty());
}

// Gap and period from the launch before, within a round only: launches 0, 1, 2 of a round of 3, 10 us apart
// after a 400 us span; launch 3 starts the next round right after launch 2 (kept, but no gap across the round's
// sync); launch 4 follows it (gap kept); launch 7 follows a left-out launch 6 (no gap).
TEST(PositionTimelines, GapsAndPeriodsFromThePreviousLaunchOfTheRound) {
  PositionTimelines pt(3);
  LaunchTimeline tl;
  tl.span_s = 400e-6;
  std::uint64_t t0 = 1'000'000;
  for (std::size_t k = 0; k < 3; ++k) {
    LaunchTimeline t = tl;
    t.origin_ns = t0 + k * 410'000;
    t.end_ns = t.origin_ns + 400'000;
    pt.add(k, 1.8e9, t);
  }
  EXPECT_TRUE(pt.positions[0].gap_from_previous_s.empty());
  ASSERT_EQ(pt.positions[1].gap_from_previous_s.size(), 1u);
  EXPECT_NEAR(pt.positions[1].gap_from_previous_s[0], 10e-6, 1e-12);
  EXPECT_NEAR(pt.positions[2].period_from_previous_s[0], 410e-6, 1e-12);
  LaunchTimeline t3 = tl;  // round 2, position 0, 10 us after launch 2's end: still no gap across the round
  t3.origin_ns = t0 + 2 * 410'000 + 410'000;
  t3.end_ns = t3.origin_ns + 400'000;
  pt.add(3, 1.8e9, t3);
  EXPECT_EQ(pt.positions[0].gap_from_previous_s.size(), 0u);
  EXPECT_EQ(pt.positions[0].span_s.size(), 2u);
  LaunchTimeline t4 = t3;
  t4.origin_ns = t3.end_ns + 20'000;
  t4.end_ns = t4.origin_ns + 400'000;
  pt.add(4, 1.8e9, t4);
  ASSERT_EQ(pt.positions[1].gap_from_previous_s.size(), 2u);
  EXPECT_NEAR(pt.positions[1].gap_from_previous_s[1], 20e-6, 1e-12);
  LaunchTimeline t6 = t4;
  t6.origin_ns = t4.end_ns + 5'000'000;
  t6.end_ns = t6.origin_ns + 400'000;
  pt.add(6, 0.0, t6);  // round 3, position 0, no clock: left out, so launch 7 has no kept predecessor
  t6.origin_ns += 500'000;
  t6.end_ns += 500'000;
  pt.add(7, 1.8e9, t6);
  EXPECT_EQ(pt.positions[1].span_s.size(), 3u);
  EXPECT_EQ(pt.positions[1].gap_from_previous_s.size(), 2u);
}

}  // namespace
}  // namespace xs::attention
