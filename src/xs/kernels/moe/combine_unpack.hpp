// xstage kernels layer (moe): scatters packed Combine rows (the unfused pipeline's per-rank send buffers,
// rows in pool order) into the slot layout of dst[rank] (layout.cuh), so the unfused twin is verified
// against the same reference as the fused kernel. Verification only: never timed.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "xs/kernels/moe/layout.cuh"

namespace xs::kernels::moe {

struct CombineUnpackArgs {
  int hidden = 0;
  int num_pool_rows = 0;
  int num_ranks = 1;
  const std::int32_t* pool_dst_rank = nullptr;    // device: destination rank per pool row, -1 padding
  const std::int32_t* pool_dst_slot = nullptr;    // device: slot (token * top_k + k) in dst[rank]
  const std::int32_t* pool_packed_row = nullptr;  // device: row of the packed buffer of that rank
  const void* packed[kMaxRanks] = {};             // device-visible: [rows of rank][hidden] bf16
  void* dst[kMaxRanks] = {};                      // device: [slots][hidden] bf16
};

// Throws xs::input_error on bad arguments, xs::Error on a launch failure.
void launch_combine_unpack(const CombineUnpackArgs& args, cudaStream_t stream);

}  // namespace xs::kernels::moe
