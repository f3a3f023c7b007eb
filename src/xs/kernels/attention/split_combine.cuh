// xstage kernels layer (attention): the split tail's combine (scheduler.cuh, FlashAttentionConfig::
// tail_kv_splits). A split tile runs as kv_splits pieces over disjoint KV ranges, each a Q-loop of its own
// (possibly on different CTAs). Every piece's consumer warpgroup leaves its partial result in global memory
// (layout.cuh SplitPartialLayout: unnormalized O, row max m and row sum l of its 64 rows), then counts
// itself in the tile's arrival counter; the warpgroup whose arrival is the last one reads every piece's
// partials, merges them in piece order (the online softmax's rescaling: m = max(m_a, m_b),
// O = O_a 2^((m_a - m) s) + O_b 2^((m_b - m) s), the same for l), normalizes and stores the tile as a whole
// tile's warpgroup does. The last arrival zeroes the counter right after arriving (nobody else touches it in
// this launch), for the next launch. No piece waits for another.
// Ordering: the pieces' stores, then bar.sync of the warpgroup, then thread 0's fence and atomic (release);
// the last arrival's atomic, fence, bar.sync, then its loads at L2 (.cg) (acquire). Device only.
#pragma once
#include <cstdint>

#include "xs/kernels/attention/epilogue.cuh"
#include "xs/kernels/attention/mainloop.cuh"
#include "xs/kernels/attention/params.cuh"
#include "xs/kernels/common/ptx_hopper.cuh"

namespace xs::kernels::attention {

// l quad-reduced: every thread of a quad then holds its rows' full sums (normalize_o does the same).
__device__ __forceinline__ void quad_reduce_sums(float (&l)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xFFFFFFFFu, l[r], 1);
    l[r] += __shfl_xor_sync(0xFFFFFFFFu, l[r], 2);
  }
}

// After a split piece's Q-loop: o unnormalized, m the row maxima of raw scores, l this thread's partial row sums.
// Returns true when this warpgroup's arrival was the tile's last: o then holds the normalized output of the
// whole KV range and the caller stores it. arrival_addr: this warpgroup's word in shared memory
// (layout.cuh kSplitArrivalOffset + 4 * consumer).
template <int D>
__device__ __forceinline__ bool finish_split_piece(const KernelParams& p, float (&o)[D / 2], float (&m)[2],
                                                   float (&l)[2], std::uint32_t tile, std::uint32_t piece,
                                                   std::uint32_t consumer, std::uint32_t thread,
                                                   std::uint32_t arrival_addr) {
  using Layout = SplitPartialLayout<D>;
  const std::uint32_t kv_splits = p.scheduler.kv_splits;
  const std::uint32_t split_tile = p.scheduler.split_tile_idx(tile);
  quad_reduce_sums(l);
  float* mine = p.split_partials + Layout::block(split_tile, consumer, piece, kv_splits);
#pragma unroll
  for (int i = 0; i < D / 2; ++i) __stcg(mine + i * 128 + thread, o[i]);
  __stcg(mine + Layout::kMaxOffset * 128 + thread, m[0]);
  __stcg(mine + (Layout::kMaxOffset + 1) * 128 + thread, m[1]);
  __stcg(mine + Layout::kSumOffset * 128 + thread, l[0]);
  __stcg(mine + (Layout::kSumOffset + 1) * 128 + thread, l[1]);
  consumer_barrier(consumer);  // the warpgroup's partial is written
  if (thread == 0) {
    std::uint32_t* counter = p.split_counters + split_tile * 2 + consumer;
    __threadfence();  // release: the warpgroup's stores before the arrival
    const std::uint32_t arrived = atomicAdd(counter, 1u) + 1u;
    __threadfence();  // acquire: the other pieces' partials after their arrivals
    if (arrived == kv_splits) atomicExch(counter, 0u);  // every piece arrived: zero for the next launch
    ptx::st_shared_b32(arrival_addr, arrived);
  }
  consumer_barrier(consumer);
  if (ptx::ld_shared_b32(arrival_addr) != kv_splits) return false;
  // Merged in piece order 0, 1, ... from the partials in memory (this warpgroup's own too: each thread reads
  // back what it wrote), so the bits do not depend on which piece arrived last.
  const float* first = p.split_partials + Layout::block(split_tile, consumer, 0, kv_splits);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    m[r] = __ldcg(first + (Layout::kMaxOffset + r) * 128 + thread);
    l[r] = __ldcg(first + (Layout::kSumOffset + r) * 128 + thread);
  }
#pragma unroll
  for (int i = 0; i < D / 2; ++i) o[i] = __ldcg(first + i * 128 + thread);
  for (std::uint32_t q = 1; q < kv_splits; ++q) {
    const float* other = p.split_partials + Layout::block(split_tile, consumer, q, kv_splits);
    float a[2], b[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float mq = __ldcg(other + (Layout::kMaxOffset + r) * 128 + thread);
      const float lq = __ldcg(other + (Layout::kSumOffset + r) * 128 + thread);
      const float mx = fmaxf(m[r], mq);
      a[r] = ptx::ex2_approx((m[r] - mx) * p.scale_log2);
      b[r] = ptx::ex2_approx((mq - mx) * p.scale_log2);
      l[r] = l[r] * a[r] + lq * b[r];
      m[r] = mx;
    }
#pragma unroll
    for (int i = 0; i < D / 2; ++i) {
      const int r = (i % 4) / 2;  // o[4j + 0..1]: row r0, o[4j + 2..3]: row r0 + 8
      o[i] = o[i] * a[r] + __ldcg(other + i * 128 + thread) * b[r];
    }
  }
  const float inv[2] = {1.0f / l[0], 1.0f / l[1]};
  rescale_o(o, inv);
  return true;
}

}  // namespace xs::kernels::attention
