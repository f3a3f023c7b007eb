// xstage backends/gpu layer: the GPU measurement backend (CUDA). Built only where nvcc exists; elsewhere
// make_gpu_backend throws "GPU backend not built" (exit 77).
#pragma once
#include <memory>

#include "xs/bench/backend.hpp"

namespace xs::runtime {

bool gpu_backend_built();
// Opens `device_index`; throws no_gpu_error (exit 77) when no CUDA device is present.
std::unique_ptr<Backend> make_gpu_backend(int device_index = 0);

}  // namespace xs::runtime
