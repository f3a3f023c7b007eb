// Tests for attention/fa_burst on hand-made timelines: the sender-side span of a launch (earliest tile start
// to latest store issued, unwritten records ignored), store spans on the global clock from SM cycles, and the
// burst-alignment statistics (phase spread per wave, peak and time-averaged concurrent storers).
#include "xs/attention/run/fa_burst.hpp"

#include <gtest/gtest.h>

namespace xs::attention {
namespace {

namespace ka = xs::kernels::attention;

// The CTA and its n-th tile as the static scheduler of a grid of `grid` assigns them.
ka::TileRecord rec(std::uint32_t tile, std::uint64_t start_ns, std::uint64_t end_ns, std::uint64_t store_cycles = 0,
                   std::uint32_t grid = 4) {
  ka::TileRecord r;
  r.tile_idx = tile;
  r.cta_idx = tile % grid;
  r.cta_tile_idx = tile / grid;
  r.qloop_start_ns = start_ns;
  r.store_end_ns = end_ns;
  r.store_start_cycles = 1000;
  r.store_end_cycles = 1000 + store_cycles;
  r.written = 1;
  return r;
}

StoreSpan span(int cta, int wave, double start, double end) { return StoreSpan{cta, wave, start, end}; }

TEST(LaunchSenderSpan, FirstTileStartToLastStoreIssuedOverWrittenRecords) {
  std::vector<ka::TileRecord> r = {rec(0, 5'000, 9'000), rec(1, 4'000, 12'000), rec(2, 6'000, 20'000)};
  EXPECT_DOUBLE_EQ(launch_sender_span_s(r.data(), r.size()), 16e-6);
  r[2].written = 0;  // a slot nobody wrote (poison-free zeroes) must not count
  EXPECT_DOUBLE_EQ(launch_sender_span_s(r.data(), r.size()), 8e-6);
  for (auto& x : r) x.written = 0;
  EXPECT_EQ(launch_sender_span_s(r.data(), r.size()), 0.0);
  EXPECT_EQ(launch_sender_span_s(nullptr, 0), 0.0);
}

TEST(StoreSpans, CtaAndWaveComeFromTheRecordUnderTheDynamicScheduler) {
  // Tile 9 drawn by CTA 0 as its second tile (not 9 % 4 = CTA 1's third).
  std::vector<ka::TileRecord> r = {rec(9, 0, 10'000, 2000)};
  r[0].cta_idx = 0;
  r[0].cta_tile_idx = 1;
  const auto s = store_spans(r.data(), r.size(), 4, 2e9);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].cta, 0);
  EXPECT_EQ(s[0].wave, 1);
}

TEST(RecordDurations, SplitPiecesCountInSigmaOnly) {
  // A whole tile (64 KV tiles, 6400 cycles of Q-loop, 200 of stores, 300 of fence) and a split piece that only
  // left its partial (32 KV tiles, fence stamp 0 as the kernel leaves it: must not wrap around).
  std::vector<ka::TileRecord> r = {rec(0, 0, 10'000, 200), rec(1, 0, 5'000, 0)};
  r[0].qloop_start_cycles = 100;
  r[0].qloop_end_cycles = 6500;
  r[0].num_kv_tiles = 64;
  r[0].fence_end_cycles = r[0].store_end_cycles + 300;
  r[1].qloop_start_cycles = 100;
  r[1].qloop_end_cycles = 3300;
  r[1].num_kv_tiles = 32;
  r[1].partial_only = 1;
  r[1].fence_end_cycles = 0;
  const RecordDurations d = record_durations(r.data(), r.size(), 1e9, true);
  ASSERT_EQ(d.sigma_s_per_kv_tile.size(), 2u);
  EXPECT_NEAR(d.sigma_s_per_kv_tile[0], 100e-9, 1e-15);
  EXPECT_NEAR(d.sigma_s_per_kv_tile[1], 100e-9, 1e-15);
  ASSERT_EQ(d.qloop_s.size(), 1u);
  EXPECT_NEAR(d.qloop_s[0], 6400e-9, 1e-15);
  ASSERT_EQ(d.store_span_s.size(), 1u);
  EXPECT_NEAR(d.store_span_s[0], 200e-9, 1e-15);
  ASSERT_EQ(d.fence_span_s.size(), 1u);
  EXPECT_NEAR(d.fence_span_s[0], 300e-9, 1e-15);
  EXPECT_TRUE(record_durations(r.data(), r.size(), 1e9, false).fence_span_s.empty());
  EXPECT_TRUE(record_durations(r.data(), r.size(), 0.0, true).sigma_s_per_kv_tile.empty()) << "no clock, nothing";
}

TEST(StoreSpans, SplitPiecesThatOnlyLeftTheirPartialStoredNothing) {
  // Split tail: a piece whose partial another piece combined has no store burst; the combining piece has.
  std::vector<ka::TileRecord> r = {rec(6, 0, 10'000, 2000), rec(6, 0, 3'000, 500)};
  r[1].partial_only = 1;
  const auto s = store_spans(r.data(), r.size(), 4, 2e9);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_NEAR(s[0].end_s, 1e-6, 1e-15) << "origin from the storing record only";
}

TEST(StoreSpans, CtaAndWaveFromThePersistentScheduleAndStartFromCycles) {
  // grid 4: tile 6 is CTA 2's second tile (wave 1). 2000 cycles at 2 GHz = 1 us before its end.
  std::vector<ka::TileRecord> r = {rec(6, 0, 10'000, 2000), rec(1, 0, 4'000, 4000)};
  const auto s = store_spans(r.data(), r.size(), 4, 2e9);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].cta, 2);
  EXPECT_EQ(s[0].wave, 1);
  EXPECT_EQ(s[1].cta, 1);
  EXPECT_EQ(s[1].wave, 0);
  // Origin = the earliest start (tile 1: 4 us - 2 us = 2 us).
  EXPECT_NEAR(s[1].start_s, 0.0, 1e-15);
  EXPECT_NEAR(s[1].end_s, 2e-6, 1e-15);
  EXPECT_NEAR(s[0].start_s, 7e-6, 1e-15);
  EXPECT_NEAR(s[0].end_s, 8e-6, 1e-15);
  EXPECT_TRUE(store_spans(r.data(), r.size(), 4, 0.0).empty()) << "no clock, no spans";
}

TEST(StoreSpans, KeepNanosecondsAtEpochScaleGlobaltimerValues) {
  // %globaltimer reads ns since an epoch (~1.8e18): a double of that has a 256 ns ulp, so converting before
  // subtracting would round these 50 ns and 100 ns offsets away.
  const std::uint64_t epoch_ns = 1'764'000'000'123'456'789ull;
  std::vector<ka::TileRecord> r = {rec(0, 0, epoch_ns + 100, 100, 2), rec(1, 0, epoch_ns + 250, 100, 2)};
  const auto s = store_spans(r.data(), r.size(), 2, 2e9);  // 100 cycles at 2 GHz = 50 ns
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NEAR(s[0].start_s, 0.0, 1e-12);
  EXPECT_NEAR(s[0].end_s, 50e-9, 1e-12);
  EXPECT_NEAR(s[1].start_s, 150e-9, 1e-12);
  EXPECT_NEAR(s[1].end_s, 200e-9, 1e-12);
}

TEST(BurstAlignment, AlignedBurstsHaveNoSpreadAndEveryCtaStoresAtOnce) {
  std::vector<StoreSpan> s;
  for (int wave = 0; wave < 3; ++wave)
    for (int cta = 0; cta < 4; ++cta) s.push_back(span(cta, wave, 10.0 * wave, 10.0 * wave + 2));
  const BurstAlignment a = burst_alignment(s);
  EXPECT_EQ(a.phase_spread_median_s, 0.0);
  EXPECT_EQ(a.num_waves, 3);
  EXPECT_EQ(a.peak_concurrent_storers, 4.0);
  EXPECT_DOUBLE_EQ(a.mean_concurrent_storers, 4.0);
}

TEST(BurstAlignment, PhaseShiftedBurstsNeverOverlap) {
  std::vector<StoreSpan> s;
  for (int wave = 0; wave < 2; ++wave)
    for (int cta = 0; cta < 4; ++cta) s.push_back(span(cta, wave, 10.0 * wave + cta, 10.0 * wave + cta + 0.5));
  const BurstAlignment a = burst_alignment(s);
  EXPECT_DOUBLE_EQ(a.phase_spread_median_s, 3.0);
  EXPECT_EQ(a.peak_concurrent_storers, 1.0);
  EXPECT_DOUBLE_EQ(a.mean_concurrent_storers, 1.0);
}

TEST(BurstAlignment, StaggeredOverlapCountsByTheTimeAverage) {
  // [0,2) [1,3) [2,4) [3,5): counts 1,2,2,2,1 over unit intervals -> peak 2, mean 8/5.
  std::vector<StoreSpan> s;
  for (int cta = 0; cta < 4; ++cta) s.push_back(span(cta, 0, cta, cta + 2.0));
  const BurstAlignment a = burst_alignment(s);
  EXPECT_DOUBLE_EQ(a.phase_spread_median_s, 3.0);
  EXPECT_EQ(a.peak_concurrent_storers, 2.0);
  EXPECT_DOUBLE_EQ(a.mean_concurrent_storers, 1.6);
}

TEST(BurstAlignment, BothWarpgroupsOfACtaAreOneStorer) {
  // CTA 0's two warpgroups overlap (one storer); CTA 1 stores in the gap after: never two at once.
  const std::vector<StoreSpan> s = {span(0, 0, 0, 2), span(0, 0, 1, 3), span(1, 0, 3, 4)};
  const BurstAlignment a = burst_alignment(s);
  EXPECT_EQ(a.peak_concurrent_storers, 1.0);
  EXPECT_DOUBLE_EQ(a.mean_concurrent_storers, 1.0);
  // The wave's spread uses each CTA's earliest start: 3 - 0.
  EXPECT_DOUBLE_EQ(a.phase_spread_median_s, 3.0);
}

TEST(BurstAlignment, MedianOverWavesSkipsSingleCtaWavesAndZeroLengthSpans) {
  std::vector<StoreSpan> s = {span(0, 0, 0, 1), span(1, 0, 1, 2),     // wave 0: spread 1
                              span(0, 1, 10, 11), span(1, 1, 12, 13),  // wave 1: spread 2
                              span(0, 2, 20, 21), span(1, 2, 24, 25),  // wave 2: spread 4
                              span(0, 3, 30, 31),                      // wave 3: one CTA, skipped
                              span(2, 4, 40, 40)};                     // zero length: no storer, own wave
  const BurstAlignment a = burst_alignment(s);
  EXPECT_EQ(a.num_waves, 3);
  EXPECT_DOUBLE_EQ(a.phase_spread_median_s, 2.0);
  EXPECT_EQ(a.peak_concurrent_storers, 1.0);
  s.push_back(span(3, 4, 40, 41));  // wave 4 now has 2 CTAs: spreads {1, 2, 4, 0} -> median 1.5
  EXPECT_DOUBLE_EQ(burst_alignment(s).phase_spread_median_s, 1.5);
  EXPECT_EQ(burst_alignment({}).peak_concurrent_storers, 0.0);
}

}  // namespace
}  // namespace xs::attention
