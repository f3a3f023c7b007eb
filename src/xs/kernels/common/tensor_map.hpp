// xstage kernels layer (common): host-side TMA descriptor encoding shared by the Hopper kernels. Uses
// cuTensorMapEncodeTiled through cudaGetDriverEntryPointByVersion, so nothing links libcuda.
#pragma once
#include <cstdint>

#include <cuda.h>

namespace xs::kernels {

// A 2D row-major tensor [rows][cols] of `elem_bytes`-byte elements (row pitch cols * elem_bytes, a
// multiple of 16), loaded in boxes of [box_rows][box_cols] with 128B swizzle (box_cols * elem_bytes must
// be 128). Throws xs::Error (exit 3) naming `what` when the driver refuses the descriptor.
CUtensorMap make_tile_map_2d(const void* base, CUtensorMapDataType dtype, std::uint32_t elem_bytes, std::uint64_t rows,
                             std::uint64_t cols, std::uint32_t box_rows, std::uint32_t box_cols, const char* what);

}  // namespace xs::kernels
