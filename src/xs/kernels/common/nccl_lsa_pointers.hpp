// xstage kernels layer: host launch API of two small NCCL device-API helpers. NCCL 2.28 has no host call that
// returns a peer's address in a symmetric window, so a one-thread kernel reads them with ncclGetLsaPointer.
// Also a word-store kernel: the GPU tests write through a resolved pointer with it.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace xs::kernels {

// True when this library was compiled with NCCL's device API (nccl_device.h, NCCL >= 2.28).
bool nccl_device_api_compiled();

struct LsaPointerArgs {
  const void* window = nullptr;  // ncclWindow_t of a NCCL_WIN_COLL_SYMMETRIC registration: DEVICE memory
  int num_lsa_ranks = 0;         // ncclTeamLsa(comm).nRanks
  void** out_ptrs = nullptr;     // device memory, num_lsa_ranks entries: ncclGetLsaPointer(window, 0, i)
};

// cudaErrorNotSupported where the device API was not compiled in; cudaErrorInvalidValue for bad arguments.
cudaError_t launch_read_lsa_pointers(const LsaPointerArgs& args, cudaStream_t stream);

struct StoreWordsArgs {
  std::uint32_t* dst = nullptr;  // any address the launching GPU can store to (an LSA pointer included)
  std::uint64_t num_words = 0;
  std::uint32_t seed = 0;        // word i = seed ^ (i * 0x9E3779B9)
};

cudaError_t launch_store_words(const StoreWordsArgs& args, cudaStream_t stream);

// The word launch_store_words writes at index i (host side, for checks).
inline std::uint32_t store_words_value(std::uint32_t seed, std::uint64_t i) {
  return seed ^ static_cast<std::uint32_t>(i * 0x9E3779B9ull);
}

}  // namespace xs::kernels
