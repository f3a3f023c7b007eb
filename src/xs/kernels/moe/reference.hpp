// xstage kernels layer (moe): the fp32 SIMT GPU reference of one emulated rank's MegaMoE data path
// (Dispatch gather -> Linear-1 -> SwiGLU x top-k weight -> Linear-2 -> Combine), with the fused kernel's
// rounding points and none of its machinery (no tensor cores, no TMA, no schedule). Checked against a
// float64 loop in tests/gpu_moe; the oracle the MegaMoE kernel is compared with on large shapes.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "xs/common/error.hpp"
#include "xs/kernels/moe/config.hpp"
#include "xs/kernels/moe/layout.cuh"
#include "xs/kernels/moe/megamoe.hpp"

namespace xs::kernels::moe {

// Same data layouts as MegaMoeArgs (megamoe.hpp). bf16: for each non-padding pool row r in
// [row_begin, row_end) with expert e = row_block_expert[r / 128] and x = arrival[pool_arrival[r]]:
//   gate_j = sum_k x[k] * w1[e][2j][k], up_j = sum_k x[k] * w1[e][2j+1][k]        (fp32, k ascending)
//   act_j  = bf16(silu(gate_j) * up_j * pool_weight[r]),  silu(g) = g / (1 + expf(-g))
//   out_c  = bf16(sum_j act_j * w2[e][c][j])                                       (fp32, j ascending)
//   dst[pool_dst_rank[r]] + combine_byte_offset(pool_dst_slot[r], h, c) <- out_c
// Padding rows (pool_arrival < 0) and rows outside the range are neither computed nor written, so a
// sampled run leaves every other destination slot as the caller left it (poisoned).
// precision kFp8 (the W8A8 contract of megamoe.hpp; h and I multiples of 128): arrival, w1, w2 hold e4m3
// codes with fp32 scales (arrival_scale per row per 128-K group, w1_scale / w2_scale per 128 x 128 block)
// and, in fp32 with deq(v) = e4m3 value x its scale:
//   gate_j, up_j = sum_k deq(x)[k] * deq(w1)[2j or 2j+1][k], summed per 128-k group (k ascending) and each
//                  group's sum of decoded codes times (row scale x block scale) added in group order
//   a_j    = silu(gate_j) * up_j * pool_weight[r]
//   act    = per row per 64 columns: s = amax / 448 (1 if amax = 0), code = cvt.rn.satfinite e4m3 (a_j / s)
//   out_c  = bf16(sum_j deq(act)[j] * deq(w2)[c][j]), summed per 64-j group as Linear-1
// which is the contract's semantics up to fp32 summation order.
struct MoeReferenceArgs {
  int hidden = 0;           // h, a multiple of 64
  int intermediate = 0;     // I, a multiple of 32
  int num_experts = 0;      // local experts (E / P)
  int top_k = 0;
  int tokens_per_rank = 0;  // T: each dst[rank] holds T * top_k slots of h bf16
  int num_ranks = 1;        // P
  int num_row_blocks = 0;   // pool rows / 128
  int num_arrivals = 0;     // rows of `arrival`
  const void* arrival = nullptr;  // [num_arrivals][h] bf16
  const void* w1 = nullptr;       // [E][2I][h] bf16, row 2j = gate_j, row 2j+1 = up_j
  const void* w2 = nullptr;       // [E][h][I] bf16
  Precision precision = Precision::kBf16;  // kFp8: arrival, w1, w2 are e4m3 (1 byte per element) with:
  const float* arrival_scale = nullptr;    // [num_arrivals][h/128]
  const float* w1_scale = nullptr;         // [E][2I/128][h/128]
  const float* w2_scale = nullptr;         // [E][h/128][I/128]
  RoutingTables routing;          // device arrays; expert_first_block is not read
  void* dst[kMaxRanks] = {};      // [T * top_k][h] bf16 per rank
  std::uint64_t dst_bytes[kMaxRanks] = {};
  // Intermediate, written and read by the reference: [row_end - row_begin][I] bf16, row i = pool row
  // row_begin + i (for the full range exactly the kernel's `act` layout; padding rows left untouched).
  // fp8: rows = row_end - row_begin; [rows][I] e4m3 codes at 0, [I/64][rows] fp32 scales at
  // act_scale_offset_bytes() (for the full range exactly the kernel's act / act_scale layouts), then the
  // unquantized fp32 a [rows][I] at act_fp32_offset_bytes(). Padding rows left untouched.
  void* act_scratch = nullptr;
  std::uint64_t act_scratch_bytes = 0;
  int row_begin = 0;  // pool rows [row_begin, row_end) are computed
  int row_end = -1;   // -1: all num_row_blocks * 128 rows

  XS_HD int num_pool_rows() const { return num_row_blocks * TileShape<128>::kBlockM; }
  XS_HD int row_end_resolved() const { return row_end < 0 ? num_pool_rows() : row_end; }
  XS_HD std::uint64_t num_scratch_rows() const {
    const int rows = row_end_resolved() - row_begin;
    return rows > 0 ? static_cast<std::uint64_t>(rows) : 0u;
  }
  // fp8 scratch sections (see act_scratch); I % 128 == 0 keeps each 4-byte aligned.
  XS_HD std::uint64_t act_scale_offset_bytes() const {
    return num_scratch_rows() * static_cast<std::uint64_t>(intermediate);
  }
  XS_HD std::uint64_t act_fp32_offset_bytes() const {
    return act_scale_offset_bytes() + num_scratch_rows() * static_cast<std::uint64_t>(intermediate / 64) * 4u;
  }
  // Bytes act_scratch must hold: bf16 (row_end - row_begin) * I * 2; fp8 (row_end - row_begin) * I * (1 + 4)
  // + (I / 64) * (row_end - row_begin) * 4.
  XS_HD std::uint64_t act_scratch_bytes_needed() const {
    if (precision == Precision::kFp8)
      return act_fp32_offset_bytes() + num_scratch_rows() * static_cast<std::uint64_t>(intermediate) * 4u;
    return num_scratch_rows() * static_cast<std::uint64_t>(intermediate) * 2u;
  }
};

// The reference's view of a kernel launch's inputs (shape, arrival, weights, routing); dst, act_scratch
// and the row range are left for the caller (the reference writes its own destinations). An fp8 launch's
// precision and input scales travel along: the reference computes the same W8A8 recipe.
inline MoeReferenceArgs reference_args_for(const MegaMoeArgs& k) {
  MoeReferenceArgs r;
  r.hidden = k.hidden;
  r.intermediate = k.intermediate;
  r.num_experts = k.num_experts;
  r.top_k = k.top_k;
  r.tokens_per_rank = k.tokens_per_rank;
  r.num_ranks = k.num_ranks;
  r.num_row_blocks = k.num_row_blocks;
  r.num_arrivals = k.num_arrivals;
  r.arrival = k.arrival;
  r.w1 = k.w1;
  r.w2 = k.w2;
  r.precision = k.precision;
  r.arrival_scale = k.arrival_scale;
  r.w1_scale = k.w1_scale;
  r.w2_scale = k.w2_scale;
  r.routing = k.routing;
  return r;
}

// Throws xs::input_error naming the field: shapes (h % 64, I % 32; fp8 h % 128, I % 128; counts out of
// range), an unknown precision, null or misaligned pointers (fp8: scales null or not 4-byte aligned),
// dst_bytes below combine_bytes_per_rank, act_scratch below act_scratch_bytes_needed, a row range outside
// [0, num_pool_rows]. Reads no device memory.
void validate_moe_reference(const MoeReferenceArgs& args);

// Validates, then enqueues Linear-1 and Linear-2 on `stream` (nothing for an empty row range). A routing
// table entry out of range (expert, arrival row, destination rank or slot) traps on the device with a
// printf naming the pool row. Throws xs::Error on a launch failure.
void launch_moe_reference(const MoeReferenceArgs& args, cudaStream_t stream);

}  // namespace xs::kernels::moe
