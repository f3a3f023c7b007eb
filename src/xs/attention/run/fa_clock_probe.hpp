// xstage attention layer (CUDA): the SM clock right after a batch of launches, probed the way
// scripts/fa_attach_baseline.py probes cuDNN SDPA's (two event-timed spins of 20,000 and 120,000 SM cycles
// queued behind the batch before it ends; the clock is 100,000 cycles over the difference of their times, so
// the launch overhead cancels). Same method on both sides: the two probes compare like with like, including
// their shared bias (the clock may recover within the ~70 us of the spins once the batch is done).
#pragma once
#include <functional>
#include <vector>

#include <cuda_runtime.h>

namespace xs::attention {

inline constexpr unsigned long long kProbeShortCycles = 20000, kProbeLongCycles = 120000;

// num_probes times: enqueue_batch(stream), then the two spins; one reading (Hz) per probe whose long spin took
// longer than its short one (others left out). Throws xs::Error (exit 3) on a CUDA failure.
std::vector<double> probe_clock_after_batches(const std::function<void(cudaStream_t)>& enqueue_batch,
                                              int num_probes, cudaStream_t stream);

}  // namespace xs::attention
