// xstage kernels layer (attention): where everything lives. Shared-memory carve-up of one CTA, the
// local output layout and the Ulysses post-attention All-to-All destination layout. Header-only and
// callable from host and device: the CPU tests check disjointness/coverage/budget on exactly this code.
#pragma once
#include <cstdint>

#include "xs/kernels/attention/config.hpp"

#ifndef XS_HD
#if defined(__CUDACC__)
#define XS_HD __host__ __device__ __forceinline__
#else
#define XS_HD inline
#endif
#endif

namespace xs::kernels::attention {

// ---- Shared memory (bytes from a 1024-aligned base; 128B-swizzled TMA tiles need 1024 alignment) ----
// For head dim d (TileShapeD<d>):
//   Q      [d/64 col halves][128 rows][64 cols] bf16, 128B swizzle         d/4 KiB (32 KiB at d = 128)
//   K[s]   [d/64 col halves][128 keys][64 cols] bf16, s < kStages          d/4 KiB each
//   V[s]   same shape as K                                                  d/4 KiB each
//   stage[c] output staging of consumer c: [64 rows][d cols] bf16, row pitch 2d + 16 B (16 B pad keeps the
//            fragment writes and the 16 B row reads bank-conflict free)   17 KiB each at d = 128
//   barriers: q_full, q_empty, k_full[s], k_empty[s], v_full[s], v_empty[s], unit_full, unit_empty (8 B each)
//   tile slot: the producer's [tile index, 1 if another tile follows, unit, record slot] for the consumers
//            (16 B), written before it arms q_full, read by the consumers after q_full completes; then one
//            word per consumer warpgroup (8 B) where its thread 0 leaves the split tail's arrival count for
//            the other 127 (split_combine.cuh); then the unit mailbox (4 B): with clusters of 2 and the dynamic
//            scheduler, rank 0's producer writes each unit it drew into rank 1's mailbox (mainloop.cuh
//            following_unit)
template <int D>
struct SmemLayoutD {
  using Shape = TileShapeD<D>;
  static constexpr std::uint32_t kTileBytes = Shape::kBlockN * Shape::kHeadDim * Shape::kElemBytes;
  static constexpr std::uint32_t kQBytes = Shape::kBlockM * Shape::kHeadDim * Shape::kElemBytes;
  static constexpr std::uint32_t kHalfRowsBytes = 128 * Shape::kSwizzleCols * Shape::kElemBytes;  // 16 KiB
  static constexpr std::uint32_t kStagingPitchBytes = Shape::kHeadDim * Shape::kElemBytes + 16;
  static constexpr std::uint32_t kStagingBytes = Shape::kRowsPerConsumer * kStagingPitchBytes;
  static constexpr std::uint32_t kNumBarriers = 2 + 4 * Shape::kStages + 2;

  static constexpr std::uint32_t kQOffset = 0;
  static constexpr std::uint32_t kKOffset = kQOffset + kQBytes;                     // K[0]
  static constexpr std::uint32_t kVOffset = kKOffset + Shape::kStages * kTileBytes;  // V[0]
  static constexpr std::uint32_t kStagingOffset = kVOffset + Shape::kStages * kTileBytes;
  static constexpr std::uint32_t kBarrierOffset =
      (kStagingOffset + Shape::kNumConsumerWarpgroups * kStagingBytes + 7u) & ~7u;
  XS_HD static constexpr std::uint32_t k_offset(int stage) { return kKOffset + stage * kTileBytes; }
  XS_HD static constexpr std::uint32_t v_offset(int stage) { return kVOffset + stage * kTileBytes; }
  XS_HD static constexpr std::uint32_t staging_offset(int consumer) { return kStagingOffset + consumer * kStagingBytes; }
  static constexpr std::uint32_t kTileSlotOffset = kBarrierOffset + kNumBarriers * 8;
  static constexpr std::uint32_t kSplitArrivalOffset = kTileSlotOffset + 16;
  static constexpr std::uint32_t kUnitMailboxOffset = kSplitArrivalOffset + 8;
  static constexpr std::uint32_t kUsedBytes = kUnitMailboxOffset + 8;
  // The dynamic allocation adds 1 KiB so the kernel can round its base up to 1024.
  static constexpr std::uint32_t kDynamicBytes = kUsedBytes + 1024;
  static constexpr std::uint32_t kSm90OptinLimitBytes = 227 * 1024;  // per-block opt-in maximum on sm_90
  static_assert(kDynamicBytes <= kSm90OptinLimitBytes, "shared memory over 227 KiB");
  static_assert(kKOffset % 1024 == 0 && kVOffset % 1024 == 0 && kTileBytes % 1024 == 0,
                "128B-swizzled TMA tiles need 1024-byte alignment");
};
using SmemLayout = SmemLayoutD<128>;
static_assert(SmemLayoutD<64>::kUsedBytes > 0 && SmemLayoutD<128>::kUsedBytes > 0,
              "instantiates both built layouts, so their static_asserts run in every build");

// ---- Epilogue store map (epilogue.cuh step 3) -----------------------------------------------------------
// A consumer warpgroup (128 threads) stores its staged [64 rows][d] tile in 16-byte chunks: kChunks threads
// per row, kRowsPerPass rows per pass; thread t in pass ps handles row row(ps, t), chunk chunk(t). d = 128:
// 16 threads per 256-byte row, 8 rows and 8 passes (a warp writes two whole rows); d = 64: 8, 16, 4.
template <int D>
struct EpilogueStoreMap {
  static constexpr std::uint32_t kChunks = D * TileShapeD<D>::kElemBytes / 16;
  static constexpr std::uint32_t kRowsPerPass = 128 / kChunks;
  static constexpr int kPasses = static_cast<int>(TileShapeD<D>::kRowsPerConsumer / kRowsPerPass);
  XS_HD static constexpr std::uint32_t row(int pass, std::uint32_t thread) {
    return kRowsPerPass * static_cast<std::uint32_t>(pass) + thread / kChunks;
  }
  XS_HD static constexpr std::uint32_t chunk(std::uint32_t thread) { return thread % kChunks; }
};

// ---- Local output (FA-only) ---------------------------------------------------------------------
// Q, K, V, O: [num_heads][seq_len][head_dim] bf16 (a rank's view after the pre-attention All-to-All).
XS_HD std::uint64_t local_element_offset(std::uint32_t head, std::uint32_t token, std::uint32_t seq_len,
                                         std::uint32_t head_dim) {
  return (static_cast<std::uint64_t>(head) * seq_len + token) * head_dim;
}

// ---- Ulysses post-attention All-to-All ------------------------------------------------------------
// The sending rank holds all M tokens of its num_heads heads. Token t belongs to rank
// owner = t * P / M (M divisible by P, so = t / (M/P)). Each rank r receives its sequence slice for
// all heads of the model:
//   dst[r]: [M/P tokens of rank r][dst_num_heads][head_dim] bf16,
// where this sender's head h lands at dst head dst_head_offset + h. In a P-GPU Ulysses group
// dst_num_heads = P * num_heads and dst_head_offset = sender_rank * num_heads; a single-GPU emulation may
// set dst_num_heads = num_heads, dst_head_offset = 0 (compact buffers, one sender's volume).
struct UlyssesLayout {
  std::uint32_t seq_len = 0;          // M
  std::uint32_t num_ranks = 1;        // P
  std::uint32_t num_heads = 0;        // heads this sender computed
  std::uint32_t dst_num_heads = 0;    // heads per destination token row
  std::uint32_t dst_head_offset = 0;  // first destination head of this sender
  std::uint32_t head_dim = 0;

  XS_HD std::uint32_t tokens_per_rank() const { return seq_len / num_ranks; }
  XS_HD std::uint32_t owner_rank(std::uint32_t token) const { return token / tokens_per_rank(); }
  XS_HD std::uint32_t token_in_rank(std::uint32_t token) const { return token % tokens_per_rank(); }
  // Element offset inside dst[owner_rank(token)].
  XS_HD std::uint64_t dst_element_offset(std::uint32_t head, std::uint32_t token) const {
    return (static_cast<std::uint64_t>(token_in_rank(token)) * dst_num_heads + dst_head_offset + head) * head_dim;
  }
  XS_HD std::uint64_t dst_bytes_per_rank() const {
    return static_cast<std::uint64_t>(tokens_per_rank()) * dst_num_heads * head_dim * TileShape::kElemBytes;
  }
  // Bytes this sender writes into each rank's buffer (its share of the A2A volume).
  XS_HD std::uint64_t sent_bytes_per_rank() const {
    return static_cast<std::uint64_t>(tokens_per_rank()) * num_heads * head_dim * TileShape::kElemBytes;
  }
};

// ---- Instrumentation ------------------------------------------------------------------------------
// One record per (unit, cluster rank, consumer warpgroup), written by the warpgroup's thread 0 at
// records[2 * record_slot + c] (scheduler.cuh record_slot; without a split tail the slot is the tile index).
// Cycle stamps are %clock64 of the SM that ran the tile; ns stamps are %globaltimer.
struct TileRecord {
  std::uint64_t qloop_start_cycles = 0;  // tile start, before waiting for Q
  std::uint64_t qloop_end_cycles = 0;    // last PV wgmma of the tile complete (G_Qloop ends)
  std::uint64_t store_start_cycles = 0;  // after staging, before the first store of the tile
  std::uint64_t store_end_cycles = 0;    // every thread of the warpgroup issued its stores (T_RS)
  std::uint64_t fence_end_cycles = 0;    // completion-coupled: every thread's fence.sc.sys returned
  std::uint64_t qloop_start_ns = 0;
  std::uint64_t store_end_ns = 0;
  std::uint32_t tile_idx = 0;
  std::uint32_t smid = 0;
  std::uint32_t num_kv_tiles = 0;
  std::uint32_t written = 0;             // 1 once written (poison-free check on the host)
  std::uint32_t cta_idx = 0;             // the persistent CTA that ran the tile
  std::uint32_t cta_tile_idx = 0;        // its n-th tile (0, 1, ...)
  std::uint32_t streaming_stores = 0;    // 1: the tile's stores used st.global.cs (StoreCachePolicy, as launched)
  // Split tail (scheduler.cuh): the record's KV tiles are [kv_begin, kv_begin + num_kv_tiles); partial_only 1
  // when this warpgroup only left its partial result for the tile's last piece to combine (no output stores;
  // its store stamps bracket the partial's write), 0 when it stored the output tile.
  std::uint32_t kv_begin = 0;
  std::uint32_t partial_only = 0;
};

// ---- Split tail: partial results (split_combine.cuh) ----------------------------------------------------
// Per split tile (scheduler.cuh split_tile_idx), consumer warpgroup c and piece q of kv_splits: a block of
// kFloats floats, element i of thread t at i * 128 + t (each element a coalesced 512-byte row): the d/2
// unnormalized O accumulators, then the two row maxima and the two row sums of the thread's rows.
template <int D>
struct SplitPartialLayout {
  static constexpr std::uint32_t kElems = D / 2 + 4;
  static constexpr std::uint32_t kFloats = kElems * 128;
  static constexpr std::uint32_t kMaxOffset = D / 2;  // m[0], m[1]
  static constexpr std::uint32_t kSumOffset = D / 2 + 2;  // l[0], l[1]
  XS_HD static constexpr std::uint64_t block(std::uint32_t split_tile, std::uint32_t consumer, std::uint32_t piece,
                                             std::uint32_t kv_splits) {
    return ((static_cast<std::uint64_t>(split_tile) * 2 + consumer) * kv_splits + piece) * kFloats;
  }
  XS_HD static constexpr std::uint64_t total_floats(std::uint32_t num_split_tiles, std::uint32_t kv_splits) {
    return block(num_split_tiles, 0, 0, kv_splits);
  }
};

}  // namespace xs::kernels::attention
