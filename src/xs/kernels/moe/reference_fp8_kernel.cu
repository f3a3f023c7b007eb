// xstage kernels layer (moe): the fp8 W8A8 path of the fp32 SIMT reference (reference.hpp). Three launches:
//   Linear-1: gathered e4m3 arrival rows x w1[e] e4m3, per 128-k group; epilogue SwiGLU x weight -> fp32 a
//   act quantization: one warp per (row, 64 columns): s = amax / 448, code = cvt.rn.satfinite(a / s)
//   Linear-2: e4m3 act x w2[e] e4m3, per 64-k group (one act scale, one w2 block scale); bf16 -> Combine
// Same 64 x 64 x 16 tiling as the bf16 path (reference_tile.cuh). Within a k group the decoded codes are
// multiplied and summed (fmaf chain, k ascending); the group's sum is then scaled by row scale x block
// scale and added to the accumulator: the promotion a block-scaled tensor-core GEMM does, and exact
// products of 4-bit significands inside a group.
#include <cstdint>

#include "xs/kernels/moe/fp8.hpp"
#include "xs/kernels/moe/quantize.cuh"
#include "xs/kernels/moe/reference_tile.cuh"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::kernels::moe::reference_detail {
namespace {

constexpr int kActGroup = 64;    // act scale granularity (megamoe.hpp act_scale)
constexpr int kBlockScale = 128;  // weight and arrival scale granularity

// acc[i][j] += sum over k groups g of (sum_{k in g} code_a[i][k] * code_b[j][k]) * a_scale(g) * b_scale(g),
// with the decoded codes (without scales) in the inner sum. a_row nullptr: a masked row (zeros).
// a_scale(g): the scale of the loading thread's A row (tid / 4) for group g; b_scale(g): the tile's
// B block scale (one per tile: 64 output columns lie in one 128-row weight block).
template <int kGroupK, class AScale, class BScale>
__device__ void accumulate_tile_fp8(const std::uint8_t* a_row, const std::uint8_t* b_row, int k_total, int tid,
                                    int ty, int tx, AScale a_scale, BScale b_scale, float (&acc)[kMicro][kMicro]) {
  static_assert(kGroupK % kTileK == 0, "groups are whole k tiles");
  __shared__ __align__(16) float a_s[kTileK][kTileM + kPad];  // [k][m]
  __shared__ __align__(16) float b_s[kTileK][kTileN + kPad];  // [k][n]
  __shared__ float row_scale_s[kTileM];
  const int load_row = tid / 4;
  const int load_k = (tid % 4) * 4;
  for (int g0 = 0; g0 < k_total; g0 += kGroupK) {
    const int group = g0 / kGroupK;
    if (tid % 4 == 0) row_scale_s[load_row] = a_row != nullptr ? a_scale(group) : 0.0f;
    const float col_scale = b_scale(group);
    float part[kMicro][kMicro] = {};
    for (int k0 = g0; k0 < g0 + kGroupK; k0 += kTileK) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        a_s[load_k + e][load_row] = a_row != nullptr ? e4m3_to_float(a_row[k0 + load_k + e]) : 0.0f;
        b_s[load_k + e][load_row] = e4m3_to_float(b_row[k0 + load_k + e]);
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
          for (int j = 0; j < kMicro; ++j) part[i][j] = fmaf(am[i], bn[j], part[i][j]);
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < kMicro; ++i) {
      const float scale = row_scale_s[ty * kMicro + i] * col_scale;
#pragma unroll
      for (int j = 0; j < kMicro; ++j) acc[i][j] = fmaf(part[i][j], scale, acc[i][j]);
    }
    __syncthreads();  // row_scale_s is rewritten by the next group
  }
}

__device__ __forceinline__ std::uint8_t* act_codes(const MoeReferenceArgs& a) {
  return static_cast<std::uint8_t*>(a.act_scratch);
}
__device__ __forceinline__ float* act_scales(const MoeReferenceArgs& a) {
  return reinterpret_cast<float*>(static_cast<unsigned char*>(a.act_scratch) + a.act_scale_offset_bytes());
}
__device__ __forceinline__ float* act_fp32(const MoeReferenceArgs& a) {
  return reinterpret_cast<float*>(static_cast<unsigned char*>(a.act_scratch) + a.act_fp32_offset_bytes());
}

// Grid (2I / 64, row tiles).
__global__ void __launch_bounds__(kThreads) reference_linear1_fp8_kernel(MoeReferenceArgs a, int first_tile,
                                                                          int row_end) {
  const int tid = threadIdx.x, ty = tid / (kTileN / kMicro), tx = tid % (kTileN / kMicro);
  const int tile_row0 = (first_tile + static_cast<int>(blockIdx.y)) * kTileM;
  const int n0 = static_cast<int>(blockIdx.x) * kTileN;  // w1 row (gate/up interleaved)
  const int h = a.hidden, inter = a.intermediate;
  const int load_r = tile_row0 + tid / 4;
  const std::uint8_t* a_row = nullptr;
  int arrival_row = 0;
  if (row_computed(a, row_end, load_r)) {
    arrival_row = checked_arrival_row(a, load_r);
    a_row = static_cast<const std::uint8_t*>(a.arrival) + static_cast<long long>(arrival_row) * h;
  }
  if (!__syncthreads_or(a_row != nullptr)) return;
  const int expert = expert_of_tile(a, tile_row0);
  const std::uint8_t* b_row =
      static_cast<const std::uint8_t*>(a.w1) + (static_cast<long long>(expert) * 2 * inter + n0 + tid / 4) * h;
  const int k_groups = h / kBlockScale;
  const float* a_scale_row = a.arrival_scale + static_cast<long long>(arrival_row) * k_groups;
  const float* b_scale_row =
      a.w1_scale + (static_cast<long long>(expert) * (2 * inter / kBlockScale) + n0 / kBlockScale) * k_groups;
  float acc[kMicro][kMicro] = {};
  accumulate_tile_fp8<kBlockScale>(
      a_row, b_row, h, tid, ty, tx, [&](int g) { return a_scale_row[g]; }, [&](int g) { return b_scale_row[g]; },
      acc);

  float* out = act_fp32(a);
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
      out[static_cast<long long>(r - a.row_begin) * inter + j] = silu * up * weight;
    }
  }
}

// One warp per (scratch row, 64-column group), grid-stride; rows not computed are skipped.
__global__ void __launch_bounds__(kThreads) reference_act_quantize_kernel(MoeReferenceArgs a, int row_end) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int groups = a.intermediate / kActGroup;
  const long long rows = static_cast<long long>(a.num_scratch_rows());
  const float* in = act_fp32(a);
  std::uint8_t* codes = act_codes(a);
  float* scales = act_scales(a);
  for (long long item = static_cast<long long>(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;
       item < rows * groups; item += static_cast<long long>(gridDim.x) * (kThreads / 32)) {
    const long long i = item / groups;
    const int g = static_cast<int>(item % groups);
    if (!row_computed(a, row_end, a.row_begin + static_cast<int>(i))) continue;  // uniform per warp
    const long long base = i * a.intermediate + static_cast<long long>(g) * kActGroup;
    const float scale = warp_quantize_group(
        kActGroup, lane, [&](int k) { return in[base + k]; },
        [&](int k, std::uint8_t code) { codes[base + k] = code; });
    if (lane == 0) scales[static_cast<long long>(g) * rows + i] = scale;
  }
}

// Grid (h / 64, row tiles).
__global__ void __launch_bounds__(kThreads) reference_linear2_fp8_kernel(MoeReferenceArgs a, int first_tile,
                                                                          int row_end) {
  const int tid = threadIdx.x, ty = tid / (kTileN / kMicro), tx = tid % (kTileN / kMicro);
  const int tile_row0 = (first_tile + static_cast<int>(blockIdx.y)) * kTileM;
  const int n0 = static_cast<int>(blockIdx.x) * kTileN;  // output column
  const int h = a.hidden, inter = a.intermediate;
  const long long rows = static_cast<long long>(a.num_scratch_rows());
  const int load_r = tile_row0 + tid / 4;
  const bool computed = row_computed(a, row_end, load_r);
  const std::uint8_t* a_row = computed ? act_codes(a) + static_cast<long long>(load_r - a.row_begin) * inter : nullptr;
  if (!__syncthreads_or(a_row != nullptr)) return;
  const int expert = expert_of_tile(a, tile_row0);
  const std::uint8_t* b_row =
      static_cast<const std::uint8_t*>(a.w2) + (static_cast<long long>(expert) * h + n0 + tid / 4) * inter;
  const float* scales = act_scales(a) + (computed ? load_r - a.row_begin : 0);
  const float* b_scale_row =
      a.w2_scale + (static_cast<long long>(expert) * (h / kBlockScale) + n0 / kBlockScale) * (inter / kBlockScale);
  float acc[kMicro][kMicro] = {};
  accumulate_tile_fp8<kActGroup>(
      a_row, b_row, inter, tid, ty, tx, [&](int g) { return scales[static_cast<long long>(g) * rows]; },
      [&](int g) { return b_scale_row[g * kActGroup / kBlockScale]; }, acc);
  store_combine_block(a, row_end, tile_row0, n0, ty, tx, acc);
}

}  // namespace

void launch_moe_reference_fp8(const MoeReferenceArgs& a, int first_tile, unsigned num_row_tiles, int row_end,
                              cudaStream_t stream) {
  const dim3 l1_grid(static_cast<unsigned>(2 * a.intermediate / kTileN), num_row_tiles);
  reference_linear1_fp8_kernel<<<l1_grid, kThreads, 0, stream>>>(a, first_tile, row_end);
  XS_CUDA_CHECK_LAUNCH();
  const unsigned long long items = a.num_scratch_rows() * static_cast<unsigned long long>(a.intermediate / kActGroup);
  const unsigned long long blocks = (items + kThreads / 32 - 1) / (kThreads / 32);
  reference_act_quantize_kernel<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), kThreads, 0, stream>>>(
      a, row_end);
  XS_CUDA_CHECK_LAUNCH();
  const dim3 l2_grid(static_cast<unsigned>(a.hidden / kTileN), num_row_tiles);
  reference_linear2_fp8_kernel<<<l2_grid, kThreads, 0, stream>>>(a, first_tile, row_end);
  XS_CUDA_CHECK_LAUNCH();
}

}  // namespace xs::kernels::moe::reference_detail
