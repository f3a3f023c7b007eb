// xstage kernels layer (moe): the two sides of the staging slot. The math warpgroups never issue global
// stores: they wait on the slot's `empty` barrier (the MMA-side staging wait, eq. 15's cover boundary),
// write the finished tile (L1: SwiGLU x top-k weight; L2: the output) as bf16 and arrive on `full`. Two
// storer warps drain it: L1 tiles to the local intermediate (then release l1_done), L2 tiles as Combine
// row segments with 16-B st.global.v4 to dst[rank] + slot(token, k). Dispatch (arrival rows -> the
// expert-sorted pool) runs at kernel start and in the background (warp 3). Device code only.
#pragma once
#include <cstdint>

#include "xs/kernels/moe/fp8.hpp"
#include "xs/kernels/moe/mainloop.cuh"
#include "xs/kernels/moe/quantize.cuh"

namespace xs::kernels::moe {

// ---- Math side ------------------------------------------------------------------------------------------
// Accumulator fragment (PTX ISA #wgmma-64n16-d): thread `lane` of warp w holds rows 16w + lane/4 (+8) and
// columns 8j + 2(lane%4) (+1) in d[4j + 2*row_half + col_odd].
// L1: W1 rows are pre-interleaved (row 2q = gate_q, 2q + 1 = up_q), so (col even, col odd) is one
// (gate, up) pair of intermediate column q = 4j + lane%4 of this tile's b_n/2.
template <int kBlockN>
__device__ __forceinline__ void stage_l1_tile(const Accumulator<kBlockN>& acc, const float* pool_weight,
                                              std::uint32_t row_block, std::uint32_t staging_addr,
                                              std::uint32_t warpgroup, std::uint32_t thread) {
  constexpr std::uint32_t kRowBytes = kBlockN;  // b_n/2 bf16 columns
  const std::uint32_t warp = thread / 32, lane = thread % 32;
#pragma unroll
  for (int rh = 0; rh < 2; ++rh) {
    const std::uint32_t row = warpgroup * 64 + warp * 16 + lane / 4 + 8 * rh;
    const float weight = pool_weight[row_block * 128 + row];
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
      const float gate = acc.d[4 * j + 2 * rh];
      const float up = acc.d[4 * j + 2 * rh + 1];
      const float silu = gate / (1.0f + __expf(-gate));
      const std::uint32_t q = 4 * j + lane % 4;
      ptx::st_shared_b16(staging_addr + staging_offset(row, q, kRowBytes), ptx::to_bf16_bits(silu * up * weight));
    }
  }
}

// fp8 (b_n = 128): the same 64 intermediate columns, quantized per row over those 64 columns (one act scale
// group): s = amax / 448 (1 if amax is 0), code = cvt.rn.satfinite.e4m3(a / s). A row's 64 values live in
// the 4 threads of a quad (16 each); the quad-leader writes the row's scale to shared memory.
__device__ __forceinline__ void stage_l1_tile_fp8(const float (&acc)[64], const float* pool_weight,
                                                  std::uint32_t row_block, std::uint32_t staging_addr,
                                                  float* smem_act_scale, std::uint32_t warpgroup,
                                                  std::uint32_t thread) {
  const std::uint32_t warp = thread / 32, lane = thread % 32;
#pragma unroll
  for (int rh = 0; rh < 2; ++rh) {
    const std::uint32_t row = warpgroup * 64 + warp * 16 + lane / 4 + 8 * rh;
    const float weight = pool_weight[row_block * 128 + row];
    float a[16];
    float amax = 0.0f;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const float gate = acc[4 * j + 2 * rh];
      const float up = acc[4 * j + 2 * rh + 1];
      a[j] = gate / (1.0f + expf(-gate)) * up * weight;
      amax = fmaxf(amax, fabsf(a[j]));
    }
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 1));
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 2));
    const float scale = e4m3_scale_for_amax(amax);
#pragma unroll
    for (int j = 0; j < 16; ++j)
      ptx::st_shared_b8(staging_addr + staging_offset_fp8(row, 4 * j + lane % 4), cvt_e4m3_rn_satfinite(a[j] / scale));
    if (lane % 4 == 0) smem_act_scale[row] = scale;
  }
}

template <int kBlockN>
__device__ __forceinline__ void stage_l2_tile(const Accumulator<kBlockN>& acc, std::uint32_t staging_addr,
                                              std::uint32_t warpgroup, std::uint32_t thread) {
  constexpr std::uint32_t kRowBytes = kBlockN * 2;
  const std::uint32_t warp = thread / 32, lane = thread % 32;
#pragma unroll
  for (int rh = 0; rh < 2; ++rh) {
    const std::uint32_t row = warpgroup * 64 + warp * 16 + lane / 4 + 8 * rh;
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
      const std::uint32_t col = 8 * j + 2 * (lane % 4);
      ptx::st_shared_b32(staging_addr + staging_offset(row, col, kRowBytes),
                         ptx::pack_bf16x2(acc.d[4 * j + 2 * rh], acc.d[4 * j + 2 * rh + 1]));
    }
  }
}

// ---- Dispatch --------------------------------------------------------------------------------------------
// Pool row block rb <- its rows of the arrival buffer (padding rows zero-filled), copied by `num_threads`
// threads (index tid) with kInFlight independent 16-B loads per thread before their stores: a copy loop
// with one dependent load per iteration is latency-bound at ~2 GB/s per SM. src_rows: the block's 128
// arrival indices, staged in shared memory by the caller.
template <int kInFlight, class Params>
__device__ __forceinline__ void copy_row_block(const Params& p, std::uint32_t rb, const volatile std::int32_t* src_rows,
                                               std::uint32_t tid, std::uint32_t num_threads) {
  const std::uint32_t chunks_per_row = p.row_bytes_in / 16;  // 16-B chunks of a row (bf16 or e4m3)
  const std::uint32_t total = 128 * chunks_per_row;
  const std::uint64_t row_bytes = p.row_bytes_in;
  for (std::uint32_t base = 0; base < total; base += num_threads * kInFlight) {
    uint4 v[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      const std::uint32_t idx = base + j * num_threads + tid;
      v[j] = make_uint4(0, 0, 0, 0);
      if (idx < total) {
        const std::int32_t src = src_rows[idx / chunks_per_row];
        if (src >= 0)
          v[j] = ptx::ld_global_nc_v4(p.arrival + static_cast<std::uint64_t>(src) * row_bytes + (idx % chunks_per_row) * 16);
      }
    }
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      const std::uint32_t idx = base + j * num_threads + tid;
      if (idx < total)
        ptx::st_global_v4(p.pool + (std::uint64_t{rb} * 128 + idx / chunks_per_row) * row_bytes +
                              (idx % chunks_per_row) * 16, v[j]);
    }
  }
  if (p.pool_scale != nullptr) {  // fp8: the rows' 128-K group scales, group-major (padding rows: 0)
    const std::uint32_t groups = p.hidden / 128;
    for (std::uint32_t idx = tid; idx < 128 * groups; idx += num_threads) {
      const std::uint32_t r = idx % 128, g = idx / 128;
      const std::int32_t src = src_rows[r];
      p.pool_scale[std::uint64_t{g} * p.pool_rows + rb * 128 + r] =
          src >= 0 ? __ldg(p.arrival_scale + static_cast<std::uint64_t>(src) * groups + g) : 0.0f;
    }
  }
  // The rows are read by other CTAs' TMA (async proxy) after they acquire dispatch_flag[rb].
  ptx::fence_proxy_async_global();
  ptx::fence_acq_rel_gpu();
}

// Background Dispatch by the otherwise idle warp 3: this CTA's row blocks cta + K_SM, cta + 2 K_SM, ...
// (the first, `cta`, is copied by the whole CTA at kernel start). Row block j of a CTA is needed about
// j x K_SM / (tiles per row) tile times after the start, so one warp keeps ahead of the consumers.
// kInFlight loads per lane: 16 where registers allow (b_n = 128); 8 at b_n = 256, where the math
// warpgroups' 128 accumulators leave no room (the register allocation is uniform over the CTA's warps).
template <int kInFlight, class Params>
__device__ void dispatch_background(const Params& p, std::uint8_t* smem_dispatch_meta, std::uint32_t cta,
                                    std::uint32_t lane, std::uint32_t epoch) {
  auto* src_rows = reinterpret_cast<volatile std::int32_t*>(smem_dispatch_meta);
  for (std::uint32_t rb = cta + p.num_ctas; rb < p.problem.tiles.num_row_blocks; rb += p.num_ctas) {
    for (std::uint32_t r = lane; r < 128; r += 32) src_rows[r] = p.routing.pool_arrival[rb * 128 + r];
    __syncwarp();
    copy_row_block<kInFlight>(p, rb, src_rows, lane, 32);
    __syncwarp();
    if (lane == 0) ptx::st_release_gpu_u32(p.sync + p.sync_layout.dispatch_word(rb), epoch);
  }
}

// ---- Storer warps ------------------------------------------------------------------------------------------
template <int kBlockN, EpilogueMode kMode, class Params>
__device__ void storer_loop(const Params& p, std::uint8_t* smem, const Barriers& bars, std::uint32_t cta,
                            std::uint32_t storer, std::uint32_t epoch) {
  using Shape = TileShape<kBlockN>;
  using Smem = SmemLayout<kBlockN>;
  constexpr std::uint32_t kThreads = Shape::kNumStorerThreads;
  const std::uint32_t smem_base = ptx::smem_u32(smem);
  const std::uint32_t staging_addr = smem_base + Smem::kStagingOffset;
  auto* row_meta = reinterpret_cast<std::int32_t*>(smem + Smem::kRowMetaOffset);  // [128][rank, slot]
  const auto* full_stamps = reinterpret_cast<const volatile std::uint64_t*>(smem + Smem::kStampOffset);
  const TileSpace& tiles = p.problem.tiles;

  ScheduleCursor cur = p.schedule.begin(p.problem, cta, p.num_ctas);
  TileId t;
  std::uint32_t seq = 0;
  while (p.schedule.next(p.problem, cur, t)) {
    const std::uint32_t tile_idx = tiles.tile_index(t);
    const std::uint32_t row0 = t.row_block * 128;
    if (t.kind == TileKind::kL2) {  // this tile's destinations, read before the slot fills
      for (std::uint32_t r = storer; r < 128; r += kThreads) {
        row_meta[2 * r] = p.routing.pool_dst_rank[row0 + r];
        row_meta[2 * r + 1] = p.routing.pool_dst_slot[row0 + r];
      }
      ptx::named_barrier_sync(1, kThreads);
    }
    wait_barrier(p, bars.slot_full, seq & 1, WaitFlag::kSlotFull, tile_idx);
    std::uint64_t start = 0;
    if (storer == 0) start = ptx::clock64_cycles();
    if (t.kind == TileKind::kL1 && p.act_scale != nullptr) {
      // fp8: [128 rows][64 e4m3] -> act rows (64 B each, 4 chunks) and the 128 row scales of group n1.
      const std::uint64_t act_row_bytes = p.intermediate;
      std::uint8_t* base = p.act + row0 * act_row_bytes + t.n_block * 64;
      for (std::uint32_t idx = storer; idx < 128 * 4; idx += kThreads) {
        const std::uint32_t r = idx / 4, ch = idx % 4;
        const uint4 v = ptx::ld_shared_v4(staging_addr + staging_offset_fp8(r, ch * 16));
        ptx::st_global_v4(base + r * act_row_bytes + ch * 16, v);
      }
      const auto* scales = reinterpret_cast<const volatile float*>(smem + Smem::kActScaleOffset);
      for (std::uint32_t r = storer; r < 128; r += kThreads)
        p.act_scale[std::uint64_t{t.n_block} * p.pool_rows + row0 + r] = scales[r];
      ptx::fence_proxy_async_global();
      ptx::fence_acq_rel_gpu();
    } else if (t.kind == TileKind::kL1) {
      // [128 rows][b_n/2 cols] -> act rows, columns [n1 * b_n/2, ...): b_n/16 chunks per row.
      constexpr std::uint32_t kChunks = kBlockN / 16;
      const std::uint64_t act_row_bytes = std::uint64_t{p.intermediate} * 2;
      std::uint8_t* base = p.act + row0 * act_row_bytes + t.n_block * (kBlockN / 2) * 2;
#pragma unroll 4
      for (std::uint32_t idx = storer; idx < 128 * kChunks; idx += kThreads) {
        const std::uint32_t r = idx / kChunks, ch = idx % kChunks;
        const uint4 v = ptx::ld_shared_v4(staging_addr + staging_offset(r, ch * 8, kBlockN));
        ptx::st_global_v4(base + r * act_row_bytes + ch * 16, v);
      }
      ptx::fence_proxy_async_global();
      ptx::fence_acq_rel_gpu();
    } else {
      // [128 rows][b_n cols] -> one b_n * 2-byte Combine segment per valid row.
      constexpr std::uint32_t kChunks = kBlockN / 8;
      const std::uint32_t col0 = t.n_block * kBlockN;
#pragma unroll 4
      for (std::uint32_t idx = storer; idx < 128 * kChunks; idx += kThreads) {
        const std::uint32_t r = idx / kChunks, ch = idx % kChunks;
        const std::int32_t rank = row_meta[2 * r];
        if (rank < 0) continue;
        const auto slot = static_cast<std::uint32_t>(row_meta[2 * r + 1]);
        const uint4 v = ptx::ld_shared_v4(staging_addr + staging_offset(r, ch * 8, kBlockN * 2));
        ptx::st_global_v4(p.dst[rank] + combine_byte_offset(slot, p.hidden, col0) + ch * 16, v);
      }
      if constexpr (kMode == EpilogueMode::kCompletionCoupled) ptx::fence_sc_sys();
    }
    ptx::named_barrier_sync(1, kThreads);  // every storer issued (T_RS ends here)
    if (storer == 0) {
      const std::uint64_t end = ptx::clock64_cycles();
      if (p.records != nullptr) {
        TileRecord& rec = p.records[tile_idx];
        rec.store_start_cycles = start;
        rec.store_end_cycles = end;
        const std::uint64_t full_at = full_stamps[0] > full_stamps[1] ? full_stamps[0] : full_stamps[1];
        rec.queue_cycles = start > full_at ? static_cast<std::uint32_t>(start - full_at) : 0u;
      }
      if (t.kind == TileKind::kL1) ptx::red_release_gpu_add_u32(p.sync + p.sync_layout.l1_done_word(t.row_block), 1);
    }
    ptx::mbarrier_arrive(bars.slot_empty);
    ++seq;
  }
  // The kernel's end is the remote-visible horizon: every storer's Combine stores are performed system-wide.
  ptx::fence_sc_sys();
}

}  // namespace xs::kernels::moe
