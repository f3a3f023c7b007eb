// xstage kernels layer (common): TMA descriptor encoding (see tensor_map.hpp). Host code; a .cu only so it
// builds into the kernels library with the kernels that use it.
#include "xs/kernels/common/tensor_map.hpp"

#include <string>

#include <cudaTypedefs.h>

#include "xs/common/error.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::kernels {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* ptr = nullptr;
    cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
    XS_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000, cudaEnableDefault, &status));
    if (status != cudaDriverEntryPointSuccess || ptr == nullptr)
      throw Error(ExitCode::kDeviceFailure, "cuda", "cuTensorMapEncodeTiled",
                  "driver entry point cuTensorMapEncodeTiled not found (driver older than CUDA 12.0?)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(ptr);
  }();
  return fn;
}

}  // namespace

CUtensorMap make_tile_map_2d(const void* base, CUtensorMapDataType dtype, std::uint32_t elem_bytes, std::uint64_t rows,
                             std::uint64_t cols, std::uint32_t box_rows, std::uint32_t box_cols, const char* what) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols * elem_bytes)};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult res = tensor_map_encoder()(&map, dtype, 2, const_cast<void*>(base), dims, strides, box, elem_strides,
                                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (res != CUDA_SUCCESS)
    throw Error(ExitCode::kDeviceFailure, "cuda", "cuTensorMapEncodeTiled",
                std::string("cuTensorMapEncodeTiled for ") + what + " failed with CUresult " + std::to_string(res));
  return map;
}

}  // namespace xs::kernels
