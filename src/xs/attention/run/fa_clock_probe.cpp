// xstage attention layer (CUDA): the SM clock right after a batch (see fa_clock_probe.hpp).
#include "xs/attention/run/fa_clock_probe.hpp"

#include "xs/attention/run/fa_device.hpp"
#include "xs/kernels/common/clock_probe.hpp"
#include "xs/kernels/common/cuda_check.hpp"
#include "xs/backends/cuda/stream.hpp"

namespace xs::attention {
std::vector<double> probe_clock_after_batches(const std::function<void(cudaStream_t)>& enqueue_batch,
                                              int num_probes, cudaStream_t stream) {
  std::vector<double> hz;
  const runtime::Event ev[3];
  for (int k = 0; k < num_probes; ++k) {
    enqueue_batch(stream);
    XS_CUDA_CHECK(cudaEventRecord(ev[0].get(), stream));
    XS_CUDA_CHECK(kernels::launch_cycle_spin(kProbeShortCycles, stream));
    XS_CUDA_CHECK(cudaEventRecord(ev[1].get(), stream));
    XS_CUDA_CHECK(kernels::launch_cycle_spin(kProbeLongCycles, stream));
    XS_CUDA_CHECK(cudaEventRecord(ev[2].get(), stream));
    sync_checked(stream, "clock probe after a batch");
    float short_ms = 0, long_ms = 0;
    XS_CUDA_CHECK(cudaEventElapsedTime(&short_ms, ev[0].get(), ev[1].get()));
    XS_CUDA_CHECK(cudaEventElapsedTime(&long_ms, ev[1].get(), ev[2].get()));
    const double dt_s = (static_cast<double>(long_ms) - static_cast<double>(short_ms)) * 1e-3;
    if (dt_s > 0) hz.push_back(static_cast<double>(kProbeLongCycles - kProbeShortCycles) / dt_s);
  }
  return hz;
}

}  // namespace xs::attention
