// xstage sim tests: the loaded suite in the simulator (the planted interference mechanism) and the loaded
// kernel's header-only schedule (kernels/remote_store/loaded_layout.cuh), which CPU tests can enumerate.
#include <gtest/gtest.h>

#include <set>

#include "common/error.hpp"
#include "../../kernels/remote_store/loaded_layout.cuh"
#include "report/result_file.hpp"
#include "sim/simulator.hpp"

namespace xs::sim {
namespace {

namespace rs = kernels::remote_store;

PointSpec loaded_spec(const std::string& target, double gap_s) {
  PointSpec s;
  s.suite = Suite::kLoaded;
  s.target = target;
  s.num_producers = 132;
  s.bytes_per_producer = 8192;
  s.gap_s = gap_s;
  s.num_bursts = 4096;
  s.warmup_bursts = 2;
  s.repetitions = 3;
  s.threads_per_producer = 128;
  s.loaded.tiles_per_cta = 64;
  s.loaded.warmup_tiles = 4;
  return s;
}

SimParams quiet() {
  SimParams p;
  p.noise = 0;
  return p;
}

TEST(SimLoaded, BackToBackStoresToTheFullPathSlowTheMainloopByOnePlusAlpha) {
  SimParams p = quiet();
  const PointRecord r = simulate_point(p, loaded_spec("host", 0));
  ASSERT_TRUE(r.loaded.has_value());
  // Issue (132 producers at 32 KiB / 0.76 us each) far exceeds R: the path stays at Q, so tiles take 1 + alpha.
  EXPECT_NEAR(r.loaded->slowdown.median, 1 + p.interference_alpha, 0.02);
  EXPECT_NEAR(r.loaded->baseline_tile_time_s.median, p.mainloop_tile_s, 1e-12);
  // What the path accepted over the mainloop is what drained plus the Q still outstanding: ~R.
  EXPECT_NEAR(r.loaded->issue_rate_bps.median, p.drain_rate_bps, 0.05 * p.drain_rate_bps + p.capacity_bytes / r.loaded->mainloop_span_s.median);
  EXPECT_NEAR(r.loaded->drain_tail_s.median, p.capacity_bytes / p.drain_rate_bps, 0.05 * p.capacity_bytes / p.drain_rate_bps);
  EXPECT_GT(r.issue_time_s.median, 0);
}

TEST(SimLoaded, SlowdownGrowsWithTheOfferedRateAndVanishesOnLocalAndWithoutTheTerm) {
  SimParams p = quiet();
  const double volume = 132.0 * 8192;
  double previous = 0;
  for (double rho : {0.25, 0.5, 0.9, 2.0}) {
    const double s = simulate_point(p, loaded_spec("host", volume / (rho * p.drain_rate_bps))).loaded->slowdown.median;
    EXPECT_GE(s, previous - 1e-9) << "rho " << rho;
    EXPECT_LE(s, 1 + p.interference_alpha + 0.02);
    previous = s;
  }
  EXPECT_GT(previous, 1.3);  // beyond R the path fills
  EXPECT_NEAR(simulate_point(p, loaded_spec("local", 0)).loaded->slowdown.median, 1.0, 0.01);
  p.interference_alpha = 0;  // planted absence
  EXPECT_NEAR(simulate_point(p, loaded_spec("host", 0)).loaded->slowdown.median, 1.0, 0.01);
}

TEST(SimLoaded, PacedBurstsKeepTheirPeriodAndTheRecordRoundTrips) {
  SimParams p = quiet();
  const double gap_s = 40e-6;
  PointSpec spec = loaded_spec("host", gap_s);
  spec.loaded.tiles_per_cta = 256;
  const PointRecord r = simulate_point(p, spec);
  EXPECT_NEAR(r.period_s.median, gap_s, 0.02 * gap_s);
  const PointRecord back = report::record_from_json(report::to_json(r), "");
  ASSERT_TRUE(back.loaded.has_value());
  EXPECT_EQ(back.spec.loaded.tiles_per_cta, 256);
  EXPECT_DOUBLE_EQ(back.loaded->slowdown.median, r.loaded->slowdown.median);
  EXPECT_EQ(point_key(back.spec), point_key(spec));
}

TEST(SimLoaded, LoadedKnobsAreWrittenOnlyForTheLoadedSuite) {
  PointSpec periodic;
  periodic.bytes_per_producer = 4096;
  EXPECT_FALSE(report::to_json(periodic).contains("loaded"));
  nlohmann::json j = report::to_json(periodic);
  j["loaded"] = report::to_json(loaded_spec("host", 0)).at("loaded");
  EXPECT_THROW(report::spec_from_json(j, "spec"), Error);
}

TEST(LoadedLayout, EveryOutputBlockHasExactlyOneWriterAndTilesCoverTheirBlocks) {
  for (std::uint32_t num_ctas : {1u, 4u, 7u, 132u})
    for (std::uint32_t num_blocks : {1u, 8u, 960u})
      for (std::uint32_t tiles : {1u, 3u, 64u}) {
        rs::LoadedProblem p;
        p.num_blocks = num_blocks;
        p.num_ctas = num_ctas;
        p.tiles_per_cta = tiles;
        std::multiset<std::uint32_t> writers;
        for (std::uint32_t c = 0; c < num_ctas; ++c)
          for (std::uint32_t j = 0; j < tiles; ++j) {
            ASSERT_LT(p.tile_block(c, j), num_blocks);
            if (p.writes_output(c, j)) writers.insert(p.tile_block(c, j));
          }
        const std::uint64_t expected = std::min<std::uint64_t>(num_blocks, std::uint64_t{num_ctas} * tiles);
        ASSERT_EQ(writers.size(), expected);
        for (std::uint32_t b = 0; b < expected; ++b) ASSERT_EQ(writers.count(b), 1u) << "block " << b;
      }
  static_assert(rs::LoadedShape::kBarrierOffset % 1024 == 0);
  EXPECT_LE(rs::LoadedShape::kSmemBytes, 227u * 1024u);
}

TEST(LoadedLayout, LastSliceWriterIsTheLatestBurstOfThatSlot) {
  rs::BurstLayout layout;
  layout.bytes_per_producer = 4096;
  layout.num_producers = 3;
  layout.num_slots = 4;
  std::uint64_t b = 0;
  EXPECT_FALSE(rs::last_slice_writer(layout, 0, 0, &b));
  EXPECT_FALSE(rs::last_slice_writer(layout, 2, 2, &b));
  ASSERT_TRUE(rs::last_slice_writer(layout, 2, 1, &b));
  EXPECT_EQ(b, 1u);
  ASSERT_TRUE(rs::last_slice_writer(layout, 11, 2, &b));  // bursts 2, 6, 10 used slot 2
  EXPECT_EQ(b, 10u);
  ASSERT_TRUE(rs::last_slice_writer(layout, 11, 3, &b));  // 3, 7
  EXPECT_EQ(b, 7u);
}

}  // namespace
}  // namespace xs::sim
