// xstage moe layer (CUDA): the device state of one megamoe point. Inputs (fresh random, bf16 or fp8 W8A8),
// the routing tables, the kernel's intermediates, the Combine destinations of every rank, the copy
// pipelines' send buffers and waves, and the fp32 reference; every variant plan (moe_variants.hpp) enqueues
// through it. The runner (moe_runner) verifies and times the plans; the C ABI (moe_c_api.h) hands the same
// tensors to PyTorch for the grouped-GEMM baseline in the same process.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <cuda_runtime.h>

#include "xs/kernels/moe/compare_combine.hpp"
#include "xs/kernels/moe/megamoe.hpp"
#include "xs/moe/run/moe_device.hpp"
#include "xs/moe/point/moe_point.hpp"
#include "xs/moe/run/moe_variants.hpp"
#include "xs/moe/point/problem.hpp"
#include "xs/backends/cuda/device_buffer.hpp"
#include "xs/backends/gpu/targets.hpp"

namespace xs::moe {

class MoePointDevice {
 public:
  // Validates the spec against the problem, allocates everything (input_error when the point cannot fit
  // in free device memory), fills the inputs from input_seed and poisons the intermediates. `stream` is the
  // point's stream; the object must not outlive it.
  MoePointDevice(const MoePointSpec& spec, const MoeProblem& problem, std::uint64_t input_seed, cudaStream_t stream);
  ~MoePointDevice();
  MoePointDevice(const MoePointDevice&) = delete;
  MoePointDevice& operator=(const MoePointDevice&) = delete;

  // One launch of the plan on `st` (kernels, and for the copy pipelines their copies), capturable into a
  // graph after one launch outside capture. records: an instrumented launch (fused and serial_then_copy
  // plans only; input_error otherwise). A phase plan reads the pool or act of an earlier kAll launch.
  void enqueue(const MoeVariantPlan& plan, cudaStream_t st, kernels::moe::TileRecord* records = nullptr,
               std::uint64_t records_bytes = 0);

  // Kernel intermediates (pool, act, their fp8 scales, the pipeline waves' scale scratch) to NaN bits.
  void poison_intermediates(cudaStream_t st);
  void poison_act(cudaStream_t st);
  // Combine destinations (own window only across ranks) and the copy pipelines' send buffers.
  void poison_destinations(cudaStream_t st);

  // Runs the fp32 reference once (waits), builds the slot mask, measures the reference's RMS.
  void run_reference(cudaStream_t st);
  double reference_rms() const { return reference_rms_; }
  // The destinations a plan's launch delivered into, per rank (the copy pipelines' rows scattered back into
  // a scratch set first; waits).
  std::vector<void*> delivered(const MoeVariantPlan& plan, cudaStream_t st);
  // Compares `test` with the reference (against_first false) or with the kept first variant (true).
  kernels::moe::CombineCompareResult compare(const std::vector<void*>& test, bool against_first, float abs_tol,
                                             float rel_tol, cudaStream_t st);
  void keep_as_first(const std::vector<void*>& test, cudaStream_t st);
  // Across ranks: poisoned slots left in this rank's own window (waits).
  std::uint64_t own_window_unwritten() const;

  const kernels::moe::MegaMoeArgs& base_args() const { return base_; }
  const kernels::moe::TileSpace& tiles() const { return tiles_; }
  std::uint64_t dst_bytes() const { return dst_bytes_; }
  int num_pipeline_waves() const { return static_cast<int>(waves_.size()); }

 private:
  struct Impl;
  // The constructor's steps, in order (moe_point_device.cpp). fill_inputs: the bf16 or fp8 inputs and the
  // pool/act buffers, filled from input_seed on `s` (fp8: quantized, then waits).
  void fill_inputs(const MoePointSpec& spec, const MoeProblem& prob, std::uint64_t input_seed, cudaStream_t s);
  // The Combine destinations of every rank (or the exchange's windows: input_error when they are too small) and
  // the zeroed sync regions.
  void allocate_destinations(const MoePointSpec& spec, const MoeProblem& prob, const runtime::Target& target,
                             cudaStream_t s);
  // Copy pipelines only: the packed send buffers, their target copies, the waves, their sync and events.
  void allocate_copy_pipelines(const MoePointSpec& spec, const MoeProblem& prob, const runtime::Target& target,
                               cudaStream_t s);
  // base_: the kernel arguments every plan starts from (host only).
  void fill_base_args(const MoePointSpec& spec, const MoeProblem& prob);

  std::unique_ptr<Impl> impl_;
  kernels::moe::MegaMoeArgs base_;
  kernels::moe::TileSpace tiles_;
  std::uint64_t dst_bytes_ = 0;
  double reference_rms_ = 0;
  std::vector<PipelineWave> waves_;
};

// Waits for the stream; a kernel trap becomes xs::Error naming the timed-out flag when there is one.
void sync_checked(cudaStream_t s, const char* what);

}  // namespace xs::moe
