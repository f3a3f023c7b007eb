// xstage kernels layer: ncclGetLsaPointer read on the device (NCCL 2.28 lacks a host-side LSA pointer call) and
// a grid-stride word store for the window tests. See nccl_lsa_pointers.hpp and docs/nccl-window.md.
#include "xs/kernels/common/nccl_lsa_pointers.hpp"

#if __has_include(<nccl.h>)
#include <nccl.h>
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0) && __has_include(<nccl_device.h>)
#include <nccl_device.h>
#define XS_NCCL_DEVICE_API 1
#endif
#endif

namespace xs::kernels {
namespace {

#if defined(XS_NCCL_DEVICE_API)
// ncclWindow_t is a pointer to NCCL's ncclWindow_vidmem, which a symmetric registration places in device memory;
// ncclGetLsaPointer loads lsaFlatBase and stride4G from it (nccl_device/impl/core__funcs.h), so the handle is
// passed by value but must point to device memory (a non-symmetric registration returns a host pointer).
__global__ void read_lsa_pointers_kernel(ncclWindow_t window, int num_lsa_ranks, void** out_ptrs) {
  for (int i = 0; i < num_lsa_ranks; ++i) out_ptrs[i] = ncclGetLsaPointer(window, 0, i);
}
#endif

__global__ void store_words_kernel(std::uint32_t* dst, std::uint64_t num_words, std::uint32_t seed) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < num_words; i += stride)
    dst[i] = seed ^ static_cast<std::uint32_t>(i * 0x9E3779B9ull);
}

}  // namespace

bool nccl_device_api_compiled() {
#if defined(XS_NCCL_DEVICE_API)
  return true;
#else
  return false;
#endif
}

cudaError_t launch_read_lsa_pointers(const LsaPointerArgs& args, cudaStream_t stream) {
#if defined(XS_NCCL_DEVICE_API)
  if (args.window == nullptr || args.out_ptrs == nullptr || args.num_lsa_ranks < 1) return cudaErrorInvalidValue;
  read_lsa_pointers_kernel<<<1, 1, 0, stream>>>(static_cast<ncclWindow_t>(const_cast<void*>(args.window)),
                                                args.num_lsa_ranks, args.out_ptrs);
  return cudaGetLastError();
#else
  (void)args;
  (void)stream;
  return cudaErrorNotSupported;
#endif
}

cudaError_t launch_store_words(const StoreWordsArgs& args, cudaStream_t stream) {
  if (args.dst == nullptr || args.num_words == 0) return cudaErrorInvalidValue;
  constexpr int kThreads = 256;
  const std::uint64_t blocks = (args.num_words + kThreads - 1) / kThreads;
  store_words_kernel<<<static_cast<unsigned>(blocks < 1024 ? blocks : 1024), kThreads, 0, stream>>>(
      args.dst, args.num_words, args.seed);
  return cudaGetLastError();
}

}  // namespace xs::kernels
