// xstage kernels layer (common): one process-wide report record in mapped pinned host memory per report
// type, for kernels whose spin-waits trap with a message (the device writes it before trapping; the host reads
// it after the sticky error). Allocated on the first request of the device pointer; the host pointer stays null
// until then, so asking for a message never allocates. Host-only (CUDA runtime).
#pragma once
#include <cuda_runtime.h>

#include "xs/kernels/common/cuda_check.hpp"

namespace xs::kernels {

// The host view of T's report; null until mapped_report_device<T>() first ran.
template <class T>
T*& mapped_report_host() {
  static T* host = nullptr;
  return host;
}

// The device pointer of T's report, value-initialized at its allocation (portable, mapped on every device).
template <class T>
T* mapped_report_device() {
  static T* device_ptr = [] {
    void* host = nullptr;
    XS_CUDA_CHECK(cudaHostAlloc(&host, sizeof(T), cudaHostAllocMapped | cudaHostAllocPortable));
    *static_cast<T*>(host) = T{};
    void* dev = nullptr;
    XS_CUDA_CHECK(cudaHostGetDevicePointer(&dev, host, 0));
    mapped_report_host<T>() = static_cast<T*>(host);
    return static_cast<T*>(dev);
  }();
  return device_ptr;
}

}  // namespace xs::kernels
