// xstage runtime layer (CUDA): an owned non-blocking CUDA stream, for the application runners.
#pragma once
#include <cuda_runtime.h>

#include "runtime/check.hpp"

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

}  // namespace xs::runtime
