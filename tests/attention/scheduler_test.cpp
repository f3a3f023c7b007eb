// xstage attention unit tests: the persistent tile scheduler visits every (head, m-block) exactly once
// over all CTAs, in the order the producer and consumers of a CTA both follow.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <random>
#include <vector>

#include "xs/kernels/attention/config.hpp"
#include "xs/kernels/attention/scheduler.cuh"

namespace xs::kernels::attention {
namespace {

TEST(TileScheduler, EveryTileOnceAcrossCtas) {
  for (std::uint32_t heads : {1u, 3u, 8u}) {
    for (std::uint32_t m_blocks : {1u, 2u, 64u, 512u}) {
      for (std::uint32_t ctas : {1u, 7u, 132u, 1000u}) {
        TileScheduler s{heads, m_blocks, ctas};
        std::vector<int> visits(s.num_tiles(), 0);
        std::uint32_t total = 0;
        for (std::uint32_t cta = 0; cta < ctas; ++cta) {
          std::uint32_t n = 0;
          for (std::uint32_t t = s.first_tile(cta); s.valid(t); t = s.next_unit(t), ++n) {
            ASSERT_LT(t, s.num_tiles());
            ++visits[t];
            const TileCoord c = s.coord(t);
            ASSERT_LT(c.head, heads);
            ASSERT_LT(c.m_block, m_blocks);
            ASSERT_EQ(c.head * m_blocks + c.m_block, t);
          }
          ASSERT_EQ(n, s.num_tiles_of(cta)) << "cta " << cta;
          total += n;
        }
        ASSERT_EQ(total, s.num_tiles());
        for (std::uint32_t t = 0; t < s.num_tiles(); ++t) ASSERT_EQ(visits[t], 1) << "tile " << t;
      }
    }
  }
}

// The dynamic scheduler as the kernel runs it (mainloop.cuh producer_loop): each CTA starts with tile
// cta_idx and draws its next ticket one tile ahead; tickets come from one counter in the order the CTAs ask
// (simulated: the CTA whose current tile ends first draws next; SM speeds drawn at random, some CTAs slow).
// Every tile runs once, every CTA draws exactly one ticket past the end (so the kernel's "last CTA done"
// count sees every CTA), and a slow CTA runs no more tiles than a fast one.
TEST(TileScheduler, DynamicTicketsRunEveryTileOnceAndSlowCtasTakeFewer) {
  std::mt19937 rng(12345);
  for (std::uint32_t heads : {1u, 8u}) {
    for (std::uint32_t m_blocks : {1u, 64u, 512u}) {
      for (std::uint32_t ctas : {1u, 7u, 132u}) {
        TileScheduler s{heads, m_blocks, std::min(ctas, heads * m_blocks), true};
        std::uniform_real_distribution<double> speed(0.9, 1.1);
        std::vector<double> tile_time(s.num_ctas);
        for (auto& t : tile_time) t = speed(rng);
        tile_time[0] = 1.5;  // one slow SM
        std::vector<int> visits(s.num_tiles(), 0), tiles_of(s.num_ctas, 0), past_end(s.num_ctas, 0);
        std::uint32_t ticket = 0;
        using Event = std::pair<double, std::uint32_t>;  // (time the CTA draws its next ticket, cta)
        std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q;
        for (std::uint32_t cta = 0; cta < s.num_ctas; ++cta) {
          const std::uint32_t t = s.first_tile(cta);
          ASSERT_TRUE(s.valid(t));
          ++visits[t];
          ++tiles_of[cta];
          q.push({0.0, cta});  // draws the next ticket while its first tile loads
        }
        while (!q.empty()) {
          const auto [now, cta] = q.top();
          q.pop();
          const std::uint32_t t = s.ticket_unit(ticket++);
          if (!s.valid(t)) {
            ++past_end[cta];
            continue;
          }
          ++visits[t];
          ++tiles_of[cta];
          q.push({now + tile_time[cta], cta});
        }
        for (std::uint32_t t = 0; t < s.num_tiles(); ++t) ASSERT_EQ(visits[t], 1) << "tile " << t;
        for (std::uint32_t cta = 0; cta < s.num_ctas; ++cta) ASSERT_EQ(past_end[cta], 1) << "cta " << cta;
        if (s.num_ctas > 1 && s.num_tiles() >= 4 * s.num_ctas) {
          const int most = *std::max_element(tiles_of.begin(), tiles_of.end());
          EXPECT_LT(tiles_of[0], most) << "the slow CTA should run fewer tiles (" << heads << "x" << m_blocks << ")";
        }
      }
    }
  }
}

// Clusters of 2 (kv_cluster_size): the producers of both ranks follow the same units, rank r runs tile
// 2 unit + r, so the two CTAs of a cluster always run two m-blocks of one head (they share every K/V tile),
// every tile runs once, static and dynamic (rank 0 draws, rank 1 receives the same unit).
TEST(TileScheduler, ClustersOf2RunEveryTileOnceAndShareAHead) {
  std::mt19937 rng(777);
  for (bool dynamic : {false, true}) {
    for (std::uint32_t heads : {1u, 3u, 8u}) {
      for (std::uint32_t m_blocks : {2u, 64u, 512u}) {
        for (std::uint32_t ctas : {2u, 8u, 132u}) {
          TileScheduler s{heads, m_blocks, std::min(ctas, heads * m_blocks), dynamic, 2};
          ASSERT_EQ(s.num_ctas % 2, 0u);
          std::vector<int> visits(s.num_tiles(), 0);
          // Units per cluster, as the producers get them: static stride, or tickets in the order clusters ask.
          std::vector<std::vector<std::uint32_t>> units(s.num_clusters());
          std::uniform_real_distribution<double> speed(0.8, 1.2);
          using Event = std::pair<double, std::uint32_t>;
          std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q;
          std::uint32_t ticket = 0;
          for (std::uint32_t c = 0; c < s.num_clusters(); ++c) {
            units[c].push_back(s.first_unit(c));
            if (!dynamic) {
              for (std::uint32_t u = s.next_unit(s.first_unit(c)); s.valid_unit(u); u = s.next_unit(u)) units[c].push_back(u);
            } else {
              q.push({0.0, c});
            }
          }
          while (!q.empty()) {
            const auto [now, c] = q.top();
            q.pop();
            const std::uint32_t u = s.ticket_unit(ticket++);
            if (!s.valid_unit(u)) continue;
            units[c].push_back(u);
            q.push({now + speed(rng), c});
          }
          for (std::uint32_t c = 0; c < s.num_clusters(); ++c) {
            for (std::uint32_t rank = 0; rank < 2; ++rank) {
              const std::uint32_t cta = 2 * c + rank;
              ASSERT_EQ(s.first_tile(cta), s.tile_of(units[c][0], rank));
              for (std::uint32_t u : units[c]) {
                ASSERT_TRUE(s.valid_unit(u));
                const std::uint32_t t = s.tile_of(u, rank);
                ASSERT_TRUE(s.valid(t));
                ++visits[t];
                EXPECT_EQ(s.coord(t).head, s.coord(s.tile_of(u, 1 - rank)).head) << "cluster split over two heads";
              }
              if (!dynamic) {
                EXPECT_EQ(s.num_tiles_of(cta), units[c].size());
              }
            }
          }
          for (std::uint32_t t = 0; t < s.num_tiles(); ++t) ASSERT_EQ(visits[t], 1) << "tile " << t;
        }
      }
    }
  }
}

TEST(TileScheduler, CoordsAreDistinct) {
  TileScheduler s{5, 9, 4};
  std::vector<std::vector<int>> seen(5, std::vector<int>(9, 0));
  for (std::uint32_t t = 0; t < s.num_tiles(); ++t) ++seen[s.coord(t).head][s.coord(t).m_block];
  for (const auto& row : seen)
    for (int v : row) EXPECT_EQ(v, 1);
}

TEST(TileScheduler, CoRunningCtasShareAHead) {
  // m_block fastest: the first wave of 132 CTAs over 8 heads x 64 blocks touches 3 heads' K/V, not 8.
  TileScheduler s{8, 64, 132};
  std::vector<bool> head_used(8, false);
  for (std::uint32_t cta = 0; cta < 132; ++cta) head_used[s.coord(s.first_tile(cta)).head] = true;
  int used = 0;
  for (bool b : head_used) used += b;
  EXPECT_EQ(used, 3);
}

// Bands of heads (heads_per_band): every band width that divides the heads is a bijection onto (head, m-block);
// a unit's tiles stay consecutive m-blocks of one head (the cluster shares its K/V); inside a band the head
// changes fastest; width 1 is the m-block-fastest order (coord = (t / m_blocks, t % m_blocks)).
TEST(TileScheduler, HeadBandsAreAPermutationThatKeepsUnitsInOneHead) {
  for (std::uint32_t heads : {1u, 2u, 6u, 8u}) {
    for (std::uint32_t cs : {1u, 2u}) {
      for (std::uint32_t m_blocks : {2u, 8u, 64u}) {
        for (std::uint32_t hb = 1; hb <= heads; ++hb) {
          if (heads % hb != 0) continue;
          TileScheduler s{heads, m_blocks, 132, true, cs, hb};
          std::vector<int> seen(heads * m_blocks, 0);
          for (std::uint32_t t = 0; t < s.num_tiles(); ++t) {
            const TileCoord c = s.coord(t);
            ASSERT_LT(c.head, heads);
            ASSERT_LT(c.m_block, m_blocks);
            ++seen[c.head * m_blocks + c.m_block];
            if (hb == 1) {
              ASSERT_EQ(c.head, t / m_blocks);
              ASSERT_EQ(c.m_block, t % m_blocks);
            }
            if (t % cs != 0) {  // rank r of a unit: the next m-block of rank 0's head
              const TileCoord c0 = s.coord(t - t % cs);
              ASSERT_EQ(c.head, c0.head);
              ASSERT_EQ(c.m_block, c0.m_block + t % cs);
            }
          }
          for (int v : seen) ASSERT_EQ(v, 1) << "heads " << heads << " cs " << cs << " hb " << hb;
          // The first hb units of a band: hb different heads of the band, the same query rows.
          for (std::uint32_t u = 0; u < hb; ++u) {
            const TileCoord c = s.coord(s.tile_of(u, 0));
            EXPECT_EQ(c.head, u);
            EXPECT_EQ(c.m_block, 0u);
          }
        }
      }
    }
  }
}

// auto_heads_per_band on the H200's L2 (50 MiB): K + V of one head is 2 x M x d x 2 bytes; the widest divisor
// band within 3/4 of L2.
TEST(TileScheduler, AutoHeadBandFitsKvInL2) {
  const long long l2 = 50ll << 20;
  EXPECT_EQ(auto_heads_per_band(8, 8192, 128, l2), 8);    // 8 x 4 MiB = 32 MiB <= 37.5
  EXPECT_EQ(auto_heads_per_band(8, 16384, 128, l2), 4);   // 4 x 8 MiB
  EXPECT_EQ(auto_heads_per_band(8, 32768, 128, l2), 2);   // 2 x 16 MiB
  EXPECT_EQ(auto_heads_per_band(8, 49152, 128, l2), 1);   // 24 MiB each: two do not fit
  EXPECT_EQ(auto_heads_per_band(8, 65536, 128, l2), 1);   // 32 MiB: one head alone
  EXPECT_EQ(auto_heads_per_band(8, 32768, 64, l2), 4);    // 8 MiB each at d 64
  EXPECT_EQ(auto_heads_per_band(6, 8192, 128, l2), 6);
  EXPECT_EQ(auto_heads_per_band(6, 16384, 128, l2), 3);   // 4 fits by size but does not divide 6
  EXPECT_EQ(auto_heads_per_band(7, 16384, 128, l2), 1);   // prime: 7 x 8 MiB does not fit
  EXPECT_EQ(auto_heads_per_band(8, 8192, 128, 0), 1);
}

}  // namespace
}  // namespace xs::kernels::attention
