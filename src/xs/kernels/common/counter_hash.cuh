// xstage kernels layer (common): the counter-based hash behind every seeded device fill. splitmix64 of
// (seed, element index) gives each element an independent 64-bit draw, so a fill is reproducible from its
// seed and needs no generator state (used by attention/random_fill and moe/random_fill).
#pragma once
#include <cstdint>

namespace xs::kernels {

__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The 64-bit draw of element `index` of the fill seeded with `seed`.
__device__ __forceinline__ std::uint64_t counter_hash(std::uint64_t seed, std::uint64_t index) {
  return splitmix64(seed ^ splitmix64(index));
}

}  // namespace xs::kernels
