// xstage kernels layer (attention): counter-based random bf16 fill (see random_fill.hpp).
#include <cuda_bf16.h>

#include "xs/kernels/attention/random_fill.hpp"
#include "xs/kernels/common/counter_hash.cuh"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::kernels::attention {
namespace {

__global__ void fill_random_bf16_kernel(__nv_bfloat16* dst, std::size_t count, std::uint64_t seed, float stddev) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::uint64_t h = counter_hash(seed, i);
    // Two 24-bit uniforms in (0, 1], Box-Muller.
    const float u1 = (static_cast<float>(h & 0xFFFFFF) + 1.0f) * (1.0f / 16777216.0f);
    const float u2 = static_cast<float>((h >> 24) & 0xFFFFFF) * (1.0f / 16777216.0f);
    const float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    dst[i] = __float2bfloat16_rn(z * stddev);
  }
}

}  // namespace

void launch_fill_random_bf16(void* dst, std::size_t count, std::uint64_t seed, float stddev, cudaStream_t stream) {
  if (count == 0) return;
  const std::size_t blocks = (count + 255) / 256;
  fill_random_bf16_kernel<<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(
      static_cast<__nv_bfloat16*>(dst), count, seed, stddev);
  XS_CUDA_CHECK_LAUNCH();
}

}  // namespace xs::kernels::attention
