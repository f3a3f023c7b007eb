// xstage kernels layer (lowest floor with CUDA): the one way CUDA and NCCL failures become xs::Error (exit 3).
// Every runtime call is wrapped; the message names the expression, file:line and the CUDA/NCCL error. It lives
// beside the kernels (which check their own launches) so that nothing below backends/ includes backends/.
#pragma once
#include <string>

#include <cuda_runtime.h>
#if defined(XS_HAVE_NCCL)
#include <nccl.h>
#endif

#include "xs/common/error.hpp"

namespace xs::cuda_check {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  throw Error(ExitCode::kDeviceFailure, "cuda", expr,
              std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " + cudaGetErrorName(err) +
                  " (" + cudaGetErrorString(err) + ")");
}

inline void check_cuda(cudaError_t err, const char* expr, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, expr, file, line);
}

// After a kernel launch: the launch error; with XS_SYNC_LAUNCHES defined also waits, so an
// asynchronous fault is reported at its launch site (debugging).
inline void check_launch(const char* file, int line) {
  check_cuda(cudaGetLastError(), "kernel launch", file, line);
#if defined(XS_SYNC_LAUNCHES)
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize after launch", file, line);
#endif
}

#if defined(XS_HAVE_NCCL)
inline void check_nccl(ncclResult_t res, const char* expr, const char* file, int line) {
  if (res == ncclSuccess) return;
  throw Error(ExitCode::kDeviceFailure, "nccl", expr,
              std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " + ncclGetErrorString(res));
}
#define XS_NCCL_CHECK(expr) ::xs::cuda_check::check_nccl((expr), #expr, __FILE__, __LINE__)
#endif

}  // namespace xs::cuda_check

#define XS_CUDA_CHECK(expr) ::xs::cuda_check::check_cuda((expr), #expr, __FILE__, __LINE__)
#define XS_CUDA_CHECK_LAUNCH() ::xs::cuda_check::check_launch(__FILE__, __LINE__)
