// xstage GPU tests: a global environment that ends the whole binary with exit 77 (CTest "Not Run")
// where there is no usable sm_90 GPU or no GPU backend was built, so these suites never fail for lack
// of hardware.
#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

#include "xs/backends/gpu/gpu_backend.hpp"

#if defined(XS_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

namespace {

class GpuEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
#if defined(XS_HAVE_CUDA)
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
#else
    std::fprintf(stderr, "GPU backend not built (no nvcc at configure time); skipping the GPU tests (exit 77)\n");
    std::exit(77);
#endif
  }
};

[[maybe_unused]] ::testing::Environment* const kGpuEnvironment =
    ::testing::AddGlobalTestEnvironment(new GpuEnvironment);

// The build flavour and the backend agree (a stub linked into a CUDA build would fail here).
TEST(GpuBackendBuild, MatchesTheBuildFlavour) {
#if defined(XS_HAVE_CUDA)
  EXPECT_TRUE(xs::runtime::gpu_backend_built());
#else
  EXPECT_FALSE(xs::runtime::gpu_backend_built());
#endif
}

}  // namespace
