// xstage GPU tests: a global environment that ends the whole binary with exit 77 (CTest "Not Run")
// where there is no usable sm_90 GPU, so the suites below never fail for lack of hardware.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace {

class GpuEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
      std::fprintf(stderr, "no GPU: %s; skipping the GPU tests (exit 77)\n",
                   err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount returned 0");
      std::exit(77);
    }
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9 || prop.minor != 0) {
      std::fprintf(stderr, "no suitable GPU: GPU 0 is not sm_90 (kernels are sm_90a only); exit 77\n");
      std::exit(77);
    }
  }
};

[[maybe_unused]] ::testing::Environment* const kGpuEnvironment =
    ::testing::AddGlobalTestEnvironment(new GpuEnvironment);

}  // namespace
