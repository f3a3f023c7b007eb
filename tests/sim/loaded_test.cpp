// xstage sim tests: the loaded suite in the simulator (the planted interference mechanism) and the loaded
// kernel's header-only schedule (src/xs/kernels/remote_store/loaded_layout.cuh), which CPU tests can enumerate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "xs/common/error.hpp"
#include "xs/kernels/remote_store/loaded_layout.cuh"
#include "xs/report/result_file.hpp"
#include "xs/backends/sim/simulator.hpp"

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

// Injection epilogue: the math warps store B = V bytes after every tile, G = 0.
PointSpec epilogue_spec(const std::string& target, int k, std::uint64_t b) {
  PointSpec s = loaded_spec(target, 0);
  s.num_producers = k;
  s.bytes_per_producer = b;
  s.threads_per_producer = 256;
  s.loaded.injection = Injection::kEpilogue;
  s.loaded.tiles_per_burst = 1;
  s.loaded.tiles_per_cta = 64;
  s.loaded.warmup_tiles = 4;
  s.num_bursts = epilogue_bursts(s.loaded);
  s.warmup_bursts = epilogue_warmup_bursts(s.loaded);
  return s;
}

TEST(SimLoadedEpilogue, SlowdownGrowsWithTheVolumePerTileAndWithK) {
  const SimParams p = quiet();
  double previous = 0;
  for (std::uint64_t b : {2048u, 8192u, 32768u, 131072u}) {
    const PointRecord r = simulate_point(p, epilogue_spec("host", 132, b));
    ASSERT_TRUE(r.loaded && r.loaded->epilogue);
    const double s = r.loaded->slowdown.median;
    EXPECT_GT(s, previous) << "B " << b;
    previous = s;
    // Every tile stored its burst: K B per tile, 64 tiles.
    EXPECT_DOUBLE_EQ(r.loaded->bytes_issued.median, 132.0 * static_cast<double>(b) * 64);
  }
  // 128 KiB x 132 = 17 MB per tile against Q = 4.25 MiB and R = 717 GB/s: the issue waits for the drain, so a
  // tile with its epilogue takes about V / R.
  const double volume = 132.0 * 131072;
  EXPECT_NEAR(previous, volume / p.drain_rate_bps / p.mainloop_tile_s, 0.15 * previous);
  previous = 0;
  for (int k : {33, 66, 132}) {
    const double s = simulate_point(p, epilogue_spec("host", k, 32768)).loaded->slowdown.median;
    EXPECT_GT(s, previous) << "K " << k;
    previous = s;
  }
}

TEST(SimLoadedEpilogue, LocalPaysOnlyTheIssueAndThePlantedAbsenceLeavesTheMainloop) {
  SimParams p = quiet();
  for (std::uint64_t b : {2048u, 131072u}) {
    const PointRecord r = simulate_point(p, epilogue_spec("local", 132, b));
    const auto& e = *r.loaded->epilogue;
    const double issue_s = backpressure_free_issue_time_s(p, b);
    EXPECT_NEAR(e.median_slowdown.median, 1.0, 0.01) << "the mainloop part is not slowed on local";
    EXPECT_NEAR(e.epilogue_time_s.median, issue_s, 0.01 * issue_s);
    EXPECT_NEAR(r.loaded->slowdown.median, 1 + issue_s / p.mainloop_tile_s, 0.01);
    EXPECT_EQ(r.loaded->drain_tail_s.median, 0.0);
  }
  EXPECT_NEAR(simulate_point(p, epilogue_spec("local", 132, 2048)).loaded->slowdown.median, 1.0, 0.02);
  // Without the planted term the mainloop part stays at its base under any volume; only the epilogue grows.
  p.interference_alpha = 0;
  const PointRecord r = simulate_point(p, epilogue_spec("host", 132, 131072));
  EXPECT_NEAR(r.loaded->epilogue->median_slowdown.median, 1.0, 0.01);
  EXPECT_GT(r.loaded->slowdown.median, 2.0);
  EXPECT_GT(r.loaded->drain_tail_s.median, 0.0);
}

TEST(SimLoadedEpilogue, TheRecordRoundTripsAndOldFilesWithoutTheModeStillLoad) {
  const PointRecord r = simulate_point(quiet(), epilogue_spec("host", 66, 8192));
  const nlohmann::json j = report::to_json(r);
  EXPECT_EQ(j.at("spec").at("loaded").at("injection"), "epilogue");
  const PointRecord back = report::record_from_json(j, "");
  EXPECT_EQ(back.spec.loaded.injection, Injection::kEpilogue);
  EXPECT_EQ(back.spec.loaded.tiles_per_burst, 1);
  EXPECT_EQ(point_key(back.spec), point_key(r.spec));
  ASSERT_TRUE(back.loaded && back.loaded->epilogue);
  EXPECT_DOUBLE_EQ(back.loaded->epilogue->mean_tile_epilogue_time_s.median,
                   r.loaded->epilogue->mean_tile_epilogue_time_s.median);
  EXPECT_DOUBLE_EQ(back.loaded->epilogue->epilogue_time_s.median, r.loaded->epilogue->epilogue_time_s.median);
  EXPECT_DOUBLE_EQ(back.loaded->slowdown.median, r.loaded->slowdown.median);
  // A paced point (and a file written before the mode) has neither the knobs nor the summaries, and loads.
  const nlohmann::json paced = report::to_json(simulate_point(quiet(), loaded_spec("host", 0)));
  EXPECT_FALSE(paced.at("spec").at("loaded").contains("injection"));
  EXPECT_FALSE(paced.at("loaded").contains("epilogue"));
  const PointRecord old = report::record_from_json(paced, "");
  EXPECT_EQ(old.spec.loaded.injection, Injection::kPaced);
  EXPECT_FALSE(old.loaded->epilogue.has_value());
  nlohmann::json bad = j;
  bad["spec"]["loaded"]["injection"] = "closed_loop";
  try {
    report::record_from_json(bad, "");
    ADD_FAILURE() << "an unknown injection was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("accepted: paced, epilogue"), std::string::npos) << e.what();
  }
}

TEST(SimLoadedEpilogue, APacedGapIsRefused) {
  PointSpec s = epilogue_spec("host", 132, 8192);
  s.gap_s = 1e-6;
  try {
    simulate_point(quiet(), s);
    ADD_FAILURE() << "G != 0 was accepted in epilogue mode";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("G must be 0"), std::string::npos) << e.what();
  }
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

TEST(LoadedLayout, StorersIssueBurstZeroAtAnySpeedAndNeverPastTheCap) {
  // done_seen_at: the first check (before burst b) that sees the mainloop done; 0 = the storers start after the
  // mainloop ended (a sanitizer's or scheduler's order), huge = the mainloop outlasts every burst.
  for (std::uint32_t cap : {1u, 2u, 5u, 4096u})
    for (std::uint64_t done : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3},
                               std::uint64_t{cap} - 1, std::uint64_t{cap}, std::uint64_t{cap} + 1, ~std::uint64_t{0}}) {
      const std::uint32_t n = rs::storer_bursts_issued(cap, done);
      EXPECT_EQ(n, std::min<std::uint64_t>(cap, std::max<std::uint64_t>(1, done))) << "cap " << cap << " done " << done;
      const rs::StorerCount judged = rs::judge_storer_count(n, cap);
      EXPECT_TRUE(judged == (n == cap ? rs::StorerCount::kAtCap : rs::StorerCount::kValid))
          << "cap " << cap << " done " << done << ": " << n << " bursts judged " << static_cast<int>(judged);
    }
  EXPECT_EQ(rs::storer_bursts_issued(0, 0), 0u);  // the baseline launch stores nothing
  EXPECT_EQ(rs::storer_bursts_issued(0, ~std::uint64_t{0}), 0u);
  EXPECT_EQ(rs::judge_storer_count(0, 0), rs::StorerCount::kValid);
  EXPECT_EQ(rs::judge_storer_count(1, 0), rs::StorerCount::kOverCap);
  EXPECT_EQ(rs::judge_storer_count(0, 7), rs::StorerCount::kNone);
  EXPECT_EQ(rs::judge_storer_count(8, 7), rs::StorerCount::kOverCap);
}

// The kernel's stores of several launches on a CPU copy of the ring (the same layout functions), with per-CTA
// counts that differ between CTAs and launches and wrap the ring many times, as a slow mainloop gives; then
// the claim the verifier uses (last_slice_writer / last_row_writer on the per-CTA totals) must predict every
// word, and the unreached slots must still hold the poison.
void expect_claim_matches_stores(const rs::BurstLayout& layout, const std::vector<std::vector<std::uint32_t>>& launches) {
  constexpr std::uint32_t kPoison = rs::kPoisonWord;
  std::vector<std::uint32_t> ring(layout.ring_bytes() / 4, kPoison);
  std::vector<std::uint64_t> base(layout.num_producers, 0);
  const std::uint64_t words_per_slice = layout.bytes_per_producer / 4;
  const rs::RowPermutation perm = layout.row_permutation();
  for (const auto& counts : launches)
    for (std::uint32_t c = 0; c < layout.num_producers; ++c) {
      for (std::uint64_t b = base[c]; b < base[c] + counts[c]; ++b)
        for (std::uint64_t w = 0; w < words_per_slice; ++w) {
          const std::uint64_t byte = layout.scattered()
              ? perm(layout.logical_row(b, c, w / 64)) * rs::BurstLayout::kRowBytes + 4 * (w % 64)
              : layout.slice_offset_bytes(b, c) + 4 * w;
          ring[byte / 4] = rs::pattern_seed(b, c) ^ static_cast<std::uint32_t>(w);
        }
      base[c] += counts[c];
    }
  std::uint64_t checked = 0;
  if (layout.scattered()) {
    for (std::uint64_t logical = 0; logical < layout.num_rows(); ++logical) {
      const std::uint64_t owner = (logical % layout.rows_per_burst()) / layout.rows_per_producer();
      const std::uint64_t row_word = perm(static_cast<std::uint32_t>(logical)) * rs::BurstLayout::kRowBytes / 4;
      rs::RowWriter wr;
      const bool written = owner < layout.num_producers && rs::last_row_writer(layout, base[owner], logical, &wr);
      for (std::uint64_t w = 0; w < 64; ++w, ++checked) {
        const std::uint32_t expected = written ? rs::pattern_seed(wr.burst_idx, wr.producer_idx) ^
                                                     static_cast<std::uint32_t>(wr.row * 64 + w)
                                               : kPoison;
        ASSERT_EQ(ring[row_word + w], expected) << "logical row " << logical << " word " << w;
      }
    }
  } else {
    for (std::uint32_t slot = 0; slot < layout.num_slots; ++slot)
      for (std::uint32_t c = 0; c < layout.num_producers; ++c) {
        std::uint64_t b = 0;
        const bool written = rs::last_slice_writer(layout, base[c], slot, &b);
        const std::uint64_t first = (slot * layout.volume_bytes() + c * layout.bytes_per_producer) / 4;
        for (std::uint64_t w = 0; w < words_per_slice; ++w, ++checked)
          ASSERT_EQ(ring[first + w], written ? rs::pattern_seed(b, c) ^ static_cast<std::uint32_t>(w) : kPoison)
              << "slot " << slot << " CTA " << c << " word " << w << " after " << base[c] << " bursts";
      }
  }
  EXPECT_EQ(checked * 4, layout.ring_bytes());
}

TEST(LoadedLayout, TheRingClaimHoldsForAnyPerCtaBurstCountsAcrossLaunches) {
  // A full-speed point (a few bursts each), a slow one (hundreds, wrapping the 4-slot ring), burst 0 only.
  const std::vector<std::vector<std::uint32_t>> launches = {{3, 4, 3}, {1, 1, 1}, {517, 2, 96}, {2, 255, 1}};
  rs::BurstLayout fresh;
  fresh.bytes_per_producer = 13 * 256;
  fresh.num_producers = 3;
  fresh.num_slots = 4;
  expect_claim_matches_stores(fresh, launches);
  expect_claim_matches_stores(fresh, {{1, 0, 2}});  // a CTA with no burst yet keeps its slices poisoned
  rs::BurstLayout rows = fresh;
  rows.num_slots = 1;
  rows.row_bits = rs::scattered_row_bits(2 * 3 * 13 * 256 + 5 * 256);  // 128 rows: S = 3 bursts of 39, 11 spare
  rows.row_seed = 7;
  ASSERT_GE(rows.scattered_burst_slots(), 2u);
  expect_claim_matches_stores(rows, launches);
}

}  // namespace
}  // namespace xs::sim
