// xstage backends/gpu layer: knobs of the GPU backend that a sweep never changes: measurement-hygiene
// policy and test hooks (a start barrier that cannot be met, a short timeout). CUDA builds only.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>

#include "xs/bench/backend.hpp"

namespace xs::runtime {

struct GpuBackendOptions {
  std::uint64_t barrier_timeout_ns = 2'000'000'000;  // device spin-wait limit, then trap naming the flag
  std::uint64_t start_lead_ns = 50'000;              // start barrier: first arrival + lead (> CTA launch spread)
  std::uint64_t min_launch_ns = 200'000;             // SM-clock window per launch (>> %globaltimer granularity)
  std::optional<std::uint64_t> preset_start_time_ns;  // test hook: the start barrier waits for this value
  int max_reruns = 2;                // re-runs of a repetition whose SM clock was low (or isolated: misaligned)
  double clock_flag_fraction = 0.9;  // flag below this fraction of cudaDevAttrClockRate
};

std::unique_ptr<Backend> make_gpu_backend(int device_index, const GpuBackendOptions& options);

}  // namespace xs::runtime
