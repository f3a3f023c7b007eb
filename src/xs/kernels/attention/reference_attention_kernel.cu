// xstage kernels layer (attention): the simple GPU reference attention (see reference_attention.hpp).
// One warp per query row; lane i holds d/32 consecutive elements of q and o; per key a warp-wide dot
// product (shuffle reduction) and an online softmax in fp32 with exact expf. No shared memory, no
// tensor cores: slow and easy to trust.
#include <cmath>
#include <string>

#include <cuda_bf16.h>

#include "xs/kernels/attention/reference_attention.hpp"
#include "xs/common/error.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::kernels::attention {
namespace {

constexpr int kMaxPerLane = 8;  // head_dim <= 256

template <int kPerLane>
__global__ void reference_attention_kernel(ReferenceAttentionArgs a) {
  const int warps_per_block = blockDim.x / 32;
  const int lane = threadIdx.x % 32;
  const long long row_idx = static_cast<long long>(blockIdx.x) * warps_per_block + threadIdx.x / 32;
  const int rows_per_head = (a.seq_len + a.row_step - 1) / a.row_step;
  if (row_idx >= static_cast<long long>(rows_per_head) * a.num_heads) return;
  const int head = static_cast<int>(row_idx / rows_per_head);
  const int row = static_cast<int>(row_idx % rows_per_head) * a.row_step;
  const int d = a.head_dim;
  const auto* q = static_cast<const __nv_bfloat16*>(a.q) + (static_cast<long long>(head) * a.seq_len + row) * d;
  const auto* k = static_cast<const __nv_bfloat16*>(a.k) + static_cast<long long>(head) * a.seq_len * d;
  const auto* v = static_cast<const __nv_bfloat16*>(a.v) + static_cast<long long>(head) * a.seq_len * d;
  const float scale = a.softmax_scale > 0 ? a.softmax_scale : 1.0f / sqrtf(static_cast<float>(d));
  float qv[kPerLane], acc[kPerLane];
#pragma unroll
  for (int e = 0; e < kPerLane; ++e) {
    qv[e] = __bfloat162float(q[lane * kPerLane + e]);
    acc[e] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  for (int key = 0; key < a.seq_len; ++key) {
    const __nv_bfloat16* kr = k + static_cast<long long>(key) * d + lane * kPerLane;
    float dot = 0.0f;
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) dot = fmaf(qv[e], __bfloat162float(kr[e]), dot);
#pragma unroll
    for (int off = 16; off > 0; off /= 2) dot += __shfl_xor_sync(0xFFFFFFFFu, dot, off);
    const float x = dot * scale;
    const float m_new = fmaxf(m, x);
    const float corr = expf(m - m_new);
    const float pk = expf(x - m_new);
    l = l * corr + pk;
    const __nv_bfloat16* vr = v + static_cast<long long>(key) * d + lane * kPerLane;
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) acc[e] = acc[e] * corr + pk * __bfloat162float(vr[e]);
    m = m_new;
  }
  float* out = a.out + (static_cast<long long>(head) * rows_per_head + row / a.row_step) * d + lane * kPerLane;
#pragma unroll
  for (int e = 0; e < kPerLane; ++e) out[e] = acc[e] / l;
}

template <int kPerLane>
void launch_per_lane(const ReferenceAttentionArgs& a, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const long long rows = static_cast<long long>(a.num_rows_per_head()) * a.num_heads;
  const long long blocks = (rows + kThreads / 32 - 1) / (kThreads / 32);
  reference_attention_kernel<kPerLane><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
  XS_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_reference_attention(const ReferenceAttentionArgs& a, cudaStream_t stream) {
  if (a.head_dim <= 0 || a.head_dim % 32 != 0 || a.head_dim > 32 * kMaxPerLane)
    throw input_error("head_dim", "reference attention needs head_dim a multiple of 32, at most 256");
  if (a.seq_len <= 0 || a.num_heads <= 0 || a.row_step <= 0)
    throw input_error("seq_len", "reference attention needs seq_len, num_heads, row_step > 0");
  if (!a.q || !a.k || !a.v || !a.out) throw input_error("q/k/v/out", "reference attention needs all four pointers");
  switch (a.head_dim / 32) {
    case 1: return launch_per_lane<1>(a, stream);
    case 2: return launch_per_lane<2>(a, stream);
    case 4: return launch_per_lane<4>(a, stream);
    case 8: return launch_per_lane<8>(a, stream);
    default: throw input_error("head_dim", "reference attention is built for head_dim 32, 64, 128, 256");
  }
}

}  // namespace xs::kernels::attention
