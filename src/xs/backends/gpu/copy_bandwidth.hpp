// xstage backends/gpu layer: copy-engine bandwidth of the path a target uses, a physical reference for the
// drain rate R (device -> pinned host for `host`, device -> device for `local`, cudaMemcpyPeerAsync
// for `peer:N`).
#pragma once
#include <cstddef>

#include "xs/backends/gpu/targets.hpp"

namespace xs::runtime {

// Bytes copied / s: median over `repetitions` copies of `bytes`, timed with CUDA events, after one
// untimed warm-up copy. Throws Error (exit 3) on a CUDA failure.
double measure_copy_bandwidth_bps(const Target& target, int device, std::size_t bytes = std::size_t{256} << 20,
                                  int repetitions = 5);

}  // namespace xs::runtime
