// xstage moe layer (CUDA): device-side building blocks of the MegaMoE tests and runner. Routing tables
// uploaded from host arrays, per-rank Combine destinations poisoned before each run, the fp32 GPU
// reference run with its own scratch, and the on-device destination check brought back with the worst
// element decoded. Throws xs::Error (exit 3) on CUDA failures, xs::input_error (exit 2) on bad arguments.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "xs/kernels/moe/compare_combine.hpp"
#include "xs/kernels/moe/layout.cuh"
#include "xs/kernels/moe/reference.hpp"
#include "xs/backends/cuda/device_buffer.hpp"

namespace xs::moe {

using runtime::DeviceBuffer;
using runtime::fresh_seed;

// Host arrays of the routing tables (layout.cuh, RoutingTables); any owner's vectors convert to these spans.
struct RoutingHostView {
  std::span<const std::int32_t> pool_arrival;
  std::span<const std::int32_t> pool_dst_rank;
  std::span<const std::int32_t> pool_dst_slot;
  std::span<const float> pool_weight;
  std::span<const std::uint32_t> row_block_expert;
  std::span<const std::uint32_t> expert_first_block;
};

// Device copies of the tables; tables() points a kernel's RoutingTables at them.
struct DeviceRouting {
  DeviceBuffer pool_arrival, pool_dst_rank, pool_dst_slot, pool_weight, row_block_expert, expert_first_block;
  int num_pool_rows = 0;
  explicit DeviceRouting(const RoutingHostView& host);  // input_error: the four pool arrays differ in length
  kernels::moe::RoutingTables tables() const;
};

// dst[rank] = [tokens_per_rank * top_k][hidden] bf16 for every rank, in device memory.
struct CombineDestinations {
  int num_ranks = 0, hidden = 0;
  std::uint32_t slots_per_rank = 0;
  std::vector<DeviceBuffer> ranks;
  CombineDestinations(int num_ranks, int tokens_per_rank, int top_k, int hidden);
  std::uint64_t bytes_per_rank() const;
  void poison(cudaStream_t stream, std::uint16_t bits = kernels::moe::kPoisonBits);  // every element = bits
  // Points an argument block's dst[] / dst_bytes[] (MegaMoeArgs, MoeReferenceArgs) at these buffers.
  template <class Args>
  void fill_args(Args& a) const {
    for (int r = 0; r < num_ranks; ++r) {
      a.dst[r] = ranks[r].get();
      a.dst_bytes[r] = bytes_per_rank();
    }
  }
  std::vector<std::uint16_t> download(int rank) const;  // bf16 bits, [slots][hidden]
};

// Runs the fp32 reference on `args` (dst, routing, inputs and row range set by the caller) with a
// scratch it allocates, and waits for it. A device trap surfaces as xs::Error.
void run_moe_reference(kernels::moe::MoeReferenceArgs args, cudaStream_t stream);

// Expected-slot mask for these tables (device, num_ranks * slots words; see compare_combine.hpp).
DeviceBuffer build_slot_mask(const DeviceRouting& routing, int num_ranks, std::uint32_t slots_per_rank, int row_begin,
                             int row_end, cudaStream_t stream);

// The comparison's counts with the worst compared element decoded (rank, slot, col; -1 when none).
struct CombineCheck {
  kernels::moe::CombineCompareResult counts;
  int worst_rank = -1, worst_slot = -1, worst_col = -1;
  float worst_test = 0.0f, worst_ref = 0.0f;
  bool clean() const;  // no wrong, unwritten, unexpected or multi-writer element or slot
  std::string summary() const;
};

struct CombineCheckSpec {
  const CombineDestinations* test = nullptr;  // the kernel's destinations
  const CombineDestinations* ref = nullptr;   // the reference's, or another schedule's
  const DeviceBuffer* slot_mask = nullptr;
  std::uint16_t poison_bits = kernels::moe::kPoisonBits;
  float abs_tol = 0.0f, rel_tol = 0.0f;
};
CombineCheck compare_combine(const CombineCheckSpec& spec, cudaStream_t stream);

}  // namespace xs::moe
