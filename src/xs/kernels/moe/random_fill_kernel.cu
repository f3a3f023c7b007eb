// xstage kernels layer (moe): uniform bf16 and 16-bit pattern fills (see random_fill.hpp).
#include <cmath>

#include <cuda_bf16.h>

#include "xs/kernels/common/counter_hash.cuh"
#include "xs/common/error.hpp"
#include "xs/kernels/moe/random_fill.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::kernels::moe {
namespace {

constexpr unsigned kThreads = 256;
constexpr std::size_t kMaxBlocks = 4096;  // grid-stride beyond this: enough to fill an H200

unsigned grid_for(std::size_t count) {
  const std::size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

__global__ void fill_uniform_bf16_kernel(__nv_bfloat16* dst, std::size_t count, std::uint64_t seed, float scale) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    // Top 24 bits -> integer in [0, 2^24) -> [-1, 1) exactly representable in fp32.
    const auto bits24 = static_cast<std::uint32_t>(counter_hash(seed, i) >> 40);
    const float u = static_cast<float>(bits24) * (2.0f / 16777216.0f) - 1.0f;
    dst[i] = __float2bfloat16_rn(u * scale);
  }
}

__global__ void fill_bits16_kernel(std::uint16_t* dst, std::size_t count, std::uint16_t bits) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    dst[i] = bits;
}

}  // namespace

void launch_fill_uniform_bf16(void* dst, std::size_t count, std::uint64_t seed, float scale, cudaStream_t stream) {
  if (count == 0) return;
  if (dst == nullptr) throw input_error("dst", "uniform bf16 fill needs a device pointer");
  if (!std::isfinite(scale) || scale <= 0.0f)
    throw input_error("scale", "uniform bf16 fill needs a finite scale > 0, got " + std::to_string(scale));
  fill_uniform_bf16_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(dst), count, seed,
                                                                       scale);
  XS_CUDA_CHECK_LAUNCH();
}

void launch_fill_bits16(void* dst, std::size_t count, std::uint16_t bits, cudaStream_t stream) {
  if (count == 0) return;
  if (dst == nullptr || reinterpret_cast<std::uintptr_t>(dst) % 2 != 0)
    throw input_error("dst", "16-bit pattern fill needs a 2-byte aligned device pointer");
  fill_bits16_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<std::uint16_t*>(dst), count, bits);
  XS_CUDA_CHECK_LAUNCH();
}

}  // namespace xs::kernels::moe
