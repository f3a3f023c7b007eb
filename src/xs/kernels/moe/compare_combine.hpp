// xstage kernels layer (moe): device-side checks of Combine destinations. An expected-slot mask built
// from the routing tables, then one pass over every (rank, slot, column) of two destination sets that
// counts wrong, unwritten and unexpectedly written elements, bitwise equality, and locates the worst
// element. Runs at HBM speed on the full destinations, so large shapes need no host copy.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "xs/kernels/moe/config.hpp"
#include "xs/kernels/moe/layout.cuh"
#include "xs/kernels/moe/random_fill.hpp"

namespace xs::kernels::moe {

// Expected-slot mask word, one per (rank, slot), [num_ranks][slots_per_rank] uint32:
//   bits 0..15 number of non-padding pool rows whose Combine row targets the slot (0: nothing may write
//              it; more than 1 is a routing bug, counted as multi_writer_slots)
//   bit 31     at least one of them lies in [row_begin, row_end): its values are compared with ref_dst
inline constexpr std::uint32_t kSlotWriterCountMask = 0xFFFFu;
inline constexpr std::uint32_t kSlotCompareBit = 1u << 31;

struct SlotMaskArgs {
  RoutingTables routing;        // pool_arrival, pool_dst_rank, pool_dst_slot are read
  int num_pool_rows = 0;        // num_row_blocks * 128
  int row_begin = 0;            // the reference's row range (slots of rows outside it: written-only check)
  int row_end = -1;             // -1: num_pool_rows
  int num_ranks = 1;
  std::uint32_t slots_per_rank = 0;  // T * top_k
  std::uint32_t* mask = nullptr;     // device, num_ranks * slots_per_rank words
  std::uint64_t mask_bytes = 0;
};

// Zeroes the mask, then marks every non-padding pool row's slot. A row routed outside
// [0, num_ranks) x [0, slots_per_rank) traps with a printf naming it. Throws xs::input_error on bad
// arguments, xs::Error on a launch failure.
void launch_build_slot_mask(const SlotMaskArgs& args, cudaStream_t stream);

// Counts over all num_ranks * slots_per_rank * hidden elements (test = the kernel's, ref = the reference's
// or another schedule's). "Poisoned" means bits == poison_bits.
struct CombineCompareResult {
  std::uint64_t total_elements = 0;
  std::uint64_t bitwise_equal_elements = 0;  // test bits == ref bits, every slot (schedule-vs-schedule identity)
  std::uint64_t compared_elements = 0;       // elements of compare slots whose test value is not poisoned
  std::uint64_t wrong_elements = 0;          // of those: |t - r| > abs_tol + rel_tol * |r|, or a NaN/inf pair
                                             // that is not bitwise equal
  std::uint64_t unwritten_slots = 0;         // expected slots (writer count >= 1) with a poisoned element
  std::uint64_t unwritten_elements = 0;
  std::uint64_t unexpected_slots = 0;        // slots no pool row targets with an element that is not poisoned
  std::uint64_t unexpected_elements = 0;
  std::uint64_t multi_writer_slots = 0;      // slots more than one pool row targets
  float max_abs_error = 0.0f;                // over compared elements (inf for NaN/inf)
  float max_rel_error = 0.0f;                // |t - r| / |r| over compared elements with r != 0
  float worst_excess = 0.0f;                 // max |t - r| / (abs_tol + rel_tol * |r|); > 1 means wrong
  std::uint32_t reserved = 0;
  std::uint64_t worst_index = ~0ull;         // (rank * slots_per_rank + slot) * hidden + col of the worst
                                             // compared element (smallest index on ties); ~0 if none
  // The fp8 accuracy measure (DeepGEMM's tests) over the compared elements whose test and reference
  // values are both finite (a non-finite pair is already counted wrong unless bitwise equal): sums in
  // double, and 1 - 2<t,r> / (|t|^2 + |r|^2) from them (fp8.hpp; 0 when nothing was summed).
  double sum_test_ref = 0.0;                 // <t, r>
  double sum_test_sq = 0.0;                  // |t|^2
  double sum_ref_sq = 0.0;                   // |r|^2
  double relative_difference = 0.0;
};

struct CombineCompareArgs {
  int num_ranks = 1;
  int hidden = 0;
  std::uint32_t slots_per_rank = 0;
  const void* test_dst[kMaxRanks] = {};  // [slots_per_rank][hidden] bf16 each
  const void* ref_dst[kMaxRanks] = {};
  const std::uint32_t* slot_mask = nullptr;  // from launch_build_slot_mask
  std::uint16_t poison_bits = kPoisonBits;   // what the destinations were filled with before the launches
  float abs_tol = 0.0f;
  float rel_tol = 0.0f;
  CombineCompareResult* result = nullptr;    // device memory; overwritten
};

// Zeroes *result, then enqueues the counting pass and the worst-element pass. Throws xs::input_error on
// bad arguments, xs::Error on a launch failure. The caller copies *result back after a sync.
void launch_compare_combine(const CombineCompareArgs& args, cudaStream_t stream);

}  // namespace xs::kernels::moe
