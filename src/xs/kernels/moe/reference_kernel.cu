// xstage kernels layer (moe): the fp32 SIMT reference of the MegaMoE data path (see reference.hpp): the
// bf16 path, the argument checks and the launcher (the fp8 path: reference_fp8_kernel.cu). bf16: two
// launches, each a plain shared-memory tiled GEMM C = A * B^T with B = [N][K] row-major weights:
//   Linear-1: A = gathered arrival rows [.., h], B = w1[e] [2I][h]; epilogue SwiGLU x weight -> act_scratch
//   Linear-2: A = act_scratch rows [.., I],     B = w2[e] [h][I];  epilogue bf16 -> Combine slot
// Tile 64 x 64 x 16, 256 threads, each thread a 4 x 4 register block of consecutive rows and columns
// (so one thread holds the (gate_j, up_j) pair of columns 2j, 2j + 1). Each output is one thread's
// fmaf chain over k in ascending order. Shared memory 2 * 16 * 68 * 4 B = 8.5 KiB per block.
// Cost at h 7168, I 3072 and 50K pool rows: 2 * 50K * 7168 * (6144 + 3072) FLOP = 6.6 TFLOP; at the
// 10-20 TFLOPS such a SIMT GEMM reaches on an H200 (about a quarter of its fp32 peak) 0.3-0.7 s.
#include <cstdio>
#include <string>

#include <cuda_bf16.h>

#include "xs/common/error.hpp"
#include "xs/kernels/moe/reference.hpp"
#include "xs/kernels/moe/reference_tile.cuh"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::kernels::moe {
namespace {

using namespace reference_detail;

// acc[i][j] += sum_k A[row i][k] * B[col j][k] over k in [0, k_total), ascending. Thread `tid` loads
// k-chunk (tid % 4) * 4 of A row tid / 4 (a_row; nullptr = a masked row, loaded as zeros) and of B row
// tid / 4 (b_row). ty, tx select the register block (rows ty*4.., columns tx*4..).
__device__ void accumulate_tile(const __nv_bfloat16* a_row, const __nv_bfloat16* b_row, int k_total, int tid, int ty,
                                int tx, float (&acc)[kMicro][kMicro]) {
  __shared__ __align__(16) float a_s[kTileK][kTileM + kPad];  // [k][m]
  __shared__ __align__(16) float b_s[kTileK][kTileN + kPad];  // [k][n]
  const int load_row = tid / 4;
  const int load_k = (tid % 4) * 4;
  for (int k0 = 0; k0 < k_total; k0 += kTileK) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      a_s[load_k + e][load_row] = a_row != nullptr ? __bfloat162float(a_row[k0 + load_k + e]) : 0.0f;
      b_s[load_k + e][load_row] = __bfloat162float(b_row[k0 + load_k + e]);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      const float4 av = *reinterpret_cast<const float4*>(&a_s[kk][ty * kMicro]);
      const float4 bv = *reinterpret_cast<const float4*>(&b_s[kk][tx * kMicro]);
      const float am[kMicro] = {av.x, av.y, av.z, av.w};
      const float bn[kMicro] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
      for (int i = 0; i < kMicro; ++i)
#pragma unroll
        for (int j = 0; j < kMicro; ++j) acc[i][j] = fmaf(am[i], bn[j], acc[i][j]);
    }
    __syncthreads();
  }
}

// Grid (2I / 64, row tiles); blockIdx.y + first_tile is the 64-row tile of the pool.
__global__ void __launch_bounds__(kThreads) reference_linear1_kernel(MoeReferenceArgs a, int first_tile, int row_end) {
  const int tid = threadIdx.x, ty = tid / (kTileN / kMicro), tx = tid % (kTileN / kMicro);
  const int tile_row0 = (first_tile + static_cast<int>(blockIdx.y)) * kTileM;
  const int n0 = static_cast<int>(blockIdx.x) * kTileN;  // w1 row (gate/up interleaved)
  const int h = a.hidden, inter = a.intermediate;
  const int load_r = tile_row0 + tid / 4;  // threads 4i..4i+3 load row i: the 64 loaders cover the tile
  const __nv_bfloat16* a_row = nullptr;
  if (row_computed(a, row_end, load_r))
    a_row = static_cast<const __nv_bfloat16*>(a.arrival) + static_cast<long long>(checked_arrival_row(a, load_r)) * h;
  if (!__syncthreads_or(a_row != nullptr)) return;  // all padding or outside the range: nothing to write
  const int expert = expert_of_tile(a, tile_row0);
  const __nv_bfloat16* b_row =
      static_cast<const __nv_bfloat16*>(a.w1) + (static_cast<long long>(expert) * 2 * inter + n0 + tid / 4) * h;
  float acc[kMicro][kMicro] = {};
  accumulate_tile(a_row, b_row, h, tid, ty, tx, acc);

  auto* act = static_cast<__nv_bfloat16*>(a.act_scratch);
#pragma unroll
  for (int i = 0; i < kMicro; ++i) {
    const int r = tile_row0 + ty * kMicro + i;
    if (!row_computed(a, row_end, r)) continue;
    const float weight = a.routing.pool_weight[r];
#pragma unroll
    for (int q = 0; q < kMicro / 2; ++q) {
      const float gate = acc[i][2 * q], up = acc[i][2 * q + 1];
      const float silu = gate / (1.0f + expf(-gate));
      const int j = (n0 + tx * kMicro) / 2 + q;
      act[static_cast<long long>(r - a.row_begin) * inter + j] = __float2bfloat16_rn(silu * up * weight);
    }
  }
}

// Grid (h / 64, row tiles).
__global__ void __launch_bounds__(kThreads) reference_linear2_kernel(MoeReferenceArgs a, int first_tile, int row_end) {
  const int tid = threadIdx.x, ty = tid / (kTileN / kMicro), tx = tid % (kTileN / kMicro);
  const int tile_row0 = (first_tile + static_cast<int>(blockIdx.y)) * kTileM;
  const int n0 = static_cast<int>(blockIdx.x) * kTileN;  // output column
  const int h = a.hidden, inter = a.intermediate;
  const auto* act = static_cast<const __nv_bfloat16*>(a.act_scratch);
  const int load_r = tile_row0 + tid / 4;
  const __nv_bfloat16* a_row =
      row_computed(a, row_end, load_r) ? act + static_cast<long long>(load_r - a.row_begin) * inter : nullptr;
  if (!__syncthreads_or(a_row != nullptr)) return;
  const int expert = expert_of_tile(a, tile_row0);
  const __nv_bfloat16* b_row =
      static_cast<const __nv_bfloat16*>(a.w2) + (static_cast<long long>(expert) * h + n0 + tid / 4) * inter;
  float acc[kMicro][kMicro] = {};
  accumulate_tile(a_row, b_row, inter, tid, ty, tx, acc);

  store_combine_block(a, row_end, tile_row0, n0, ty, tx, acc);
}

bool misaligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 2 != 0; }

}  // namespace

void validate_moe_reference(const MoeReferenceArgs& a) {
  if (a.hidden <= 0 || a.hidden % kTileN != 0)
    throw input_error("hidden", "the moe reference needs h > 0 and a multiple of 64, got " + std::to_string(a.hidden));
  if (a.intermediate <= 0 || a.intermediate % (kTileN / 2) != 0)
    throw input_error("intermediate",
                      "the moe reference needs I > 0 and a multiple of 32, got " + std::to_string(a.intermediate));
  if (a.precision != Precision::kBf16 && a.precision != Precision::kFp8)
    throw input_error("precision", "the moe reference runs bf16 or fp8, got precision " +
                                       std::to_string(static_cast<int>(a.precision)));
  const bool fp8 = a.precision == Precision::kFp8;
  if (fp8 && (a.hidden % 128 != 0 || a.intermediate % 128 != 0))
    throw input_error("hidden", "the fp8 moe reference needs h and I multiples of 128 (128 x 128 weight blocks), "
                                "got h " + std::to_string(a.hidden) + ", I " + std::to_string(a.intermediate));
  if (a.num_experts < 1 || a.num_experts > kMaxLocalExperts)
    throw input_error("num_experts", "needs 1.." + std::to_string(kMaxLocalExperts) + " local experts, got " +
                                         std::to_string(a.num_experts));
  if (a.top_k < 1) throw input_error("top_k", "needs top_k >= 1, got " + std::to_string(a.top_k));
  if (a.tokens_per_rank < 1)
    throw input_error("tokens_per_rank", "needs T >= 1, got " + std::to_string(a.tokens_per_rank));
  if (a.num_ranks < 1 || a.num_ranks > kMaxRanks)
    throw input_error("num_ranks",
                      "needs 1.." + std::to_string(kMaxRanks) + " ranks, got " + std::to_string(a.num_ranks));
  if (a.num_row_blocks < 0 || a.num_arrivals < 0)
    throw input_error("num_row_blocks", "needs num_row_blocks >= 0 and num_arrivals >= 0");
  const int row_end = a.row_end_resolved();
  if (a.row_begin < 0 || row_end < a.row_begin || row_end > a.num_pool_rows())
    throw input_error("row_begin", "needs 0 <= row_begin <= row_end <= num_row_blocks * 128 = " +
                                       std::to_string(a.num_pool_rows()) + ", got [" + std::to_string(a.row_begin) +
                                       ", " + std::to_string(row_end) + ")");
  if (row_end == a.row_begin) return;  // nothing is read or written
  if ((row_end + kTileM - 1) / kTileM - a.row_begin / kTileM > 65535)
    throw input_error("row_end", "the moe reference runs at most 65535 * 64 pool rows per launch");
  if (a.arrival == nullptr || a.w1 == nullptr || a.w2 == nullptr ||
      (!fp8 && (misaligned(a.arrival) || misaligned(a.w1) || misaligned(a.w2))))
    throw input_error("arrival/w1/w2", "the moe reference needs device pointers (bf16: 2-byte aligned)");
  const auto bad_scale = [](const float* p) { return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 4 != 0; };
  if (fp8 && (bad_scale(a.arrival_scale) || bad_scale(a.w1_scale) || bad_scale(a.w2_scale)))
    throw input_error("arrival_scale/w1_scale/w2_scale", "the fp8 moe reference needs 4-byte aligned device scales");
  const RoutingTables& t = a.routing;
  if (!t.pool_arrival || !t.pool_dst_rank || !t.pool_dst_slot || !t.pool_weight || !t.row_block_expert)
    throw input_error("routing", "the moe reference needs pool_arrival, pool_dst_rank, pool_dst_slot, pool_weight "
                                 "and row_block_expert");
  const std::uint64_t per_rank = combine_bytes_per_rank(static_cast<std::uint32_t>(a.tokens_per_rank),
                                                        static_cast<std::uint32_t>(a.top_k),
                                                        static_cast<std::uint32_t>(a.hidden));
  for (int r = 0; r < a.num_ranks; ++r)
    if (a.dst[r] == nullptr || misaligned(a.dst[r]) || a.dst_bytes[r] < per_rank)
      throw input_error("dst[" + std::to_string(r) + "]", "needs a 2-byte aligned buffer of at least " +
                                                              std::to_string(per_rank) + " bytes (T * top_k * h * 2)");
  if (a.act_scratch == nullptr || misaligned(a.act_scratch) || a.act_scratch_bytes < a.act_scratch_bytes_needed() ||
      (fp8 && reinterpret_cast<std::uintptr_t>(a.act_scratch) % 4 != 0))
    throw input_error("act_scratch", std::string("needs a ") + (fp8 ? "4" : "2") + "-byte aligned buffer of at least " +
                                         std::to_string(a.act_scratch_bytes_needed()) +
                                         (fp8 ? " bytes ((row_end - row_begin) * (5 I + I / 16))"
                                              : " bytes ((row_end - row_begin) * I * 2)"));
}

void launch_moe_reference(const MoeReferenceArgs& a, cudaStream_t stream) {
  validate_moe_reference(a);
  const int row_end = a.row_end_resolved();
  if (row_end == a.row_begin) return;
  const int first_tile = a.row_begin / kTileM;
  const unsigned num_row_tiles = static_cast<unsigned>((row_end + kTileM - 1) / kTileM - first_tile);
  if (a.precision == Precision::kFp8) {
    launch_moe_reference_fp8(a, first_tile, num_row_tiles, row_end, stream);
    return;
  }
  const dim3 l1_grid(static_cast<unsigned>(2 * a.intermediate / kTileN), num_row_tiles);
  reference_linear1_kernel<<<l1_grid, kThreads, 0, stream>>>(a, first_tile, row_end);
  XS_CUDA_CHECK_LAUNCH();
  const dim3 l2_grid(static_cast<unsigned>(a.hidden / kTileN), num_row_tiles);
  reference_linear2_kernel<<<l2_grid, kThreads, 0, stream>>>(a, first_tile, row_end);
  XS_CUDA_CHECK_LAUNCH();
}

}  // namespace xs::kernels::moe
