// xstage kernels layer: the SM-clock probe (see clock_probe.hpp).
#include "xs/kernels/common/clock_probe.hpp"
#include "xs/kernels/common/ptx.cuh"

namespace xs::kernels {
namespace {

// clock64 also bounds the loop, so a stalled %globaltimer ends it (no SM runs at 4 GHz); the host then
// sees elapsed_ns < window_ns and says so.
constexpr std::uint64_t kMaxCyclesPerNs = 4;

__global__ void clock_probe_kernel(const ClockProbeArgs args) {
  const std::uint64_t t0_ns = ptx::globaltimer_ns();
  const std::uint64_t c0 = ptx::clock64_cycles();
  std::uint64_t t1_ns = t0_ns;
  std::uint64_t c1 = c0;
  while (t1_ns - t0_ns < args.window_ns && c1 - c0 < args.window_ns * kMaxCyclesPerNs) {
    t1_ns = ptx::globaltimer_ns();
    c1 = ptx::clock64_cycles();
  }
  args.result->elapsed_cycles = c1 - c0;
  args.result->elapsed_ns = t1_ns - t0_ns;
}

__global__ void cycle_spin_kernel(std::uint64_t cycles) {
  const std::uint64_t c0 = ptx::clock64_cycles();
  while (ptx::clock64_cycles() - c0 < cycles) {
  }
}

}  // namespace

cudaError_t launch_cycle_spin(std::uint64_t cycles, cudaStream_t stream) {
  cycle_spin_kernel<<<1, 1, 0, stream>>>(cycles);
  return cudaGetLastError();
}

cudaError_t launch_clock_probe(const ClockProbeArgs& args, cudaStream_t stream) {
  clock_probe_kernel<<<1, 1, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace xs::kernels
