// xstage backends/gpu layer: copy-engine reference bandwidth (see copy_bandwidth.hpp).
#include "xs/backends/gpu/copy_bandwidth.hpp"

#include <vector>

#include "xs/common/stats.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::runtime {
namespace {

// Owns the source buffer, stream and events; releases them on every path.
struct CopyResources {
  void* src = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t begin = nullptr, end = nullptr;
  ~CopyResources() {
    if (begin) (void)cudaEventDestroy(begin);
    if (end) (void)cudaEventDestroy(end);
    if (stream) (void)cudaStreamDestroy(stream);
    if (src) (void)cudaFree(src);
  }
};

}  // namespace

double measure_copy_bandwidth_bps(const Target& target, int device, std::size_t bytes, int repetitions) {
  DeviceGuard guard(device);
  TargetBuffer dst(target, device, bytes);
  CopyResources r;
  XS_CUDA_CHECK(cudaMalloc(&r.src, bytes));
  XS_CUDA_CHECK(cudaMemset(r.src, 0x5A, bytes));
  XS_CUDA_CHECK(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
  XS_CUDA_CHECK(cudaEventCreate(&r.begin));
  XS_CUDA_CHECK(cudaEventCreate(&r.end));

  auto copy = [&] {
    if (target.kind == TargetKind::kPeer) {
      XS_CUDA_CHECK(cudaMemcpyPeerAsync(dst.device_ptr(), target.peer_device, r.src, device, bytes, r.stream));
    } else {
      // UVA tells the runtime where both pointers live: D->D for local, D->pinned host for host.
      XS_CUDA_CHECK(cudaMemcpyAsync(dst.device_ptr(), r.src, bytes, cudaMemcpyDefault, r.stream));
    }
  };
  copy();  // warm-up: first-touch mappings, copy-engine clocks
  XS_CUDA_CHECK(cudaStreamSynchronize(r.stream));
  std::vector<double> bps;
  for (int i = 0; i < repetitions; ++i) {
    XS_CUDA_CHECK(cudaEventRecord(r.begin, r.stream));
    copy();
    XS_CUDA_CHECK(cudaEventRecord(r.end, r.stream));
    XS_CUDA_CHECK(cudaEventSynchronize(r.end));
    float ms = 0;
    XS_CUDA_CHECK(cudaEventElapsedTime(&ms, r.begin, r.end));
    bps.push_back(static_cast<double>(bytes) / (1e-3 * ms));
  }
  return median(bps);
}

}  // namespace xs::runtime
