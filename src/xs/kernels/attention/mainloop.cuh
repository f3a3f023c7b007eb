// xstage kernels layer (attention): the FlashAttention Q-loop of one CTA. A producer thread streams
// Q and the K/V tiles with TMA into shared memory; each consumer warpgroup runs S = Q K^T and O += P V
// on wgmma with an online softmax (exp2) in registers. Device code only.
//
// Per consumer warpgroup (64 query rows) and KV tile j, with S/P/O in registers (64 + 32 + d/2 per thread):
//   issue S_j = Q K_j^T (d/16 x m64n128k16, smem x smem)   | overlaps with
//   issue O += P_{j-1} V_{j-1} (8 x m64n{d}k16, regs x smem, V transposed by the descriptor)
// Templated over the head dim d (64, 128: TileShapeD); b_m, b_n and the softmax do not depend on it.
//   wait S_j; release K_j; softmax(S_j) -> row max/sum, P_j (fp32 in S's registers)
//   wait PV; release V_{j-1}; O *= exp2(m_old - m_new); P_j -> bf16 A fragments
// so the softmax of tile j runs while the tensor cores do P_{j-1} V_{j-1} (FlashAttention-3's
// intra-warpgroup overlap); the two consumer warpgroups additionally interleave on their own (kBaseline) or
// take strict turns issuing (MainloopSchedule kPingPong, kPingPongFull: pingpong.cuh).
#pragma once
#include <cstdint>

#include "xs/kernels/attention/params.cuh"
#include "xs/kernels/attention/wgmma_n64.cuh"
#include "xs/kernels/common/ptx_hopper.cuh"

namespace xs::kernels::attention {

// mbarriers (count; who arrives):
//   q_full    1 + tx   producer's expect_tx; TMA completes kQBytes
//   q_empty   256      every consumer thread after its last S = Q K^T of the tile
//   k_full[s] 1 + tx   producer; TMA completes kTileBytes     k_empty[s] 256  consumers after S_j
//   v_full[s] 1 + tx   producer; TMA completes kTileBytes     v_empty[s] 256  consumers after PV_j
// With kv_cluster_size 2 (config.hpp) both CTAs of a cluster fill every K/V stage of both: each producer
// loads half the tile (64 keys) with multicast, so k_full/v_full still expect kTileBytes (both halves land
// in each CTA), and a stage may be refilled only when the consumers of both CTAs released it: k_empty and
// v_empty then count 16, one arrival per consumer warp of each CTA (release_kv_stage).
//   unit_full  1  (rank 1) rank 0's producer after writing the next unit into rank 1's mailbox
//   unit_empty 1  (rank 0) rank 1's producer after reading its mailbox (dynamic scheduler only)
// Ring slot of KV iteration i (counted over all tiles of the CTA): s = i % kStages, parity (i / kStages) & 1;
// the producer waits on "empty" with the opposite parity (a fresh barrier's previous phase counts as done).
struct Barriers {
  std::uint64_t* q_full;
  std::uint64_t* q_empty;
  std::uint64_t* k_full;   // [kStages]
  std::uint64_t* k_empty;
  std::uint64_t* v_full;
  std::uint64_t* v_empty;
  std::uint64_t* unit_full;
  std::uint64_t* unit_empty;
};

// Spin-wait with a timeout (STYLE.md): after p.timeout_cycles SM cycles the thread records which barrier
// it waited on in the host-visible report and traps (the launch fails; flash_attention_timeout_message()
// names the flag).
// kClusterAcquire: the wait also acquires what another CTA of the cluster released with its arrive.
template <bool kClusterAcquire = false>
__device__ __forceinline__ void wait_barrier(const KernelParams& p, std::uint64_t* bar, std::uint32_t parity,
                                             WaitFlag flag, std::uint32_t tile) {
  auto done = [&] { return ptx::mbarrier_try_wait_parity<kClusterAcquire>(bar, parity); };
  if (done()) return;
  const std::uint64_t start = ptx::clock64_cycles();
  while (!done()) {
    if (ptx::clock64_cycles() - start > p.timeout_cycles) {
      volatile WaitTimeoutReport* r = p.timeout_report;
      if (r != nullptr) {
        r->flag = static_cast<std::uint32_t>(flag);
        r->block = blockIdx.x;
        r->thread = threadIdx.x;
        r->tile = tile;
        r->parity = parity;
        __threadfence_system();
        r->valid = 1;
        __threadfence_system();
      }
      __trap();
    }
  }
}

template <int D>
__device__ __forceinline__ Barriers barriers_at(std::uint8_t* smem) {
  auto* b = reinterpret_cast<std::uint64_t*>(smem + SmemLayoutD<D>::kBarrierOffset);
  constexpr int S = TileShape::kStages;
  return Barriers{b, b + 1, b + 2, b + 2 + S, b + 2 + 2 * S, b + 2 + 3 * S, b + 2 + 4 * S, b + 3 + 4 * S};
}

// Arrivals that release a K/V stage: every consumer thread (no cluster), or one per consumer warp of each
// CTA of the cluster.
template <int kCluster>
inline constexpr std::uint32_t kKvEmptyArrivals =
    kCluster == 1 ? TileShape::kNumConsumerThreads : kCluster * TileShape::kNumConsumerThreads / 32;

template <int kCluster>
__device__ __forceinline__ void init_barriers(const Barriers& bars) {
  ptx::mbarrier_init(bars.q_full, 1);
  ptx::mbarrier_init(bars.q_empty, TileShape::kNumConsumerThreads);
  for (int s = 0; s < TileShape::kStages; ++s) {
    ptx::mbarrier_init(bars.k_full + s, 1);
    ptx::mbarrier_init(bars.k_empty + s, kKvEmptyArrivals<kCluster>);
    ptx::mbarrier_init(bars.v_full + s, 1);
    ptx::mbarrier_init(bars.v_empty + s, kKvEmptyArrivals<kCluster>);
  }
  ptx::mbarrier_init(bars.unit_full, 1);
  ptx::mbarrier_init(bars.unit_empty, 1);
  ptx::fence_mbarrier_init();
}

// A consumer thread is done reading K/V stage `bar` belongs to. Cluster: the warp's reads are done once all
// its lanes passed their wgmma wait; lane 0 then arrives on the stage's empty barrier in every CTA of the
// cluster (each CTA's producer multicasts into all of them).
template <int kCluster>
__device__ __forceinline__ void release_kv_stage(std::uint64_t* bar, std::uint32_t thread) {
  if constexpr (kCluster == 1) {
    ptx::mbarrier_arrive(bar);
  } else {
    __syncwarp();
    if ((thread & 31u) == 0) {
      const std::uint32_t addr = ptx::smem_u32(bar);
#pragma unroll
      for (int r = 0; r < kCluster; ++r) ptx::mbarrier_arrive_cluster(ptx::mapa_shared(addr, r));
    }
  }
}

// ---- Producer (one thread) ---------------------------------------------------------------------------
// Tensor maps view Q/K/V as 2D [num_heads * M rows][d cols] bf16 with a [128 rows][64 cols] box and
// 128B swizzle; a 128 x d tile is d/64 boxes (column halves), each 16 KiB at +half*16 KiB.
template <int D>
__device__ __forceinline__ void load_tile(std::uint8_t* smem_tile, const void* tensor_map, std::uint64_t* bar,
                                          std::int32_t row) {
#pragma unroll
  for (int h = 0; h < TileShapeD<D>::kNumColHalves; ++h)
    ptx::tma_load_2d(smem_tile + h * SmemLayoutD<D>::kHalfRowsBytes, tensor_map, bar,
                     h * TileShapeD<D>::kSwizzleCols, row);
}

// The tile slot in shared memory (layout.cuh kTileSlotOffset): [0] the tile index (past the last tile: no
// more tiles, the consumers leave), [1] 1 if this CTA runs another tile after it (the ping-pong turns need it),
// [2] the unit (its KV range and piece: scheduler.cuh), [3] its record slot.
// Shared-space addresses (32-bit), so a consumer keeps no 64-bit pointer live across its Q-loop.
template <int D>
__device__ __forceinline__ std::uint32_t tile_slot_addr(std::uint32_t smem_base) {
  return smem_base + SmemLayoutD<D>::kTileSlotOffset;
}

// A K/V tile (b_n keys at `row`) into one stage. kCluster 2: this CTA loads keys [64 r, 64 r + 64) of it
// (r = cluster rank) with a [64 rows][64 cols] box and multicasts them to both CTAs, at the same place in
// each (the half starts 8 KiB into every column half: a multiple of the 1024-B swizzle atom).
template <int D, int kCluster>
__device__ __forceinline__ void load_kv_tile(std::uint8_t* smem_tile, const void* tensor_map, std::uint64_t* bar,
                                             std::int32_t row, std::uint32_t cluster_rank) {
  if constexpr (kCluster == 1) {
    load_tile<D>(smem_tile, tensor_map, bar, row);
  } else {
    constexpr std::uint32_t kRows = TileShape::kBlockN / kCluster;
    constexpr std::uint16_t kAllCtas = static_cast<std::uint16_t>((1u << kCluster) - 1u);
#pragma unroll
    for (int h = 0; h < TileShapeD<D>::kNumColHalves; ++h)
      ptx::tma_load_2d_multicast(smem_tile + h * SmemLayoutD<D>::kHalfRowsBytes + cluster_rank * kRows * 128,
                                 tensor_map, bar, h * TileShapeD<D>::kSwizzleCols,
                                 row + static_cast<std::int32_t>(cluster_rank * kRows), kAllCtas);
  }
}

// The unit after `unit` for this CTA's cluster: the static stride, or the next ticket of the dynamic
// counter. Clusters of 2 with the dynamic scheduler: rank 0 draws the ticket and hands the unit to rank 1
// through rank 1's mailbox (unit_full / unit_empty, one hand-off in flight); `handoffs` counts them.
template <int D, int kCluster>
__device__ __forceinline__ std::uint32_t following_unit(const KernelParams& p, const Barriers& bars,
                                                        std::uint32_t smem_base, std::uint32_t unit,
                                                        std::uint32_t cluster_rank, std::uint32_t& handoffs) {
  if (!p.scheduler.dynamic) return p.scheduler.next_unit(unit);
  if constexpr (kCluster == 1) {
    return p.scheduler.ticket_unit(atomicAdd(p.tile_counters, 1u));
  } else {
    const std::uint32_t parity = handoffs++ & 1u;
    const std::uint32_t mailbox = smem_base + SmemLayoutD<D>::kUnitMailboxOffset;
    if (cluster_rank == 0) {
      const std::uint32_t next = p.scheduler.ticket_unit(atomicAdd(p.tile_counters, 1u));
      wait_barrier<true>(p, bars.unit_empty, parity ^ 1u, WaitFlag::kUnitEmpty,
                         p.scheduler.tile_of(unit, cluster_rank));  // rank 1 read the last
      ptx::st_shared_cluster_b32(ptx::mapa_shared(mailbox, 1), next);
      ptx::mbarrier_arrive_cluster_release(ptx::mapa_shared(ptx::smem_u32(bars.unit_full), 1));
      return next;
    } else {
      wait_barrier<true>(p, bars.unit_full, parity, WaitFlag::kUnitFull, p.scheduler.tile_of(unit, cluster_rank));
      const std::uint32_t next = ptx::ld_shared_b32(mailbox);
      ptx::mbarrier_arrive_cluster_release(ptx::mapa_shared(ptx::smem_u32(bars.unit_empty), 0));
      return next;
    }
  }
}

template <int D, int kCluster, bool kSplitTail>
__device__ __forceinline__ void producer_loop(const KernelParams& p, const void* tm_q, const void* tm_k,
                                              const void* tm_v, std::uint8_t* smem, const Barriers& bars,
                                              std::uint32_t cta_idx, std::uint32_t cluster_rank) {
  using SmemLayout = SmemLayoutD<D>;
  constexpr std::uint32_t S = TileShape::kStages;
  const std::uint32_t smem_base = ptx::smem_u32(smem);
  const std::uint32_t slot = tile_slot_addr<D>(smem_base);
  std::uint32_t kv_iter = 0;
  std::uint32_t handoffs = 0;
  std::uint32_t unit = p.scheduler.first_unit(cta_idx / kCluster);
  // The following unit is known one unit ahead (its ticket drawn while this unit's K/V stream in), so
  // the slot can say whether another tile follows.
  std::uint32_t next =
      p.scheduler.valid_unit(unit) ? following_unit<D, kCluster>(p, bars, smem_base, unit, cluster_rank, handoffs)
                                   : unit;
  for (std::uint32_t local_idx = 0;; ++local_idx) {
    const std::uint32_t tile = p.scheduler.tile_of(unit, cluster_rank);
    wait_barrier(p, bars.q_empty, (local_idx & 1) ^ 1, WaitFlag::kQEmpty, tile);
    ptx::st_shared_b32(slot, tile);
    ptx::st_shared_b32(slot + 4, p.scheduler.valid_unit(next) ? 1u : 0u);
    ptx::st_shared_b32(slot + 8, unit);
    ptx::st_shared_b32(slot + 12, p.scheduler.record_slot(unit, cluster_rank));
    if (!p.scheduler.valid_unit(unit)) {
      ptx::mbarrier_arrive(bars.q_full);  // no Q: the consumers read the slot and leave
      break;
    }
    const TileCoord c = p.scheduler.coord(tile);
    const auto q_row = static_cast<std::int32_t>(c.head * p.seq_len + c.m_block * TileShape::kBlockM);
    const auto kv_row0 = static_cast<std::int32_t>(c.head * p.seq_len);
    ptx::mbarrier_arrive_expect_tx(bars.q_full, SmemLayout::kQBytes);
    load_tile<D>(smem + SmemLayout::kQOffset, tm_q, bars.q_full, q_row);
    // The unit's KV tiles: all of them, or (split tail) its piece's range.
    const std::uint32_t kv_first = kSplitTail ? p.scheduler.kv_begin(unit) : 0u;
    const std::uint32_t kv_end = kSplitTail ? kv_first + p.scheduler.kv_count(unit) : p.num_kv_tiles;
    for (std::uint32_t j = kv_first; j < kv_end; ++j, ++kv_iter) {
      const std::uint32_t s = kv_iter % S;
      const std::uint32_t parity = ((kv_iter / S) & 1) ^ 1;
      const auto kv_row = kv_row0 + static_cast<std::int32_t>(j * TileShape::kBlockN);
      wait_barrier(p, bars.k_empty + s, parity, WaitFlag::kKEmpty, tile);
      ptx::mbarrier_arrive_expect_tx(bars.k_full + s, SmemLayout::kTileBytes);
      load_kv_tile<D, kCluster>(smem + SmemLayout::k_offset(static_cast<int>(s)), tm_k, bars.k_full + s, kv_row,
                                cluster_rank);
      wait_barrier(p, bars.v_empty + s, parity, WaitFlag::kVEmpty, tile);
      ptx::mbarrier_arrive_expect_tx(bars.v_full + s, SmemLayout::kTileBytes);
      load_kv_tile<D, kCluster>(smem + SmemLayout::v_offset(static_cast<int>(s)), tm_v, bars.v_full + s, kv_row,
                                cluster_rank);
    }
    unit = next;
    if (p.scheduler.valid_unit(unit))
      next = following_unit<D, kCluster>(p, bars, smem_base, unit, cluster_rank, handoffs);
  }
  // Tail: wait until the consumers released every slot, so no TMA write is outstanding when this thread
  // exits and no barrier phase is left half-used.
  for (std::uint32_t i = 0; i < S; ++i, ++kv_iter) {
    const std::uint32_t s = kv_iter % S;
    const std::uint32_t parity = ((kv_iter / S) & 1) ^ 1;
    wait_barrier(p, bars.k_empty + s, parity, WaitFlag::kKEmpty, 0xFFFFFFFFu);
    wait_barrier(p, bars.v_empty + s, parity, WaitFlag::kVEmpty, 0xFFFFFFFFu);
  }
  // Dynamic: every CTA drew (or, rank 1 of a cluster, received) its last (past-the-end) ticket before
  // counting itself done, so the last CTA done zeroes both counters for the next launch on the stream.
  if (p.scheduler.dynamic) {
    __threadfence();  // this CTA's last ticket is drawn before it counts itself done
    if (atomicAdd(p.tile_counters + 1, 1u) == p.scheduler.num_ctas - 1) {
      __threadfence();  // every other CTA's done (and so its last ticket) before the reset
      atomicExch(p.tile_counters, 0u);
      atomicExch(p.tile_counters + 1, 0u);
    }
  }
}

// ---- Consumer warpgroup: wgmma stages --------------------------------------------------------------
// S[64 x 128] = Q[64 x d] K^T. A = this warpgroup's 64 Q rows, B = the K tile ([key][d] = N x K,
// K-major): both 128B-swizzled K-major, SBO = 8 rows x 128 B = 1024 (LBO unused for swizzled K-major).
// k-step kk covers d columns 16kk..16kk+15: column half kk/4, +32 B per step inside the swizzle atom.
template <int D>
__device__ __forceinline__ void issue_qk(float (&s)[64], std::uint32_t q_addr, std::uint32_t k_addr) {
  ptx::fence_operands(s);
  ptx::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const std::uint32_t off = (kk / 4) * SmemLayoutD<D>::kHalfRowsBytes + (kk % 4) * 32;
    const std::uint64_t da = ptx::make_smem_desc_sw128(q_addr + off, 16, 1024);
    const std::uint64_t db = ptx::make_smem_desc_sw128(k_addr + off, 16, 1024);
    ptx::wgmma_m64n128k16_f32_bf16_ss(s, da, db, kk > 0 ? 1u : 0u);
  }
  ptx::wgmma_commit_group();
  ptx::fence_operands(s);
}

// O[64 x d] += P[64 x 128 keys] V[128 keys x d]. B = the V tile as stored ([key][d], d contiguous:
// MN-major, imm-tnsp-b = 1). MN-major 128B swizzle: 64 d-columns per atom, atoms (column halves) at
// LBO = 16 KiB (d = 64: one atom, LBO unused); 8-key groups at SBO = 1024 B; k-step kk starts 16 keys =
// 2048 B further. A = P as bf16 pairs in the accumulator layout of S: pf[4kk + r] = pack(s[8kk + 2r],
// s[8kk + 2r + 1]). d = 128: m64n128k16; d = 64: m64n64k16 (wgmma_n64.cuh).
template <int D>
__device__ __forceinline__ void issue_pv(float (&o)[D / 2], std::uint32_t (&pf)[32], std::uint32_t v_addr) {
  ptx::fence_operands(o);
  ptx::fence_operands(pf);
  ptx::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < TileShape::kBlockN / 16; ++kk) {
    const std::uint64_t db =
        ptx::make_smem_desc_sw128(v_addr + kk * 16 * 128, SmemLayoutD<D>::kHalfRowsBytes, 1024);
    const std::uint32_t a[4] = {pf[4 * kk], pf[4 * kk + 1], pf[4 * kk + 2], pf[4 * kk + 3]};
    if constexpr (D == 128) {
      ptx::wgmma_m64n128k16_f32_bf16_rs_tb(o, a, db, 1u);
    } else {
      wgmma_m64n64k16_f32_bf16_rs_tb(o, a, db, 1u);
    }
  }
  ptx::wgmma_commit_group();
  ptx::fence_operands(o);
}

// ---- Online softmax (each thread: rows r0 = 16*warp + lane/4 and r0 + 8, 32 columns each) ----------
// s[4j + 0..1] is row r0, s[4j + 2..3] row r0 + 8; a row's 128 columns live in the 4 threads of a quad.
// m: running row max of raw scores; l: this thread's partial row sum (quad-reduced once at the end);
// corr: exp2((m_old - m_new) * scale_log2), the factor the caller applies to O.
__device__ __forceinline__ void online_softmax(float (&s)[64], float (&m)[2], float (&l)[2], float (&corr)[2],
                                               float scale_log2) {
  float mx[2] = {m[0], m[1]};
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    mx[0] = fmaxf(mx[0], fmaxf(s[4 * j], s[4 * j + 1]));
    mx[1] = fmaxf(mx[1], fmaxf(s[4 * j + 2], s[4 * j + 3]));
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xFFFFFFFFu, mx[r], 1));
    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xFFFFFFFFu, mx[r], 2));
    corr[r] = ptx::ex2_approx((m[r] - mx[r]) * scale_log2);  // m_old = -inf on the first tile: 0
    m[r] = mx[r];
  }
  const float neg_ms[2] = {-mx[0] * scale_log2, -mx[1] * scale_log2};
  float sum[2] = {0.0f, 0.0f};
#pragma unroll
  for (int j = 0; j < 16; ++j) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = e / 2;
      s[4 * j + e] = ptx::ex2_approx(fmaf(s[4 * j + e], scale_log2, neg_ms[r]));
      sum[r] += s[4 * j + e];
    }
  }
  l[0] = l[0] * corr[0] + sum[0];
  l[1] = l[1] * corr[1] + sum[1];
}

// o: the m64nNk16 accumulator fragment, N = 2 * kN (o[4j + 0..1] row r0, o[4j + 2..3] row r0 + 8).
template <int kN>
__device__ __forceinline__ void rescale_o(float (&o)[kN], const float (&corr)[2]) {
#pragma unroll
  for (int j = 0; j < kN / 4; ++j) {
    o[4 * j] *= corr[0];
    o[4 * j + 1] *= corr[0];
    o[4 * j + 2] *= corr[1];
    o[4 * j + 3] *= corr[1];
  }
}

__device__ __forceinline__ void convert_p(const float (&s)[64], std::uint32_t (&pf)[32]) {
#pragma unroll
  for (int i = 0; i < 32; ++i) pf[i] = ptx::pack_bf16x2(s[2 * i], s[2 * i + 1]);
}

// O /= l with l quad-reduced (every thread of a quad then holds the full row sum).
template <int kN>
__device__ __forceinline__ void normalize_o(float (&o)[kN], float (&l)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xFFFFFFFFu, l[r], 1);
    l[r] += __shfl_xor_sync(0xFFFFFFFFu, l[r], 2);
  }
  const float inv[2] = {1.0f / l[0], 1.0f / l[1]};
  rescale_o(o, inv);
}

}  // namespace xs::kernels::attention
