// xstage backends/gpu layer: stand-in for builds without nvcc; every call says the GPU backend is not built.
#include "xs/backends/gpu/gpu_backend.hpp"

#include "xs/common/error.hpp"

namespace xs::runtime {

bool gpu_backend_built() { return false; }

std::unique_ptr<Backend> make_gpu_backend(int) {
  throw no_gpu_error("GPU backend not built: nvcc was not found at configure time (use --backend sim)");
}

}  // namespace xs::runtime
