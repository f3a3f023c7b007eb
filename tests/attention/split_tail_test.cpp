// xstage attention unit tests: the split tail (scheduler.cuh kv_splits / split_units, config.hpp
// resolve_tail_split, layout.cuh SplitPartialLayout). Enumerated as the kernel's producers hand out units
// (static stride, or dynamic tickets in the order simulated CTAs ask): every (tile, KV tile) is computed
// exactly once, a split tile's pieces are consecutive units over disjoint ranges that cover [0, M / b_n),
// record slots and partial blocks never collide.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <random>
#include <set>
#include <vector>

#include "xs/kernels/attention/config.hpp"
#include "xs/kernels/attention/layout.cuh"
#include "xs/kernels/attention/scheduler.cuh"

namespace xs::kernels::attention {
namespace {

// Units per cluster, as the producers get them: the static stride, or dynamic tickets drawn by whichever
// cluster's current unit ends first (unit time proportional to its KV count, per-cluster speed at random).
std::vector<std::vector<std::uint32_t>> units_per_cluster(const TileScheduler& s, std::mt19937& rng) {
  std::vector<std::vector<std::uint32_t>> units(s.num_clusters());
  std::uniform_real_distribution<double> speed(0.8, 1.25);
  std::vector<double> slowness(s.num_clusters());
  for (double& x : slowness) x = speed(rng);
  using Event = std::pair<double, std::uint32_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q;
  for (std::uint32_t c = 0; c < s.num_clusters(); ++c) {
    const std::uint32_t first = s.first_unit(c);
    if (!s.valid_unit(first)) continue;
    units[c].push_back(first);
    if (!s.dynamic) {
      for (std::uint32_t u = s.next_unit(first); s.valid_unit(u); u = s.next_unit(u)) units[c].push_back(u);
    } else {
      q.push({slowness[c] * s.kv_count(first), c});
    }
  }
  std::uint32_t ticket = 0;
  while (!q.empty()) {
    const auto [now, c] = q.top();
    q.pop();
    const std::uint32_t u = s.ticket_unit(ticket++);
    if (!s.valid_unit(u)) {
      EXPECT_FALSE(s.valid(s.tile_of(u, 0))) << "a unit past the end maps to a valid tile";
      continue;
    }
    units[c].push_back(u);
    q.push({now + slowness[c] * s.kv_count(u), c});
  }
  return units;
}

TEST(SplitTail, EveryTileAndKvTileOnceOverEveryScheduleAndCluster) {
  std::mt19937 rng(2026);
  int configurations = 0, with_splits = 0;
  for (bool dynamic : {false, true})
    for (std::uint32_t cs : {1u, 2u})
      for (std::uint32_t heads : {1u, 8u})
        for (std::uint32_t m_blocks : {2u, 64u})
          for (std::uint32_t ctas : {2u, 8u, 132u})
            for (std::uint32_t kv_tiles : {1u, 3u, 64u})
              for (int splits : {1, 2, 3, 4, 8})
                for (int units_asked : {0, 5, 100000}) {
                  TileScheduler s{heads, m_blocks, std::min(ctas, heads * m_blocks) / cs * cs, dynamic, cs};
                  s.num_kv_tiles = kv_tiles;
                  const TailSplit t = resolve_tail_split(splits, units_asked, static_cast<int>(s.num_tile_units()),
                                                         static_cast<int>(s.num_clusters()), static_cast<int>(kv_tiles));
                  s.kv_splits = static_cast<std::uint32_t>(t.kv_splits);
                  s.split_units = static_cast<std::uint32_t>(t.split_units);
                  SCOPED_TRACE(testing::Message() << "dynamic " << dynamic << " cs " << cs << " heads " << heads
                                                  << " m_blocks " << m_blocks << " ctas " << s.num_ctas << " kv "
                                                  << kv_tiles << " splits " << s.kv_splits << " units " << s.split_units);
                  ++configurations;
                  if (s.splits()) ++with_splits;
                  const auto units = units_per_cluster(s, rng);
                  // covered[tile][kv] counts computations of KV tile kv for output tile tile.
                  std::vector<std::vector<int>> covered(s.num_tiles(), std::vector<int>(kv_tiles, 0));
                  std::set<std::uint32_t> record_slots;
                  std::vector<int> storers(s.num_tiles(), 0);
                  for (std::uint32_t c = 0; c < s.num_clusters(); ++c)
                    for (std::uint32_t u : units[c]) {
                      ASSERT_TRUE(s.valid_unit(u));
                      ASSERT_GE(s.kv_count(u), 1u);
                      ASSERT_LE(s.kv_begin(u) + s.kv_count(u), kv_tiles);
                      for (std::uint32_t rank = 0; rank < cs; ++rank) {
                        const std::uint32_t tile = s.tile_of(u, rank);
                        ASSERT_TRUE(s.valid(tile));
                        for (std::uint32_t j = s.kv_begin(u); j < s.kv_begin(u) + s.kv_count(u); ++j) ++covered[tile][j];
                        ASSERT_TRUE(record_slots.insert(s.record_slot(u, rank)).second) << "record slot used twice";
                        ASSERT_LT(s.record_slot(u, rank), s.num_record_slots());
                        EXPECT_EQ(s.coord(tile).head, s.coord(s.tile_of(u, 0)).head) << "cluster over two heads";
                        // The kernel's piece predicate (a warp vote on u >= num_whole_units) and its Q-loop
                        // count (num_kv_tiles / kv_splits for every piece: resolve takes a divisor).
                        ASSERT_EQ(s.kv_parts(u) > 1, u >= s.num_whole_units());
                        if (s.kv_parts(u) > 1) {
                          ASSERT_EQ(s.kv_count(u), kv_tiles / s.kv_splits);
                          ASSERT_LT(s.split_tile_idx(tile), s.num_split_tiles());
                          ASSERT_LT(s.kv_part(u), s.kv_parts(u));
                        } else {
                          ++storers[tile];
                        }
                      }
                    }
                  for (std::uint32_t tile = 0; tile < s.num_tiles(); ++tile)
                    for (std::uint32_t j = 0; j < kv_tiles; ++j)
                      ASSERT_EQ(covered[tile][j], 1) << "tile " << tile << " KV tile " << j;
                  EXPECT_EQ(record_slots.size(), s.num_record_slots());
                  // Split tiles are exactly the last split_units tile units; whole tiles store themselves.
                  for (std::uint32_t tile = 0; tile < s.num_tiles(); ++tile)
                    EXPECT_EQ(storers[tile], tile < s.num_whole_units() * cs ? 1 : 0) << "tile " << tile;
                }
  EXPECT_GT(with_splits, configurations / 3);
}

TEST(SplitTail, PiecesOfATileAreConsecutiveUnitsInOrder) {
  TileScheduler s{8, 64, 132, true, 1};
  s.num_kv_tiles = 63;
  s.kv_splits = 3;
  s.split_units = 132;
  ASSERT_EQ(s.num_whole_units(), 512u - 132u);
  ASSERT_EQ(s.num_units(), 512u - 132u + 3u * 132u);
  for (std::uint32_t u = s.num_whole_units(); u < s.num_units(); u += 3) {
    const std::uint32_t tile = s.tile_of(u, 0);
    std::uint32_t next_begin = 0;
    for (std::uint32_t q = 0; q < 3; ++q) {
      EXPECT_EQ(s.tile_of(u + q, 0), tile);
      EXPECT_EQ(s.kv_part(u + q), q);
      EXPECT_EQ(s.kv_begin(u + q), next_begin);
      next_begin += s.kv_count(u + q);
    }
    EXPECT_EQ(next_begin, 63u);
    EXPECT_EQ(s.kv_count(u), 21u);  // equal pieces
    EXPECT_EQ(s.kv_begin(u + 2), 42u);
  }
  // Whole units cover everything; past the end stays invalid.
  EXPECT_EQ(s.kv_begin(0), 0u);
  EXPECT_EQ(s.kv_count(0), 63u);
  for (std::uint32_t k = 0; k < 300; ++k) EXPECT_FALSE(s.valid(s.tile_of(s.num_units() + k, 0)));
}

TEST(SplitTail, ResolveCapsPiecesAndUnits) {
  // Off: 1 split, or a single KV tile.
  EXPECT_EQ(resolve_tail_split(1, 0, 512, 132, 64).kv_splits, 1);
  EXPECT_EQ(resolve_tail_split(1, 0, 512, 132, 64).split_units, 0);
  EXPECT_EQ(resolve_tail_split(4, 0, 512, 132, 1).split_units, 0);
  // Default units: one per cluster (the last round); capped at every unit; pieces at the KV tiles.
  EXPECT_EQ(resolve_tail_split(2, 0, 512, 132, 64).split_units, 132);
  EXPECT_EQ(resolve_tail_split(2, 0, 256, 66, 64).split_units, 66);
  EXPECT_EQ(resolve_tail_split(2, 0, 40, 132, 64).split_units, 40);
  EXPECT_EQ(resolve_tail_split(2, 7, 512, 132, 64).split_units, 7);
  EXPECT_EQ(resolve_tail_split(8, 0, 512, 132, 3).kv_splits, 3);
  // Equally long pieces: the largest divisor of the KV tiles up to the pieces asked for.
  EXPECT_EQ(resolve_tail_split(3, 0, 512, 132, 64).kv_splits, 2);
  EXPECT_EQ(resolve_tail_split(8, 0, 512, 132, 12).kv_splits, 6);
  EXPECT_EQ(resolve_tail_split(4, 0, 512, 132, 7).kv_splits, 1);
  EXPECT_EQ(resolve_tail_split(4, 0, 512, 132, 7).split_units, 0);
  for (int kv = 1; kv <= 64; ++kv)
    for (int asked = 1; asked <= 8; ++asked) {
      const TailSplit t = resolve_tail_split(asked, 0, 512, 132, kv);
      EXPECT_EQ(kv % t.kv_splits, 0) << kv << " KV tiles, " << asked << " asked";
      EXPECT_LE(t.kv_splits, asked);
    }
}

TEST(SplitTail, PartialBlocksAreDisjointAndSized) {
  for (std::uint32_t splits : {2u, 3u, 8u}) {
    using L = SplitPartialLayout<128>;
    const std::uint32_t tiles = 5;
    std::set<std::uint64_t> starts;
    for (std::uint32_t t = 0; t < tiles; ++t)
      for (std::uint32_t c = 0; c < 2; ++c)
        for (std::uint32_t q = 0; q < splits; ++q) {
          const std::uint64_t b = L::block(t, c, q, splits);
          EXPECT_EQ(b % L::kFloats, 0u);
          EXPECT_LE(b + L::kFloats, L::total_floats(tiles, splits));
          EXPECT_TRUE(starts.insert(b).second);
        }
    EXPECT_EQ(starts.size() * L::kFloats, L::total_floats(tiles, splits));
  }
  // O accumulators, then 2 maxima and 2 sums per thread.
  EXPECT_EQ(SplitPartialLayout<128>::kElems, 68u);
  EXPECT_EQ(SplitPartialLayout<64>::kElems, 36u);
  EXPECT_EQ(SplitPartialLayout<128>::kSumOffset, SplitPartialLayout<128>::kMaxOffset + 2);
}

}  // namespace
}  // namespace xs::kernels::attention
