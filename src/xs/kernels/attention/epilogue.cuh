// xstage kernels layer (attention): the output-tile epilogue of one consumer warpgroup (64 rows x d).
// The owning warpgroup converts O to bf16 into its own staging buffer (never the Q/K/V ring, so a
// store never gates the next tile's loads), then issues 16-byte stores: to local O (FA-only) or to the
// Ulysses owner's buffer (X-Stage-Fused; completion-coupled adds fence.sc.sys and waits). Device only.
#pragma once
#include <cstdint>

#include "xs/kernels/attention/params.cuh"
#include "xs/kernels/common/ptx_hopper.cuh"

namespace xs::kernels::attention {

// Named barrier of consumer warpgroup c (ids 1, 2; 0 is __syncthreads).
__device__ __forceinline__ void consumer_barrier(std::uint32_t consumer) {
  ptx::named_barrier_sync(1 + consumer, 128);
}

// Per-tile stamps the consumer collects when instrumentation is on (thread 0 of the warpgroup).
struct TileStamps {
  std::uint64_t qloop_start_cycles = 0;
  std::uint64_t qloop_end_cycles = 0;
  std::uint64_t qloop_start_ns = 0;
  std::uint32_t record_slot = 0;  // scheduler.cuh record_slot of the unit
  std::uint32_t kv_begin = 0;     // the unit's KV tiles [kv_begin, kv_begin + kv_count)
  std::uint32_t kv_count = 0;
};

// Thread 0 of the warpgroup: the record of this (unit, consumer) at records[2 * record_slot + consumer].
__device__ __forceinline__ void write_tile_record(const KernelParams& p, const TileStamps& stamps,
                                                  std::uint32_t tile_idx, std::uint32_t consumer,
                                                  std::uint32_t cta_idx, std::uint32_t cta_tile_idx,
                                                  std::uint64_t store_start, std::uint64_t store_end,
                                                  std::uint64_t store_end_ns, std::uint64_t fence_end,
                                                  bool partial_only) {
  TileRecord r;
  r.qloop_start_cycles = stamps.qloop_start_cycles;
  r.qloop_end_cycles = stamps.qloop_end_cycles;
  r.store_start_cycles = store_start;
  r.store_end_cycles = store_end;
  r.fence_end_cycles = fence_end;
  r.qloop_start_ns = stamps.qloop_start_ns;
  r.store_end_ns = store_end_ns;
  r.tile_idx = tile_idx;
  r.smid = ptx::smid();
  r.num_kv_tiles = stamps.kv_count;
  r.written = 1;
  r.cta_idx = cta_idx;
  r.cta_tile_idx = cta_tile_idx;
  r.streaming_stores = p.streaming_stores;
  r.kv_begin = stamps.kv_begin;
  r.partial_only = partial_only ? 1u : 0u;
  p.records[2 * stamps.record_slot + consumer] = r;
}

// Global address of row `token` (of `head`) in the mode's destination.
template <EpilogueMode kMode, int D>
__device__ __forceinline__ std::uint8_t* row_address(const KernelParams& p, std::uint32_t head, std::uint32_t token) {
  if constexpr (kMode == EpilogueMode::kLocal) {
    return p.out + local_element_offset(head, token, p.seq_len, D) * TileShape::kElemBytes;
  } else {
    const std::uint32_t rank = p.ulysses.owner_rank(token);
    return p.dst[rank] + p.ulysses.dst_element_offset(head, token) * TileShape::kElemBytes;
  }
}

// o: normalized fp32 accumulators (layout: mainloop.cuh), d/2 per thread. thread: 0..127 within the
// warpgroup. D: the head dim (64, 128).
template <EpilogueMode kMode, int D>
__device__ __forceinline__ void store_output_tile(const KernelParams& p, const float (&o)[D / 2], TileCoord coord,
                                                  std::uint32_t tile_idx, std::uint32_t consumer,
                                                  std::uint32_t thread, std::uint32_t staging_addr,
                                                  const TileStamps& stamps, std::uint32_t cta_idx,
                                                  std::uint32_t cta_tile_idx) {
  constexpr std::uint32_t kPitch = SmemLayoutD<D>::kStagingPitchBytes;
  const std::uint32_t warp = thread / 32, lane = thread % 32;
  // 1. Every thread finished reading the previous tile out of staging.
  consumer_barrier(consumer);
  // 2. Fragments -> bf16 -> staging. Thread holds rows 16w + lane/4 (+8), columns 8j + 2(lane%4) (+1).
  const std::uint32_t row0 = 16 * warp + lane / 4;
  const std::uint32_t col0 = 2 * (lane % 4);
#pragma unroll
  for (int j = 0; j < D / 8; ++j) {
    const std::uint32_t col_bytes = (8 * j + col0) * TileShape::kElemBytes;
    ptx::st_shared_b32(staging_addr + row0 * kPitch + col_bytes, ptx::pack_bf16x2(o[4 * j], o[4 * j + 1]));
    ptx::st_shared_b32(staging_addr + (row0 + 8) * kPitch + col_bytes, ptx::pack_bf16x2(o[4 * j + 2], o[4 * j + 3]));
  }
  consumer_barrier(consumer);
  // 3. 16-byte stores (EpilogueStoreMap: at d = 128 pass ps covers rows 8ps..8ps+7, 16 threads per 256-byte
  //    row, so a warp writes two whole rows, coalesced). All loads first, then all stores back to back:
  //    one short burst.
  const bool instrument = p.records != nullptr;
  std::uint64_t store_start = 0;
  if (instrument && thread == 0) store_start = ptx::clock64_cycles();
  using Map = EpilogueStoreMap<D>;  // layout.cuh (CPU-tested)
  constexpr int kPasses = Map::kPasses;
  const std::uint32_t chunk = Map::chunk(thread);
  uint4 data[kPasses];
#pragma unroll
  for (int ps = 0; ps < kPasses; ++ps) data[ps] = ptx::ld_shared_v4(staging_addr + Map::row(ps, thread) * kPitch + chunk * 16);
  const std::uint32_t token0 = coord.m_block * TileShape::kBlockM + consumer * TileShape::kRowsPerConsumer;
  if (p.streaming_stores) {  // uniform across the launch: the same branch in every thread
#pragma unroll
    for (int ps = 0; ps < kPasses; ++ps) {
      const std::uint32_t token = token0 + Map::row(ps, thread);
      ptx::st_global_cs_v4(row_address<kMode, D>(p, coord.head, token) + chunk * 16, data[ps]);
    }
  } else {
#pragma unroll
    for (int ps = 0; ps < kPasses; ++ps) {
      const std::uint32_t token = token0 + Map::row(ps, thread);
      ptx::st_global_v4(row_address<kMode, D>(p, coord.head, token) + chunk * 16, data[ps]);
    }
  }
  std::uint64_t store_end = 0, store_end_ns = 0, fence_end = 0;
  if (instrument || p.store_barrier) {  // uniform across the launch
    consumer_barrier(consumer);
    if (instrument && thread == 0) {
      store_end = ptx::clock64_cycles();
      store_end_ns = ptx::globaltimer_ns();
    }
  }
  if constexpr (kMode == EpilogueMode::kCompletionCoupled) {
    // The issuer blocks until its stores are acknowledged system-wide before its next tile starts.
    ptx::fence_sc_sys();
    consumer_barrier(consumer);
    if (instrument && thread == 0) fence_end = ptx::clock64_cycles();
  }
  if (instrument && thread == 0)
    write_tile_record(p, stamps, tile_idx, consumer, cta_idx, cta_tile_idx, store_start, store_end, store_end_ns,
                      fence_end, false);
}

}  // namespace xs::kernels::attention
