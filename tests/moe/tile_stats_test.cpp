// xstage moe tests: per-tile record summaries on synthetic records with known answers: the SM clock from
// %clock64 against %globaltimer, medians per GEMM, eq. 15's predicted stall against each tile's successor,
// dependency spin only for Linear-2 tiles, unfilled records ignored.
#include <gtest/gtest.h>

#include "xs/moe/run/tile_stats.hpp"

namespace xs::moe {
namespace {

namespace km = xs::kernels::moe;

// One CTA running L1, L2, L1, L2 ... at a 2 GHz clock: mainloop 1000 cycles (0.5 us) for L1, 400 cycles
// (0.2 us) for L2; L2 store span 1600 cycles (0.8 us), L1 store span 100 cycles.
std::vector<km::TileRecord> synthetic(const km::TileSpace& tiles, int num_pairs, std::uint32_t cta) {
  std::vector<km::TileRecord> recs(tiles.num_tiles());
  std::uint64_t cycle = 1000000;
  std::uint64_t ns = 5000000;
  for (int i = 0; i < 2 * num_pairs; ++i) {
    const bool l2 = i % 2 == 1;
    const km::TileId id{l2 ? km::TileKind::kL2 : km::TileKind::kL1, static_cast<std::uint32_t>(i / 2), 0};
    km::TileRecord& r = recs[tiles.tile_index(id)];
    r.cta = cta;
    r.sequence = static_cast<std::uint32_t>(i);
    r.start_ns = ns;
    r.mainloop_start_cycles = cycle;
    r.mainloop_end_cycles = cycle + (l2 ? 400 : 1000);
    r.store_start_cycles = r.mainloop_end_cycles + 10;
    r.store_end_cycles = r.store_start_cycles + (l2 ? 1600 : 100);
    r.staging_wait_cycles = l2 ? 0 : 1200;  // the L1 after an L2 waits for the L2's storers
    r.dependency_spin_cycles = l2 ? 200 : 999999;  // L1 spins are not Linear-2 dependency spins
    r.first_stage_wait_cycles = l2 ? 100 : 20;
    if (i == 0) r.cta_boundary_ns = ns - 3000;  // kernel entry 3 us before the first mainloop
    if (i == 2 * num_pairs - 1) r.cta_boundary_ns = ns + (400 + 10 + 1600) / 2 + 500;  // exit 0.5 us after the last store
    const std::uint64_t step = l2 ? 400 : 1000;
    cycle += step + 50;
    ns += (step + 50) / 2;  // 2 cycles per ns
  }
  return recs;
}

TEST(TileStats, ClockMediansAndEq15FromKnownRecords) {
  km::TileSpace tiles{200, 1, 1};
  const auto recs = synthetic(tiles, 200, 0);
  const TileDistributions d = summarize_tiles(recs, tiles, 1.0e9);
  EXPECT_EQ(d.num_tiles, 400);
  EXPECT_NEAR(d.sm_clock_hz, 2.0e9, 2.0e9 * 1e-3);  // not the 1 GHz fallback
  EXPECT_NEAR(d.l1_mainloop_median_s, 0.5e-6, 1e-9);
  EXPECT_NEAR(d.l2_mainloop_median_s, 0.2e-6, 1e-9);
  EXPECT_NEAR(d.l2_store_span_median_s, 0.8e-6, 1e-9);
  EXPECT_NEAR(d.l2_spin_median_s, 0.1e-6, 1e-9);  // 200 cycles; the L1 tiles' 999999 are not counted
  EXPECT_NEAR(d.l2_first_wait_total_s, 200 * 50e-9, 1e-12);  // one CTA: 200 L2 tiles x 100 cycles
  EXPECT_NEAR(d.l1_first_wait_total_s, 200 * 10e-9, 1e-12);
  // eq. 15: an L2 (span 0.8 us) followed by an L1 (cover 0.5 us) predicts 0.3 us; an L1 (span 0.05 us)
  // followed by an L2 (cover 0.2 us) predicts 0. 200 L2 tiles, the last without a successor: 199 x 0.3 us.
  EXPECT_NEAR(d.eq15_predicted_stall_s, 199 * 0.3e-6, 1e-9);
  // Measured: the successor's wait; L1 successors wait 1200 cycles = 0.6 us, 199 of them after an L2.
  EXPECT_NEAR(d.eq15_measured_wait_s, 199 * 0.6e-6, 1e-9);
  EXPECT_NEAR(d.entry_to_first_start_median_s, 3e-6, 1e-12);
  EXPECT_NEAR(d.last_store_to_exit_median_s, 0.5e-6, 1e-9);
  EXPECT_NEAR(d.cta_busy_median_s, 200 * 0.5e-6 + 200 * 0.2e-6, 1e-9);
  ASSERT_FALSE(d.timeline.empty());
  EXPECT_EQ(d.timeline.front().at("l2"), 0.0);
  EXPECT_EQ(d.timeline.at(1).at("l2"), 1.0);
}

TEST(TileStats, UnfilledRecordsAreIgnoredAndShortRunsUseTheNominalClock) {
  km::TileSpace tiles{10, 1, 1};
  auto recs = synthetic(tiles, 2, 0);  // 4 tiles span ~1.2 us of globaltimer: too short to estimate a clock
  const TileDistributions d = summarize_tiles(recs, tiles, 1.5e9);
  EXPECT_EQ(d.num_tiles, 4);
  EXPECT_DOUBLE_EQ(d.sm_clock_hz, 1.5e9);
  const TileDistributions none = summarize_tiles(std::vector<km::TileRecord>(tiles.num_tiles()), tiles, 1.5e9);
  EXPECT_EQ(none.num_tiles, 0);
  EXPECT_TRUE(none.timeline.empty());
}

TEST(TileStats, PerCtaTotalsAreMeansOverCtas) {
  km::TileSpace tiles{400, 1, 1};
  std::vector<km::TileRecord> recs(tiles.num_tiles());
  const auto a = synthetic(tiles, 100, 0);
  auto b = synthetic(tiles, 200, 1);
  // CTA 1 takes row blocks 100..199 of its own synthetic run: keep CTA 0's first 100 pairs, CTA 1's rest.
  for (std::uint32_t i = 0; i < tiles.num_tiles(); ++i) recs[i] = a[i].store_end_cycles ? a[i] : km::TileRecord{};
  for (std::uint32_t p = 100; p < 200; ++p)
    for (auto kind : {km::TileKind::kL1, km::TileKind::kL2}) {
      const auto idx = tiles.tile_index({kind, p, 0});
      recs[idx] = b[idx];
    }
  const TileDistributions d = summarize_tiles(recs, tiles, 1.0e9);
  EXPECT_EQ(d.num_tiles, 400);
  // CTA 0: 99 predicted stalls of 0.3 us; CTA 1 (sequence 200..399): 99 as well -> mean 99 x 0.3 us.
  EXPECT_NEAR(d.eq15_predicted_stall_s, 99 * 0.3e-6, 1e-9);
}

}  // namespace
}  // namespace xs::moe
