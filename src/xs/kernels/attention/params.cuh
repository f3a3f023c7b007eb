// xstage kernels layer (attention): the kernel's by-value parameter block, filled by the launcher from
// FlashAttentionArgs. Plain data; a __grid_constant__ parameter, so dst[] may be indexed at run time
// without a local-memory copy.
#pragma once
#include <cstdint>

#include "xs/kernels/attention/flash_attention.hpp"
#include "xs/kernels/attention/scheduler.cuh"

namespace xs::kernels::attention {

struct KernelParams {
  TileScheduler scheduler;
  std::uint32_t seq_len = 0;       // M
  std::uint32_t num_kv_tiles = 0;  // M / b_n
  // Split tail (scheduler.cuh): units from first_piece_unit on are pieces of piece_kv_tiles KV tiles each
  // (num_whole_units(), num_kv_tiles / kv_splits); kernel parameters so the Q-loop's trip count is uniform.
  std::uint32_t first_piece_unit = 0;
  std::uint32_t piece_kv_tiles = 0;
  float scale_log2 = 0;            // softmax_scale * log2(e): exp(x*scale) = 2^(x*scale_log2)
  UlyssesLayout ulysses;
  std::uint8_t* out = nullptr;     // kLocal destination
  std::uint8_t* dst[kMaxRanks] = {};
  TileRecord* records = nullptr;   // nullptr: no instrumentation
  std::uint32_t streaming_stores = 0;  // 1: the epilogue stores with st.global.cs (StoreCachePolicy::kStreaming)
  std::uint32_t store_barrier = 0;     // 1: the warpgroup's barrier after its stores even when not instrumented
  // Dynamic tile scheduler: [0] the next ticket, [1] CTAs finished; zero before the launch, and the last
  // CTA to finish zeroes them again (so back-to-back launches on one stream reuse them).
  std::uint32_t* tile_counters = nullptr;
  // Split tail (scheduler.cuh): per split tile and consumer warpgroup, the kv_splits pieces' partial results
  // (split_combine.cuh layout) and an arrival counter (zero before the launch; the last arrival zeroes it).
  float* split_partials = nullptr;
  std::uint32_t* split_counters = nullptr;
  std::uint64_t timeout_cycles = 0;
  WaitTimeoutReport* timeout_report = nullptr;  // mapped pinned host memory
};

}  // namespace xs::kernels::attention
