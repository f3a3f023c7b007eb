// xstage kernels layer (moe): pieces shared by the bf16 and fp8 paths of the fp32 SIMT GPU reference
// (reference.hpp): the 64 x 64 x 16 tiling, row masking, the expert of a row tile, the arrival row of a
// pool row and the Combine store of a Linear-2 register block. Device code; included by .cu files only.
#pragma once
#include <cstdint>
#include <cstdio>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "xs/kernels/moe/reference.hpp"

namespace xs::kernels::moe::reference_detail {

constexpr int kTileM = 64;  // divides b_m = 128: a row tile never spans two row blocks (one expert)
constexpr int kTileN = 64;
constexpr int kTileK = 16;
constexpr int kMicro = 4;
constexpr int kThreads = (kTileM / kMicro) * (kTileN / kMicro);  // 256
constexpr int kPad = 4;  // keeps rows 16-byte aligned for float4 reads
static_assert(kThreads == kTileM * kTileK / 4 && kThreads == kTileN * kTileK / 4, "one 4-element k chunk per thread");
static_assert(TileShape<128>::kBlockM % kTileM == 0, "row tiles stay inside one row block");

__device__ __forceinline__ bool row_computed(const MoeReferenceArgs& a, int row_end, int r) {
  return r >= a.row_begin && r < row_end && a.routing.pool_arrival[r] >= 0;
}

__device__ __forceinline__ int expert_of_tile(const MoeReferenceArgs& a, int tile_row0) {
  const auto e = a.routing.row_block_expert[tile_row0 / TileShape<128>::kBlockM];
  if (e >= static_cast<std::uint32_t>(a.num_experts)) {
    if (threadIdx.x == 0)
      printf("moe reference: row_block_expert[%d] = %u, not below num_experts %d\n",
             tile_row0 / TileShape<128>::kBlockM, e, a.num_experts);
    __trap();
  }
  return static_cast<int>(e);
}

// Arrival row of a computed pool row r; traps on an out-of-range table entry.
__device__ __forceinline__ int checked_arrival_row(const MoeReferenceArgs& a, int r) {
  const int arrival_row = a.routing.pool_arrival[r];
  if (arrival_row >= a.num_arrivals) {
    printf("moe reference: pool_arrival[%d] = %d, not below num_arrivals %d\n", r, arrival_row, a.num_arrivals);
    __trap();
  }
  return arrival_row;
}

// Linear-2 epilogue: the register block (rows tile_row0 + ty*4 + i, columns n0 + tx*4 + j) rounded to bf16
// into each computed row's Combine slot; traps on a row routed outside the destinations.
__device__ __forceinline__ void store_combine_block(const MoeReferenceArgs& a, int row_end, int tile_row0, int n0,
                                                    int ty, int tx, const float (&acc)[kMicro][kMicro]) {
  const std::uint32_t num_slots = static_cast<std::uint32_t>(a.tokens_per_rank) * static_cast<std::uint32_t>(a.top_k);
#pragma unroll
  for (int i = 0; i < kMicro; ++i) {
    const int r = tile_row0 + ty * kMicro + i;
    if (!row_computed(a, row_end, r)) continue;
    const int rank = a.routing.pool_dst_rank[r];
    const int slot = a.routing.pool_dst_slot[r];
    if (rank < 0 || rank >= a.num_ranks || slot < 0 || static_cast<std::uint32_t>(slot) >= num_slots) {
      printf("moe reference: pool row %d routes to rank %d slot %d (ranks %d, slots per rank %u)\n", r, rank, slot,
             a.num_ranks, num_slots);
      __trap();
    }
    auto* base = static_cast<unsigned char*>(a.dst[rank]);
#pragma unroll
    for (int j = 0; j < kMicro; ++j) {
      const int c = n0 + tx * kMicro + j;
      const std::uint64_t offset = combine_byte_offset(static_cast<std::uint32_t>(slot),
                                                       static_cast<std::uint32_t>(a.hidden),
                                                       static_cast<std::uint32_t>(c));
      *reinterpret_cast<__nv_bfloat16*>(base + offset) = __float2bfloat16_rn(acc[i][j]);
    }
  }
}

// The fp8 path (reference_fp8_kernel.cu): Linear-1, activation quantization, Linear-2 for row tiles
// [first_tile, first_tile + num_row_tiles). Arguments already validated.
void launch_moe_reference_fp8(const MoeReferenceArgs& a, int first_tile, unsigned num_row_tiles, int row_end,
                              cudaStream_t stream);

}  // namespace xs::kernels::moe::reference_detail
