// xstage kernels layer (moe): expected-slot mask and Combine destination comparison (compare_combine.hpp).
// The comparison takes one block per (rank, slot) at a time (grid-stride over slots, threads over
// columns), so slot-level verdicts (unwritten, unexpected) come from one __syncthreads_or per slot.
// Counters are reduced per warp before one global atomic each.
#include <cmath>
#include <cstdio>
#include <string>

#include <cuda_bf16.h>

#include "xs/common/error.hpp"
#include "xs/kernels/moe/compare_combine.hpp"
#include "xs/kernels/moe/compare_rule.cuh"
#include "xs/kernels/moe/fp8.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::kernels::moe {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kMaxBlocks = 2048;

__global__ void build_slot_mask_kernel(SlotMaskArgs a, int row_end) {
  const int stride = static_cast<int>(gridDim.x * blockDim.x);
  for (int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); r < a.num_pool_rows; r += stride) {
    if (a.routing.pool_arrival[r] < 0) continue;  // padding row: writes nothing
    const int rank = a.routing.pool_dst_rank[r];
    const int slot = a.routing.pool_dst_slot[r];
    if (rank < 0 || rank >= a.num_ranks || slot < 0 || static_cast<std::uint32_t>(slot) >= a.slots_per_rank) {
      printf("slot mask: pool row %d routes to rank %d slot %d (ranks %d, slots per rank %u)\n", r, rank, slot,
             a.num_ranks, a.slots_per_rank);
      __trap();
    }
    std::uint32_t* word = a.mask + static_cast<std::uint64_t>(rank) * a.slots_per_rank + slot;
    atomicAdd(word, 1u);  // 65535 writers to one slot would carry into the flag bits: far beyond any routing bug
    if (r >= a.row_begin && r < row_end) atomicOr(word, kSlotCompareBit);
  }
}

__device__ __forceinline__ std::uint64_t warp_sum(std::uint64_t v) {
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xFFFFFFFFu, v, off);
  return v;
}
__device__ __forceinline__ double warp_sum(double v) {
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xFFFFFFFFu, v, off);
  return v;
}
__device__ __forceinline__ void add_if(double* dst, double v) {
  if (v != 0.0) atomicAdd(dst, v);
}
__device__ __forceinline__ float warp_max(float v) {
  for (int off = 16; off > 0; off /= 2) v = fmaxf(v, __shfl_down_sync(0xFFFFFFFFu, v, off));
  return v;
}
__device__ __forceinline__ void add_if(unsigned long long* dst, std::uint64_t v) {
  if (v != 0) atomicAdd(dst, static_cast<unsigned long long>(v));
}
// Non-negative floats order like their bit patterns.
__device__ __forceinline__ void max_if(float* dst, float v) {
  if (v > 0.0f) atomicMax(reinterpret_cast<unsigned int*>(dst), __float_as_uint(v));
}

__device__ __forceinline__ const std::uint16_t* slot_row(const void* base, std::uint32_t slot, int hidden) {
  return static_cast<const std::uint16_t*>(base) + static_cast<std::uint64_t>(slot) * hidden;
}

__global__ void init_result_kernel(CombineCompareResult* result) { *result = CombineCompareResult{}; }

__global__ void __launch_bounds__(kThreads) compare_combine_kernel(CombineCompareArgs a) {
  const std::uint64_t num_slots = static_cast<std::uint64_t>(a.num_ranks) * a.slots_per_rank;
  std::uint64_t equal = 0, compared = 0, wrong = 0, unwritten_el = 0, unexpected_el = 0;
  std::uint64_t unwritten_slots = 0, unexpected_slots = 0, multi_slots = 0;  // thread 0 only
  float max_abs = 0.0f, max_rel = 0.0f, max_excess = 0.0f;
  double sum_tr = 0.0, sum_tt = 0.0, sum_rr = 0.0;  // relative-difference sums (finite compared pairs)
  for (std::uint64_t s = blockIdx.x; s < num_slots; s += gridDim.x) {
    const auto rank = static_cast<int>(s / a.slots_per_rank);
    const auto slot = static_cast<std::uint32_t>(s % a.slots_per_rank);
    const std::uint32_t word = a.slot_mask[s];
    const std::uint32_t writers = word & kSlotWriterCountMask;
    const bool compare = writers > 0 && (word & kSlotCompareBit) != 0;
    const std::uint16_t* t = slot_row(a.test_dst[rank], slot, a.hidden);
    const std::uint16_t* r = slot_row(a.ref_dst[rank], slot, a.hidden);
    int poisoned_here = 0, written_here = 0;
    for (int c = static_cast<int>(threadIdx.x); c < a.hidden; c += blockDim.x) {
      const std::uint16_t tb = t[c], rb = r[c];
      equal += tb == rb;
      if (tb == a.poison_bits) {
        poisoned_here = 1;
        unwritten_el += writers > 0;
        continue;
      }
      written_here = 1;
      if (writers == 0) {
        ++unexpected_el;
      } else if (compare) {
        ++compared;
        float abs_err, rel_err;
        const float excess = element_excess(tb, rb, a.abs_tol, a.rel_tol, abs_err, rel_err);
        wrong += excess > 1.0f;
        max_abs = fmaxf(max_abs, abs_err);
        max_rel = fmaxf(max_rel, rel_err);
        max_excess = fmaxf(max_excess, excess);
        const double tv = bf16_bits_value(tb), rv = bf16_bits_value(rb);
        if (isfinite(tv) && isfinite(rv)) {
          sum_tr += tv * rv;
          sum_tt += tv * tv;
          sum_rr += rv * rv;
        }
      }
    }
    const int any_poisoned = __syncthreads_or(poisoned_here);
    const int any_written = __syncthreads_or(written_here);
    if (threadIdx.x == 0) {
      unwritten_slots += writers > 0 && any_poisoned;
      unexpected_slots += writers == 0 && any_written;
      multi_slots += writers > 1;
    }
  }
  CombineCompareResult* out = a.result;
  const auto u64 = [](std::uint64_t* p) { return reinterpret_cast<unsigned long long*>(p); };
  equal = warp_sum(equal);
  compared = warp_sum(compared);
  wrong = warp_sum(wrong);
  unwritten_el = warp_sum(unwritten_el);
  unexpected_el = warp_sum(unexpected_el);
  max_abs = warp_max(max_abs);
  max_rel = warp_max(max_rel);
  max_excess = warp_max(max_excess);
  sum_tr = warp_sum(sum_tr);
  sum_tt = warp_sum(sum_tt);
  sum_rr = warp_sum(sum_rr);
  if (threadIdx.x % 32 == 0) {
    add_if(&out->sum_test_ref, sum_tr);
    add_if(&out->sum_test_sq, sum_tt);
    add_if(&out->sum_ref_sq, sum_rr);
    add_if(u64(&out->bitwise_equal_elements), equal);
    add_if(u64(&out->compared_elements), compared);
    add_if(u64(&out->wrong_elements), wrong);
    add_if(u64(&out->unwritten_elements), unwritten_el);
    add_if(u64(&out->unexpected_elements), unexpected_el);
    max_if(&out->max_abs_error, max_abs);
    max_if(&out->max_rel_error, max_rel);
    max_if(&out->worst_excess, max_excess);
  }
  if (threadIdx.x == 0) {
    add_if(u64(&out->unwritten_slots), unwritten_slots);
    add_if(u64(&out->unexpected_slots), unexpected_slots);
    add_if(u64(&out->multi_writer_slots), multi_slots);
    if (blockIdx.x == 0) out->total_elements = num_slots * static_cast<std::uint64_t>(a.hidden);
  }
}

// Second pass: the smallest index of a compared element whose excess equals the maximum found by the
// first pass (recomputed with the same code, so the float bits match).
__global__ void __launch_bounds__(kThreads) locate_worst_kernel(CombineCompareArgs a) {
  CombineCompareResult* out = a.result;
  if (out->compared_elements == 0) return;
  const float worst = out->worst_excess;
  const std::uint64_t num_slots = static_cast<std::uint64_t>(a.num_ranks) * a.slots_per_rank;
  for (std::uint64_t s = blockIdx.x; s < num_slots; s += gridDim.x) {
    const std::uint32_t word = a.slot_mask[s];
    if ((word & kSlotWriterCountMask) == 0 || (word & kSlotCompareBit) == 0) continue;
    const auto rank = static_cast<int>(s / a.slots_per_rank);
    const auto slot = static_cast<std::uint32_t>(s % a.slots_per_rank);
    const std::uint16_t* t = slot_row(a.test_dst[rank], slot, a.hidden);
    const std::uint16_t* r = slot_row(a.ref_dst[rank], slot, a.hidden);
    for (int c = static_cast<int>(threadIdx.x); c < a.hidden; c += blockDim.x) {
      if (t[c] == a.poison_bits) continue;
      float abs_err, rel_err;
      const float excess = element_excess(t[c], r[c], a.abs_tol, a.rel_tol, abs_err, rel_err);
      if (__float_as_uint(excess) == __float_as_uint(worst))
        atomicMin(reinterpret_cast<unsigned long long*>(&out->worst_index),
                  static_cast<unsigned long long>(s * static_cast<std::uint64_t>(a.hidden) + c));
    }
  }
}

__global__ void relative_difference_kernel(CombineCompareResult* out) {
  out->relative_difference = relative_difference_from_sums(out->sum_test_ref, out->sum_test_sq, out->sum_ref_sq);
}

bool bad_pointer(const void* p) { return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 2 != 0; }

unsigned grid_for(std::uint64_t work_items, unsigned per_block) {
  const std::uint64_t blocks = (work_items + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < kMaxBlocks ? (blocks > 0 ? blocks : 1) : kMaxBlocks);
}

}  // namespace

void launch_build_slot_mask(const SlotMaskArgs& a, cudaStream_t stream) {
  if (a.num_ranks < 1 || a.num_ranks > kMaxRanks)
    throw input_error("num_ranks", "slot mask needs 1.." + std::to_string(kMaxRanks) + " ranks");
  if (a.slots_per_rank == 0) throw input_error("slots_per_rank", "slot mask needs T * top_k > 0 slots per rank");
  const int row_end = a.row_end < 0 ? a.num_pool_rows : a.row_end;
  if (a.num_pool_rows < 0 || a.row_begin < 0 || row_end < a.row_begin || row_end > a.num_pool_rows)
    throw input_error("row_begin", "slot mask needs 0 <= row_begin <= row_end <= num_pool_rows");
  const std::uint64_t words = static_cast<std::uint64_t>(a.num_ranks) * a.slots_per_rank;
  if (a.mask == nullptr || a.mask_bytes < words * 4)
    throw input_error("mask", "slot mask needs a device buffer of num_ranks * slots_per_rank * 4 = " +
                                  std::to_string(words * 4) + " bytes");
  if (a.num_pool_rows > 0 && (!a.routing.pool_arrival || !a.routing.pool_dst_rank || !a.routing.pool_dst_slot))
    throw input_error("routing", "slot mask needs pool_arrival, pool_dst_rank and pool_dst_slot");
  XS_CUDA_CHECK(cudaMemsetAsync(a.mask, 0, words * 4, stream));
  if (a.num_pool_rows == 0) return;
  build_slot_mask_kernel<<<grid_for(static_cast<std::uint64_t>(a.num_pool_rows), kThreads), kThreads, 0, stream>>>(
      a, row_end);
  XS_CUDA_CHECK_LAUNCH();
}

void launch_compare_combine(const CombineCompareArgs& a, cudaStream_t stream) {
  if (a.num_ranks < 1 || a.num_ranks > kMaxRanks)
    throw input_error("num_ranks", "compare_combine needs 1.." + std::to_string(kMaxRanks) + " ranks");
  if (a.hidden <= 0) throw input_error("hidden", "compare_combine needs h > 0");
  if (a.slots_per_rank == 0) throw input_error("slots_per_rank", "compare_combine needs T * top_k > 0");
  if (!std::isfinite(a.abs_tol) || !std::isfinite(a.rel_tol) || a.abs_tol < 0 || a.rel_tol < 0)
    throw input_error("abs_tol", "compare_combine needs finite tolerances >= 0");
  for (int r = 0; r < a.num_ranks; ++r)
    if (bad_pointer(a.test_dst[r]) || bad_pointer(a.ref_dst[r]))
      throw input_error("test_dst[" + std::to_string(r) + "]",
                        "compare_combine needs 2-byte aligned test and reference destinations for every rank");
  if (a.slot_mask == nullptr)
    throw input_error("slot_mask", "compare_combine needs the mask of launch_build_slot_mask");
  if (a.result == nullptr || reinterpret_cast<std::uintptr_t>(a.result) % alignof(CombineCompareResult) != 0)
    throw input_error("result", "compare_combine needs an aligned device CombineCompareResult");
  init_result_kernel<<<1, 1, 0, stream>>>(a.result);
  XS_CUDA_CHECK_LAUNCH();
  const unsigned blocks = grid_for(static_cast<std::uint64_t>(a.num_ranks) * a.slots_per_rank, 1);
  compare_combine_kernel<<<blocks, kThreads, 0, stream>>>(a);
  XS_CUDA_CHECK_LAUNCH();
  locate_worst_kernel<<<blocks, kThreads, 0, stream>>>(a);
  XS_CUDA_CHECK_LAUNCH();
  relative_difference_kernel<<<1, 1, 0, stream>>>(a.result);
  XS_CUDA_CHECK_LAUNCH();
}

}  // namespace xs::kernels::moe
