// xstage GPU tests (shared by gpu_attention and gpu_moe): a gtest global environment that exits 77
// (CTest "Not Run") where there is no CUDA device or GPU 0 is not sm_90 (the kernels are built for
// sm_90a only). No *_test.cpp here: this folder is no test executable of its own.
#pragma once
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace xs::test {

class Sm90Environment : public ::testing::Environment {
 public:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      std::printf("no CUDA device: skipping (exit 77)\n");
      std::exit(77);
    }
    int major = 0;
    (void)cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    if (major != 9) {
      std::printf("GPU 0 is not sm_90 (the xstage kernels are built for sm_90a): skipping (exit 77)\n");
      std::exit(77);
    }
  }
};

}  // namespace xs::test
