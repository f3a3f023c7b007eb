// xstage kernels layer (attention): fills device buffers with fresh pseudo-random bf16 (a counter-based
// hash of (seed, index) through Box-Muller: normal with the given stddev), so multi-GB inputs take
// milliseconds and any seed reproduces them. Never all zeros.
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace xs::kernels::attention {

// Throws xs::Error on a launch failure.
void launch_fill_random_bf16(void* dst, std::size_t count, std::uint64_t seed, float stddev, cudaStream_t stream);

}  // namespace xs::kernels::attention
