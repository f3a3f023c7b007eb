// xstage kernels layer (moe): the GEMM mainloop of one MegaMoE tile. The producer thread streams A (pool
// rows for Linear-1, intermediate rows for Linear-2) and B (the expert's W1 or W2 rows) with TMA through a
// kStages ring; the two math warpgroups run wgmma m64n{b_n}k16 on rows [64c, 64c + 64) of the tile.
// The producer also owns the cross-CTA dependency waits: a Linear-1 tile waits for its row block's
// Dispatch flag, a Linear-2 tile for all Linear-1 tiles of its row block (l1_done). Device code only.
#pragma once
#include <cstdint>

#include "xs/kernels/moe/pipeline.cuh"
#include "xs/kernels/moe/scheduler.cuh"

namespace xs::kernels::moe {

// The k extent and the B row of a tile (A row = row_block * 128 in both GEMMs).
//   L1: K = h, B = W1 viewed as [E * 2I][h]: rows e * 2I + n1 * b_n
//   L2: K = I, B = W2 viewed as [E * h][I]:  rows e * h + n2 * b_n
template <Precision kPrec, class Params>
__device__ __forceinline__ std::uint32_t num_k_blocks(const Params& p, const TileId& t) {
  return (t.kind == TileKind::kL1 ? p.hidden : p.intermediate) / kBlockKElems<kPrec>;
}

// ---- Producer (one thread) -------------------------------------------------------------------------------
// Ring slot of k-block iteration i (counted over all tiles of the CTA): s = i % kStages, full parity
// (i / kStages) & 1; the producer waits on empty with the opposite parity (a fresh barrier's previous
// phase counts as complete).
template <int kBlockN, Precision kPrec, class Params>
__device__ void producer_loop(const Params& p, const void* tm_pool, const void* tm_act, const void* tm_w1,
                              const void* tm_w2, std::uint8_t* smem, const Barriers& bars, std::uint32_t cta,
                              std::uint32_t epoch) {
  using Shape = TileShape<kBlockN>;
  using Smem = SmemLayout<kBlockN>;
  constexpr std::uint32_t S = Shape::kStages;
  const TileSpace& tiles = p.problem.tiles;
  ScheduleCursor cur = p.schedule.begin(p.problem, cta, p.num_ctas);
  TileId t;
  std::uint32_t it = 0;
  while (p.schedule.next(p.problem, cur, t)) {
    const std::uint32_t tile_idx = tiles.tile_index(t);
    const std::uint32_t expert = p.routing.row_block_expert[t.row_block];
    std::uint64_t spin = 0;
    const void* tm_a;
    const void* tm_b;
    std::int32_t b_row;
    if (t.kind == TileKind::kL1) {
      if (p.dispatch_enabled)
        spin = wait_counter(p, p.sync + p.sync_layout.dispatch_word(t.row_block), epoch, WaitFlag::kDispatchFlag,
                            t.row_block);
      tm_a = tm_pool;
      tm_b = tm_w1;
      b_row = static_cast<std::int32_t>(expert * 2u * p.intermediate + t.n_block * kBlockN);
    } else {
      if (p.l2_waits_for_l1)
        spin = wait_counter(p, p.sync + p.sync_layout.l1_done_word(t.row_block), epoch * tiles.l1_tiles_per_row,
                            WaitFlag::kL1Done, t.row_block);
      tm_a = tm_act;
      tm_b = tm_w2;
      b_row = static_cast<std::int32_t>(expert * p.hidden + t.n_block * kBlockN);
    }
    // The rows were written with generic-proxy stores by other CTAs; TMA reads through the async proxy.
    ptx::fence_proxy_async_global();
    if (p.records != nullptr) p.records[tile_idx].dependency_spin_cycles = static_cast<std::uint32_t>(spin);
    const auto a_row = static_cast<std::int32_t>(t.row_block * Shape::kBlockM);
    const std::uint32_t kbs = num_k_blocks<kPrec>(p, t);
    // fp8: the k-block's row scales ride with the stage (Linear-1: one 128-K group scale per pool row;
    // Linear-2: two 64-column group scales per act row), 512 B per group of 128 rows.
    constexpr std::uint32_t kScaleGroupBytes = Shape::kBlockM * 4;
    const std::uint32_t scale_bytes = kPrec == Precision::kFp8 ? (t.kind == TileKind::kL1 ? 1 : 2) * kScaleGroupBytes : 0;
    for (std::uint32_t kb = 0; kb < kbs; ++kb, ++it) {
      const std::uint32_t s = it % S;
      wait_barrier(p, bars.empty + s, ((it / S) & 1) ^ 1, WaitFlag::kStageEmpty, tile_idx);
      ptx::mbarrier_arrive_expect_tx(bars.full + s, Smem::kStageBytes + scale_bytes);
      const auto k = static_cast<std::int32_t>(kb * kBlockKElems<kPrec>);
      ptx::tma_load_2d(smem + Smem::a_offset(s), tm_a, bars.full + s, k, a_row);
      ptx::tma_load_2d(smem + Smem::b_offset(s), tm_b, bars.full + s, k, b_row);
      if constexpr (kPrec == Precision::kFp8) {
        // After the dependency acquire and fence.proxy.async above, like the A tile: the scales were written
        // this launch with generic stores (Dispatch for pool_scale, Linear-1 epilogues for act_scale).
        auto* dst = reinterpret_cast<float*>(smem + Smem::scale_offset(s));
        const std::uint64_t rows = std::uint64_t{t.row_block} * Shape::kBlockM;
        if (t.kind == TileKind::kL1) {
          ptx::bulk_load_1d(dst, p.pool_scale + std::uint64_t{kb} * p.pool_rows + rows, kScaleGroupBytes, bars.full + s);
        } else {
          for (std::uint32_t h = 0; h < 2; ++h)
            ptx::bulk_load_1d(dst + h * Shape::kBlockM, p.act_scale + std::uint64_t{2 * kb + h} * p.pool_rows + rows,
                              kScaleGroupBytes, bars.full + s);
        }
      }
    }
  }
  // Tail: wait until the math warpgroups released every slot, so no TMA write is outstanding at exit.
  for (std::uint32_t i = 0; i < S; ++i, ++it)
    wait_barrier(p, bars.empty + it % S, ((it / S) & 1) ^ 1, WaitFlag::kStageEmpty, 0xFFFFFFFFu);
}

// ---- Math warpgroup: one tile's mainloop -------------------------------------------------------------------
// acc[64 x b_n] (this warpgroup's rows) = A[64 x K] * B[b_n x K]^T, both K-major with 128B swizzle:
// SBO = 8 rows x 128 B = 1024; k-step kk (16 elements) is +32 B inside the swizzle row.
template <int kBlockN>
struct Accumulator;
template <>
struct Accumulator<128> {
  float d[64];
  __device__ __forceinline__ void mma(std::uint64_t da, std::uint64_t db, std::uint32_t scale_d) {
    ptx::wgmma_m64n128k16_f32_bf16_ss(d, da, db, scale_d);
  }
  __device__ __forceinline__ void fence() { ptx::fence_operands(d); }
};
template <>
struct Accumulator<256> {
  float d[128];
  __device__ __forceinline__ void mma(std::uint64_t da, std::uint64_t db, std::uint32_t scale_d) {
    ptx::wgmma_m64n256k16_f32_bf16_ss(d, da, db, scale_d);
  }
  __device__ __forceinline__ void fence() { ptx::fence_operands(d); }
};

// Returns the cycles spent waiting for the tile's first k-block (the exposed dependency wait).
template <int kBlockN, class Params>
__device__ __forceinline__ std::uint64_t mainloop(const Params& p, Accumulator<kBlockN>& acc, std::uint32_t kbs,
                                                  std::uint32_t smem_base, const Barriers& bars,
                                                  std::uint32_t warpgroup, std::uint32_t& it, std::uint32_t tile_idx) {
  using Shape = TileShape<kBlockN>;
  using Smem = SmemLayout<kBlockN>;
  constexpr std::uint32_t S = Shape::kStages;
  std::uint32_t prev = 0;
  std::uint64_t first_wait = 0;
  for (std::uint32_t kb = 0; kb < kbs; ++kb, ++it) {
    const std::uint32_t s = it % S;
    const std::uint64_t waited = wait_barrier(p, bars.full + s, (it / S) & 1, WaitFlag::kStageFull, tile_idx);
    if (kb == 0) first_wait = waited;
    const std::uint32_t a_addr = smem_base + Smem::a_offset(s) + warpgroup * 64 * 128;
    const std::uint32_t b_addr = smem_base + Smem::b_offset(s);
    acc.fence();
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < Shape::kBlockK / 16; ++kk) {
      const std::uint64_t da = ptx::make_smem_desc_sw128(a_addr + kk * 32, 16, 1024);
      const std::uint64_t db = ptx::make_smem_desc_sw128(b_addr + kk * 32, 16, 1024);
      acc.mma(da, db, (kb > 0 || kk > 0) ? 1u : 0u);
    }
    ptx::wgmma_commit_group();
    acc.fence();
    if (kb > 0) {
      ptx::wgmma_wait_group<1>();  // k-block kb-1 retired: its stage may be refilled
      acc.fence();
      ptx::mbarrier_arrive(bars.empty + prev);
    }
    prev = s;
  }
  ptx::wgmma_wait_group<0>();
  acc.fence();
  ptx::mbarrier_arrive(bars.empty + prev);
  return first_wait;
}

}  // namespace xs::kernels::moe

namespace xs::kernels::moe {

// ---- fp8 W8A8 math mainloop (b_n = 128) -------------------------------------------------------------------
// Per k-block (128 e4m3 = 128 B of K) in two 64-K halves: two wgmma m64n128k32 into a temporary, then the
// promotion acc += tmp x (row scale x weight block scale) in fp32 registers. Linear-1: the row scale is the
// pool row's 128-K group scale (both halves); Linear-2: the act scale of each 64-column half. The row scales
// come with the stage (the producer's bulk copy, SmemLayout::scale_offset), so reading them costs a shared
// load, not an L2 round trip between the wgmmas and their promotion (they were ld.global.cg after the full
// wait, exposed once per k-block). The weight block scale is one __ldg per k-block (read-only, L1-cached
// along the tile's k-blocks).
// One tile kind's loop, every count a constant: kL1 (Linear-1) one group of 4 x k32 per k-block, else two
// groups of 2 x k32. The wgmma sequences are straight-line code (runtime group and step counts made ptxas
// insert a warpgroup.arrive in a divergent path and serialize every wgmma of the fp8 kernels, C7520).
template <bool kL1, class Params>
__device__ __forceinline__ std::uint64_t mainloop_fp8_kind(const Params& p, float (&acc)[64], std::uint32_t kbs,
                                                           const float* w_scale, const std::uint8_t* smem,
                                                           std::uint32_t smem_base, const Barriers& bars,
                                                           std::uint32_t warpgroup, std::uint32_t local_row,
                                                           std::uint32_t& it, std::uint32_t tile_idx) {
  using Smem = SmemLayout<128>;
  constexpr std::uint32_t S = TileShape<128>::kStages;
  constexpr int kGroups = kL1 ? 1 : 2;  // Linear-1: one promotion per 128-K group; Linear-2: per 64-column act group
  constexpr int kSteps = kL1 ? 4 : 2;   // wgmma k32 per group
  float tmp[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  std::uint64_t first_wait = 0;
  for (std::uint32_t kb = 0; kb < kbs; ++kb, ++it) {
    const std::uint32_t s = it % S;
    const std::uint64_t waited = wait_barrier(p, bars.full + s, (it / S) & 1, WaitFlag::kStageFull, tile_idx);
    if (kb == 0) first_wait = waited;
    // The stage is full, its row scales with it ([half][128]; Linear-1 has one group, in the first half).
    const float wsc = __ldg(w_scale + kb);
    const auto* ss = reinterpret_cast<const float*>(smem + Smem::scale_offset(s)) + local_row;
    const std::uint32_t a_addr = smem_base + Smem::a_offset(s) + warpgroup * 64 * 128;
    const std::uint32_t b_addr = smem_base + Smem::b_offset(s);
#pragma unroll
    for (int h = 0; h < kGroups; ++h) {
      ptx::fence_operands(tmp);
      ptx::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kSteps; ++kk) {
        const std::uint32_t off = (h * kSteps + kk) * 32;
        ptx::wgmma_m64n128k32_f32_e4m3_ss(tmp, ptx::make_smem_desc_sw128(a_addr + off, 16, 1024),
                                         ptx::make_smem_desc_sw128(b_addr + off, 16, 1024), kk > 0 ? 1u : 0u);
      }
      ptx::wgmma_commit_group();
      // The group's two row scales, read while the wgmmas run.
      const float s0 = ss[h * 128] * wsc, s1 = ss[h * 128 + 8] * wsc;
      ptx::wgmma_wait_group<0>();
      ptx::fence_operands(tmp);
#pragma unroll
      for (int j = 0; j < 16; ++j) {
        acc[4 * j] = fmaf(tmp[4 * j], s0, acc[4 * j]);
        acc[4 * j + 1] = fmaf(tmp[4 * j + 1], s0, acc[4 * j + 1]);
        acc[4 * j + 2] = fmaf(tmp[4 * j + 2], s1, acc[4 * j + 2]);
        acc[4 * j + 3] = fmaf(tmp[4 * j + 3], s1, acc[4 * j + 3]);
      }
    }
    ptx::mbarrier_arrive(bars.empty + s);
  }
  return first_wait;
}

template <class Params>
__device__ __forceinline__ std::uint64_t mainloop_fp8(const Params& p, float (&acc)[64], const TileId& t,
                                                      std::uint32_t expert, const std::uint8_t* smem,
                                                      std::uint32_t smem_base,
                                                      const Barriers& bars, std::uint32_t warpgroup,
                                                      std::uint32_t thread, std::uint32_t& it,
                                                      std::uint32_t tile_idx) {
  const bool l1 = t.kind == TileKind::kL1;
  const std::uint32_t kbs = num_k_blocks<Precision::kFp8>(p, t);
  const std::uint32_t warp = thread / 32, lane = thread % 32;
  const std::uint32_t local_row = warpgroup * 64 + warp * 16 + lane / 4;  // and local_row + 8, in the tile
  // Weight block scales of this tile's 128 output rows: [E][N/128][K/128].
  const float* w_scale = l1 ? p.w1_scale + (std::uint64_t{expert} * (2 * p.intermediate / 128) + t.n_block) * (p.hidden / 128)
                            : p.w2_scale + (std::uint64_t{expert} * (p.hidden / 128) + t.n_block) * (p.intermediate / 128);
  return l1 ? mainloop_fp8_kind<true>(p, acc, kbs, w_scale, smem, smem_base, bars, warpgroup, local_row, it, tile_idx)
            : mainloop_fp8_kind<false>(p, acc, kbs, w_scale, smem, smem_base, bars, warpgroup, local_row, it, tile_idx);
}

}  // namespace xs::kernels::moe
