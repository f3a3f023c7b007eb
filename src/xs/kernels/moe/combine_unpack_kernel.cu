// xstage kernels layer (moe): packed Combine rows -> slot layout (see combine_unpack.hpp). One CTA per pool
// row, 16 bytes per thread.
#include "xs/kernels/moe/combine_unpack.hpp"

#include "xs/common/error.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::kernels::moe {
namespace {

__global__ void combine_unpack_kernel(const CombineUnpackArgs a) {
  const int row = blockIdx.x;
  const int rank = a.pool_dst_rank[row];
  if (rank < 0) return;
  const std::uint64_t row_bytes = static_cast<std::uint64_t>(a.hidden) * 2;
  const auto* src = static_cast<const uint4*>(a.packed[rank]) + a.pool_packed_row[row] * row_bytes / 16;
  auto* dst = static_cast<uint4*>(a.dst[rank]) + static_cast<std::uint64_t>(a.pool_dst_slot[row]) * row_bytes / 16;
  for (std::uint64_t i = threadIdx.x; i < row_bytes / 16; i += blockDim.x) dst[i] = src[i];
}

}  // namespace

void launch_combine_unpack(const CombineUnpackArgs& a, cudaStream_t stream) {
  if (a.hidden <= 0 || a.hidden % 8 != 0) throw input_error("hidden", "must be a positive multiple of 8");
  if (a.num_ranks < 1 || a.num_ranks > kMaxRanks) throw input_error("num_ranks", "out of range");
  if (!a.pool_dst_rank || !a.pool_dst_slot || !a.pool_packed_row)
    throw input_error("pool tables", "device tables must be non-null");
  for (int r = 0; r < a.num_ranks; ++r)
    if (!a.packed[r] || !a.dst[r]) throw input_error("packed/dst", "every rank needs a packed source and a destination");
  if (a.num_pool_rows <= 0) return;
  combine_unpack_kernel<<<a.num_pool_rows, 128, 0, stream>>>(a);
  XS_CUDA_CHECK_LAUNCH();
}

}  // namespace xs::kernels::moe
