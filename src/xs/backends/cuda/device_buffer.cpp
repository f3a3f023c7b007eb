// xstage backends/cuda layer (CUDA): owned device memory and whole-buffer copies (device_buffer.hpp).
#include "xs/backends/cuda/device_buffer.hpp"

#include <random>
#include <string>

#include <cuda_runtime.h>

#include "xs/common/error.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::runtime {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  if (const cudaError_t err = cudaMalloc(&ptr_, bytes); err != cudaSuccess) {
    (void)cudaGetLastError();
    ptr_ = nullptr;
    throw Error(ExitCode::kDeviceFailure, "cuda", "cudaMalloc",
                "cudaMalloc of " + std::to_string(bytes) + " bytes failed: " + cudaGetErrorString(err));
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) (void)cudaFree(ptr_);
}

void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes != 0) XS_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}

void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes != 0) XS_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

std::uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace xs::runtime
