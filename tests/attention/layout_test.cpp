// xstage attention unit tests: shared-memory carve-up for both built head dims (disjoint, aligned, within
// 227 KiB, bank-conflict free staging), the epilogue's store map (every chunk once, whole rows per warp) and
// the Ulysses destination mapping (owner rank, disjoint and covering offsets).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "xs/kernels/attention/layout.cuh"

namespace xs::kernels::attention {
namespace {

struct Region {
  std::uint32_t begin, end;
  const char* name;
};

template <int D>
void check_regions_disjoint_aligned_within_budget() {
  using SmemLayout = SmemLayoutD<D>;
  using TileShape = TileShapeD<D>;
  SCOPED_TRACE("head dim " + std::to_string(D));
  std::vector<Region> r;
  r.push_back({SmemLayout::kQOffset, SmemLayout::kQOffset + SmemLayout::kQBytes, "Q"});
  for (int s = 0; s < TileShape::kStages; ++s) {
    r.push_back({SmemLayout::k_offset(s), SmemLayout::k_offset(s) + SmemLayout::kTileBytes, "K"});
    r.push_back({SmemLayout::v_offset(s), SmemLayout::v_offset(s) + SmemLayout::kTileBytes, "V"});
  }
  for (int c = 0; c < TileShape::kNumConsumerWarpgroups; ++c)
    r.push_back({SmemLayout::staging_offset(c), SmemLayout::staging_offset(c) + SmemLayout::kStagingBytes, "staging"});
  r.push_back({SmemLayout::kBarrierOffset, SmemLayout::kBarrierOffset + SmemLayout::kNumBarriers * 8, "barriers"});
  r.push_back({SmemLayout::kTileSlotOffset, SmemLayout::kTileSlotOffset + 16, "tile slot"});
  r.push_back({SmemLayout::kSplitArrivalOffset, SmemLayout::kSplitArrivalOffset + 8, "split arrivals"});
  r.push_back({SmemLayout::kUnitMailboxOffset, SmemLayout::kUnitMailboxOffset + 4, "unit mailbox"});
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_LE(r[i].end, SmemLayout::kUsedBytes) << r[i].name;
    for (std::size_t j = i + 1; j < r.size(); ++j)
      EXPECT_TRUE(r[i].end <= r[j].begin || r[j].end <= r[i].begin) << r[i].name << " overlaps " << r[j].name;
  }
  // TMA destinations with 128B swizzle and wgmma atoms: 1024-byte aligned, also each column half.
  for (const auto& x : r)
    if (std::string(x.name) == "Q" || std::string(x.name) == "K" || std::string(x.name) == "V") {
      EXPECT_EQ(x.begin % 1024, 0u) << x.name;
      for (int h = 0; h < TileShape::kNumColHalves; ++h) {
        EXPECT_EQ((x.begin + h * SmemLayout::kHalfRowsBytes) % 1024, 0u) << x.name;
        // kv_cluster_size 2: each CTA's multicast half (b_n / 2 keys) starts inside the column half.
        EXPECT_EQ((x.begin + h * SmemLayout::kHalfRowsBytes + TileShape::kBlockN / 2 * 128) % 1024, 0u) << x.name;
      }
    }
  // A tile is exactly its column halves (what the producer's expect_tx counts).
  EXPECT_EQ(SmemLayout::kTileBytes, TileShape::kNumColHalves * SmemLayout::kHalfRowsBytes);
  EXPECT_EQ(SmemLayout::kQBytes, TileShape::kNumColHalves * SmemLayout::kHalfRowsBytes);
  EXPECT_EQ(SmemLayout::kBarrierOffset % 8, 0u);
  EXPECT_LE(SmemLayout::kDynamicBytes, 227u * 1024u);
  EXPECT_EQ(SmemLayout::kDynamicBytes, SmemLayout::kUsedBytes + 1024u);  // alignment slack
  // The consumer's 64-row slice of Q starts on a swizzle atom (8 rows x 128 B).
  EXPECT_EQ(TileShape::kRowsPerConsumer * 128 % 1024, 0);
  EXPECT_EQ(TileShape::kAccumulators * 128, TileShape::kRowsPerConsumer * D) << "O fragment covers 64 x d";
}

TEST(SmemLayout, RegionsDisjointAlignedAndWithinBudget) {
  check_regions_disjoint_aligned_within_budget<128>();
  check_regions_disjoint_aligned_within_budget<64>();
  // The head-dim-128 numbers the kernel comment states: 194 KiB used.
  EXPECT_EQ(SmemLayout::kUsedBytes / 1024, 194u);
}

template <int D>
void check_staging_bank_conflict_free() {
  SCOPED_TRACE("head dim " + std::to_string(D));
  using Map = EpilogueStoreMap<D>;
  const std::uint32_t pitch = SmemLayoutD<D>::kStagingPitchBytes;
  // Fragment writes: lane -> (row lane/4, col 8j + 2(lane%4)) as 4-byte words: 32 distinct banks.
  for (int j = 0; j < D / 8; ++j) {
    std::set<std::uint32_t> banks;
    for (int lane = 0; lane < 32; ++lane) {
      const std::uint32_t addr = (lane / 4) * pitch + (8 * j + 2 * (lane % 4)) * 2;
      banks.insert((addr / 4) % 32);
    }
    EXPECT_EQ(banks.size(), 32u) << "j " << j;
  }
  // 16-byte row reads of pass 0 (the store map): each quarter-warp (8 lanes) reads 128 distinct-bank bytes.
  for (std::uint32_t warp = 0; warp < 4; ++warp)
    for (std::uint32_t q = 0; q < 4; ++q) {
      std::set<std::uint32_t> banks;
      for (std::uint32_t lane = 8 * q; lane < 8 * q + 8; ++lane) {
        const std::uint32_t t = 32 * warp + lane;
        const std::uint32_t addr = Map::row(0, t) * pitch + Map::chunk(t) * 16;
        for (std::uint32_t w = 0; w < 4; ++w) banks.insert((addr / 4 + w) % 32);
      }
      EXPECT_EQ(banks.size(), 32u) << "warp " << warp << " quarter " << q;
    }
}

TEST(SmemLayout, StagingWritesAndReadsAreBankConflictFree) {
  check_staging_bank_conflict_free<128>();
  check_staging_bank_conflict_free<64>();
}

template <int D>
void check_store_map_covers_the_tile_once() {
  SCOPED_TRACE("head dim " + std::to_string(D));
  using Map = EpilogueStoreMap<D>;
  std::vector<int> hits(64 * Map::kChunks, 0);
  for (int ps = 0; ps < Map::kPasses; ++ps)
    for (std::uint32_t t = 0; t < 128; ++t) {
      ASSERT_LT(Map::row(ps, t), 64u);
      ASSERT_LT(Map::chunk(t), Map::kChunks);
      ++hits[Map::row(ps, t) * Map::kChunks + Map::chunk(t)];
    }
  for (int h : hits) ASSERT_EQ(h, 1);
  // Coalescing: a warp's 32 stores of one pass are whole rows (32 / kChunks rows, every chunk of each).
  for (std::uint32_t warp = 0; warp < 4; ++warp) {
    std::set<std::uint32_t> rows;
    for (std::uint32_t lane = 0; lane < 32; ++lane) rows.insert(Map::row(0, 32 * warp + lane));
    EXPECT_EQ(rows.size(), 32u / Map::kChunks);
  }
}

TEST(EpilogueStoreMap, EveryChunkOfTheStagedTileStoredOnceInWholeRows) {
  check_store_map_covers_the_tile_once<128>();
  check_store_map_covers_the_tile_once<64>();
  // Head dim 128 keeps the kernel's original 8 rows x 16 threads per pass, 8 passes.
  EXPECT_EQ(EpilogueStoreMap<128>::kPasses, 8);
  EXPECT_EQ(EpilogueStoreMap<128>::row(3, 37), 8u * 3 + 37 / 16);
  EXPECT_EQ(EpilogueStoreMap<128>::chunk(37), 37u % 16);
  EXPECT_EQ(EpilogueStoreMap<64>::kPasses, 4);
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
