// xstage attention unit tests: the persistent tile scheduler visits every (head, m-block) exactly once
// over all CTAs, in the order the producer and consumers of a CTA both follow.
#include <gtest/gtest.h>

#include <vector>

#include "attention/scheduler.cuh"

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
          for (std::uint32_t t = s.first_tile(cta); s.valid(t); t = s.next_tile(t), ++n) {
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

}  // namespace
}  // namespace xs::kernels::attention
