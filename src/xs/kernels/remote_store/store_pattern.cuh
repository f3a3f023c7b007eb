// xstage kernels layer: the remote-store instructions and their patterns (layout.cuh), shared by the burst
// kernel and the loaded-mainloop kernel so both issue the same STG sequence. Device code only.
#pragma once
#include <cstddef>
#include <cstdint>

#include "xs/kernels/common/ptx.cuh"
#include "xs/kernels/remote_store/layout.cuh"

namespace xs::kernels::remote_store {

// One W-byte store of words w0, w0^1, ... (the pattern of layout.cuh).
template <int kWidth>
__device__ __forceinline__ void store_words(std::uint8_t* ptr, std::uint32_t w0) {
  if constexpr (kWidth == 16) {
    ptx::st_global_v4_b32(ptr, w0, w0 ^ 1u, w0 ^ 2u, w0 ^ 3u);
  } else if constexpr (kWidth == 8) {
    ptx::st_global_v2_b32(ptr, w0, w0 ^ 1u);
  } else {
    ptx::st_global_b32(ptr, w0);
  }
}

// Coalesced: thread t stores elements t, t + T, ... of the producer's slice. Pattern: see layout.cuh.
template <int kWidth>
__device__ __forceinline__ void store_slice(std::uint8_t* slice, std::uint32_t seed, std::uint32_t thread_idx,
                                            std::uint32_t num_threads, std::uint32_t num_elems) {
  constexpr std::uint32_t kWordsPerStore = kWidth / 4;
  std::uint8_t* ptr = slice + static_cast<std::size_t>(thread_idx) * kWidth;
  const std::size_t stride_bytes = static_cast<std::size_t>(num_threads) * kWidth;
#pragma unroll 4
  for (std::uint32_t e = thread_idx; e < num_elems; e += num_threads, ptr += stride_bytes)
    store_words<kWidth>(ptr, seed ^ (e * kWordsPerStore));
}

// Scattered rows: the same elements and words as store_slice, but each 256-B row of the slice goes to its
// permuted row slot of the ring (layout.cuh). 256/W consecutive threads fill one row, so a row is still one
// coalesced 256-B access; only the row-to-row placement changes. The slot is computed per store (~12
// integer operations, inside the issue window, like a scatter epilogue computing its destination).
template <int kWidth>
__device__ __forceinline__ void store_rows(std::uint8_t* ring, const RowPermutation& perm, std::uint32_t first_row,
                                           std::uint32_t seed, std::uint32_t thread_idx, std::uint32_t num_threads,
                                           std::uint32_t num_elems) {
  constexpr std::uint32_t kWordsPerStore = kWidth / 4;
#pragma unroll 4
  for (std::uint32_t e = thread_idx; e < num_elems; e += num_threads)
    store_words<kWidth>(ring + scattered_store_offset(perm, first_row, e, kWidth), seed ^ (e * kWordsPerStore));
}

}  // namespace xs::kernels::remote_store
