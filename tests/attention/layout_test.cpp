// xstage attention unit tests: shared-memory carve-up (disjoint, aligned, within 227 KiB, bank-conflict
// free staging) and the Ulysses destination mapping (owner rank, disjoint and covering offsets).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "attention/layout.cuh"

namespace xs::kernels::attention {
namespace {

struct Region {
  std::uint32_t begin, end;
  const char* name;
};

TEST(SmemLayout, RegionsDisjointAlignedAndWithinBudget) {
  std::vector<Region> r;
  r.push_back({SmemLayout::kQOffset, SmemLayout::kQOffset + SmemLayout::kQBytes, "Q"});
  for (int s = 0; s < TileShape::kStages; ++s) {
    r.push_back({SmemLayout::k_offset(s), SmemLayout::k_offset(s) + SmemLayout::kTileBytes, "K"});
    r.push_back({SmemLayout::v_offset(s), SmemLayout::v_offset(s) + SmemLayout::kTileBytes, "V"});
  }
  for (int c = 0; c < TileShape::kNumConsumerWarpgroups; ++c)
    r.push_back({SmemLayout::staging_offset(c), SmemLayout::staging_offset(c) + SmemLayout::kStagingBytes, "staging"});
  r.push_back({SmemLayout::kBarrierOffset, SmemLayout::kBarrierOffset + SmemLayout::kNumBarriers * 8, "barriers"});
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_LE(r[i].end, SmemLayout::kUsedBytes) << r[i].name;
    for (std::size_t j = i + 1; j < r.size(); ++j)
      EXPECT_TRUE(r[i].end <= r[j].begin || r[j].end <= r[i].begin) << r[i].name << " overlaps " << r[j].name;
  }
  // TMA destinations with 128B swizzle and wgmma atoms: 1024-byte aligned, also each column half.
  for (const auto& x : r)
    if (std::string(x.name) == "Q" || std::string(x.name) == "K" || std::string(x.name) == "V") {
      EXPECT_EQ(x.begin % 1024, 0u) << x.name;
      EXPECT_EQ((x.begin + SmemLayout::kHalfRowsBytes) % 1024, 0u) << x.name;
    }
  EXPECT_EQ(SmemLayout::kBarrierOffset % 8, 0u);
  EXPECT_LE(SmemLayout::kDynamicBytes, 227u * 1024u);
  EXPECT_EQ(SmemLayout::kDynamicBytes, SmemLayout::kUsedBytes + 1024u);  // alignment slack
  // The consumer's 64-row slice of Q starts on a swizzle atom (8 rows x 128 B).
  EXPECT_EQ(TileShape::kRowsPerConsumer * 128 % 1024, 0);
}

TEST(SmemLayout, StagingWritesAndReadsAreBankConflictFree) {
  const std::uint32_t pitch = SmemLayout::kStagingPitchBytes;
  // Fragment writes: lane -> (row lane/4, col 8j + 2(lane%4)) as 4-byte words: 32 distinct banks.
  for (int j = 0; j < 16; ++j) {
    std::set<std::uint32_t> banks;
    for (int lane = 0; lane < 32; ++lane) {
      const std::uint32_t addr = (lane / 4) * pitch + (8 * j + 2 * (lane % 4)) * 2;
      banks.insert((addr / 4) % 32);
    }
    EXPECT_EQ(banks.size(), 32u) << "j " << j;
  }
  // 16-byte row reads: each quarter-warp (8 lanes) reads 128 contiguous bytes of one row.
  for (int q = 0; q < 4; ++q) {
    std::set<std::uint32_t> banks;
    for (int lane = 8 * q; lane < 8 * q + 8; ++lane) {
      const std::uint32_t addr = (lane / 16) * pitch + (lane % 16) * 16;
      for (int w = 0; w < 4; ++w) banks.insert((addr / 4 + w) % 32);
    }
    EXPECT_EQ(banks.size(), 32u);
  }
}

TEST(UlyssesLayout, OwnerRankIsTokenTimesPOverM) {
  UlyssesLayout u{1024, 8, 2, 2, 0, 128};
  for (std::uint32_t t = 0; t < 1024; ++t) {
    EXPECT_EQ(u.owner_rank(t), t * 8 / 1024);
    EXPECT_EQ(u.owner_rank(t) * u.tokens_per_rank() + u.token_in_rank(t), t);
  }
}

TEST(UlyssesLayout, OffsetsDisjointAndCoveringPerRank) {
  for (std::uint32_t ranks : {1u, 2u, 8u}) {
    // Compact (single-sender) buffers: every element of every rank written exactly once.
    UlyssesLayout u{512, ranks, 3, 3, 0, 128};
    std::vector<std::vector<int>> hits(ranks, std::vector<int>(u.dst_bytes_per_rank() / 2, 0));
    for (std::uint32_t h = 0; h < 3; ++h)
      for (std::uint32_t t = 0; t < 512; ++t) {
        const std::uint64_t off = u.dst_element_offset(h, t);
        ASSERT_LE(off + 128, hits[u.owner_rank(t)].size());
        for (int c = 0; c < 128; ++c) ++hits[u.owner_rank(t)][off + c];
      }
    for (const auto& rank : hits)
      for (int v : rank) ASSERT_EQ(v, 1);
  }
}

TEST(UlyssesLayout, SendersOfAGroupFillDisjointHeadSlices) {
  // P = 4 senders with 2 heads each fill a 8-head destination row together, without overlap.
  constexpr std::uint32_t P = 4, H = 2, M = 256;
  std::vector<std::vector<int>> hits(P);
  for (std::uint32_t sender = 0; sender < P; ++sender) {
    UlyssesLayout u{M, P, H, P * H, sender * H, 128};
    for (auto& r : hits) r.resize(u.dst_bytes_per_rank() / 2, 0);
    EXPECT_EQ(u.sent_bytes_per_rank() * P, u.dst_bytes_per_rank());
    for (std::uint32_t h = 0; h < H; ++h)
      for (std::uint32_t t = 0; t < M; ++t)
        for (int c = 0; c < 128; ++c) ++hits[u.owner_rank(t)][u.dst_element_offset(h, t) + c];
  }
  for (const auto& rank : hits)
    for (int v : rank) ASSERT_EQ(v, 1);
}

TEST(LocalLayout, RowMajorPerHead) {
  EXPECT_EQ(local_element_offset(0, 0, 1024, 128), 0u);
  EXPECT_EQ(local_element_offset(0, 1, 1024, 128), 128u);
  EXPECT_EQ(local_element_offset(2, 5, 1024, 128), (2u * 1024 + 5) * 128);
}

}  // namespace
}  // namespace xs::kernels::attention
