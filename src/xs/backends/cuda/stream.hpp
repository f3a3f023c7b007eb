// xstage backends/cuda layer (CUDA): an owned non-blocking CUDA stream and an owned timing event, for the application
// runners.
#pragma once
#include <cuda_runtime.h>

#include "xs/kernels/common/cuda_check.hpp"

namespace xs::runtime {

class Stream {
 public:
  Stream() { XS_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { (void)cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// A timing event (cudaEventCreate's defaults), destroyed with its owner.
class Event {
 public:
  Event() { XS_CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() { (void)cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace xs::runtime
