// xstage kernels layer (moe): seeded device fills for the MegaMoE tests and runner. Uniform bf16 in
// [-scale, scale] from a counter-based hash of (seed, index) (any seed reproduces a multi-GB input in
// milliseconds; never all zeros), and a 16-bit pattern fill that poisons Combine destinations.
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace xs::kernels::moe {

// bf16 0xFFFF is a NaN no bf16 arithmetic produces (NaNs from arithmetic are 0x7FC0-like), so an element
// still equal to it after a launch was never written.
inline constexpr std::uint16_t kPoisonBits = 0xFFFF;

// dst[i] = bf16_rn(u_i * scale), u_i uniform in [-1, 1) from splitmix64(seed, i). Throws xs::input_error
// on a null dst with count > 0 or a scale that is not finite and > 0, xs::Error on a launch failure.
void launch_fill_uniform_bf16(void* dst, std::size_t count, std::uint64_t seed, float scale, cudaStream_t stream);

// dst[i] = bits for `count` 16-bit elements (dst 2-byte aligned).
void launch_fill_bits16(void* dst, std::size_t count, std::uint16_t bits, cudaStream_t stream);

}  // namespace xs::kernels::moe
