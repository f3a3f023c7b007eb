// xstage backends/gpu layer: the loaded suite on the GPU (remote_store.loaded, issue 28): plans a point, keeps
// its operands, and measures it: per repetition a launch without stores (the rate-0 baseline) and the same
// launch with them, then verifies every stored byte and a CPU reference of the GEMM output.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>

#include "xs/kernels/remote_store/loaded.hpp"
#include "xs/report/records.hpp"
#include "xs/backends/cuda/device_buffer.hpp"
#include "xs/backends/cuda/devices.hpp"
#include "xs/backends/gpu/loaded_timeline.hpp"
#include "xs/backends/gpu/point_plan.hpp"
#include "xs/backends/gpu/targets.hpp"

namespace xs::runtime {

struct LoadedPlan {
  PointPlan ring;                               // target and store ring (plan_point of the same stores)
  kernels::remote_store::LoadedConfig config;
  kernels::remote_store::LoadedProblem problem;
};
struct LoadedPlanOutcome {
  std::optional<LoadedPlan> plan;
  std::string reason;                           // as PlanOutcome: "unavailable..." = skipped, else bad input
};

// Operand blocks of a working set: l2 -> 8 blocks (2 x 8 x 128 x k_elems bf16, 2 MiB at k = 512); hbm -> the
// fewest blocks whose A and B together hold >= 4 x the L2.
std::uint32_t loaded_num_blocks(WorkingSet working_set, std::uint32_t k_elems, std::uint64_t l2_bytes);

LoadedPlanOutcome plan_loaded(const PointSpec& spec, const DeviceInfo& device, const Topology& topology,
                              std::uint64_t held_ring_bytes);

// CPU reference of one output block: C[i][j] = sum_k A[block*128 + i][k] * B[block*128 + j][k] (double).
std::vector<double> loaded_reference_block(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b,
                                           std::uint32_t k_elems, std::uint32_t block);

// Compares an output block with its reference: |got - ref| <= 1e-3 (|ref| + 1); returns the wrong elements
// and prints the worst one on stderr.
std::uint64_t compare_loaded_block(const float* got, const std::vector<double>& ref, std::uint32_t block);

class LoadedRunner {
 public:
  // stream, status words: the GPU backend's (status: mapped host word and its device address).
  LoadedRunner(const DeviceInfo& device, cudaStream_t stream, std::uint32_t* status_host, std::uint32_t* status_device,
               double clock_flag_fraction);

  // record: id and spec filled. ring: the destination buffer of plan.ring (guards included).
  PointRecord run(const PointSpec& spec, const LoadedPlan& plan, TargetBuffer& ring, PointRecord record);

 private:
  struct Operands {
    std::vector<std::uint16_t> a_host, b_host;  // kept for the CPU reference
    DeviceBuffer a, b, c;
    CUtensorMap tm_a{}, tm_b{};
  };
  // The operands of this (num_blocks, k_elems): fresh random bf16 in [-1, 1), made when the shape changes
  // (one set is held at a time: an HBM working set is hundreds of MiB).
  Operands& operands_for(const kernels::remote_store::LoadedProblem& problem);
  // One launch and its sample; args.max_bursts = 0 gives the baseline.
  LoadedLaunchSample launch(const PointSpec& spec, const LoadedPlan& plan, kernels::remote_store::LoadedArgs args);
  // run()'s steps, in order. The point's operands, fresh record buffers, NaN-poisoned output and ring, then a
  // device-wide sync (the uploads and memsets done before the first launch on stream_).
  Operands& prepare_point(const PointSpec& spec, const LoadedPlan& plan, TargetBuffer& ring);
  // The launch arguments of the point (max_bursts left at its default: run() sets it per launch).
  kernels::remote_store::LoadedArgs point_args(const PointSpec& spec, const LoadedPlan& plan, const Operands& ops,
                                               TargetBuffer& ring) const;
  // Each CTA's bursts from its burst base; throws when they differ from the launch records' count (exit 3).
  std::vector<std::uint64_t> checked_burst_counts(std::uint32_t k) const;
  // Compares the written GEMM output blocks (all of a small problem, else first, middle, last) with the CPU
  // reference, adding to record.verification.
  void verify_gemm_blocks(const LoadedPlan& plan, const Operands& ops, PointRecord& record) const;

  DeviceInfo device_;
  cudaStream_t stream_;
  std::uint32_t* status_host_;
  std::uint32_t* status_device_;
  double clock_flag_fraction_;
  std::pair<std::uint32_t, std::uint32_t> operands_key_{0, 0};  // (num_blocks, k_elems) of operands_
  Operands operands_;
  DeviceBuffer tiles_, bursts_, ctas_, burst_base_;
  std::vector<std::uint64_t> claimed_bursts_;  // per CTA: bursts the launch records counted, over the point
};

}  // namespace xs::runtime
