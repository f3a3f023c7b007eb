// xstage kernels layer: host launch API of the SM-clock probe, a one-thread kernel that counts clock64
// cycles over a %globaltimer window. The runtime converts a gap G (seconds) into spin cycles with it.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace xs::kernels {

struct ClockProbeResult {
  std::uint64_t elapsed_cycles = 0;  // clock64 delta over the window
  std::uint64_t elapsed_ns = 0;      // %globaltimer delta (< window_ns only if the timer stalled)
};

struct ClockProbeArgs {
  std::uint64_t window_ns = 1'000'000;  // >> %globaltimer granularity (up to ~1 us)
  ClockProbeResult* result = nullptr;   // device memory
};

cudaError_t launch_clock_probe(const ClockProbeArgs& args, cudaStream_t stream);

// One thread spins for `cycles` SM cycles (%clock64). Two event-timed spins of different lengths queued behind
// a batch give the SM clock right after it, the launch overhead cancelled in their difference: the method
// scripts/fa_attach_baseline.py uses on cuDNN's side (torch.cuda._sleep), so both sides are probed alike.
cudaError_t launch_cycle_spin(std::uint64_t cycles, cudaStream_t stream);

}  // namespace xs::kernels
