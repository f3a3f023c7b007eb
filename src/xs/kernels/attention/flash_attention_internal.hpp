// xstage kernels layer (attention): what the FlashAttention launcher (flash_attention_kernel.cu) takes from its
// host-only sources (flash_attention_validate.cpp, flash_attention_workspace.cpp). Internal to
// xs_attention_kernels; host only, no device code.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "xs/kernels/attention/flash_attention.hpp"
#include "xs/kernels/attention/scheduler.cuh"

namespace xs::kernels::attention {

// ---- flash_attention_validate.cpp ----
// What picking the instantiation needs (select_kernel), each refusal naming its field: the head dim, the
// epilogue mode, the schedule and the K/V cluster size. validate_flash_attention starts with it;
// flash_attention_grid_size needs only it (its caller may ask before the buffers exist).
void check_kernel_choice(const FlashAttentionConfig& config, const FlashAttentionArgs& a);

// ---- flash_attention_workspace.cpp ----
// The launch's tile scheduler (validated config and args, the grid of flash_attention_grid_size).
TileScheduler scheduler_of(const FlashAttentionConfig& config, const FlashAttentionArgs& a, int grid);

// One report per process, in mapped pinned host memory (allocated by the first launch; launch once
// outside stream capture before capturing).
WaitTimeoutReport* timeout_report_device();

// The dynamic scheduler's two counters, one pair per device, zeroed once here (allocated by the first dynamic
// launch on the device: launch once outside stream capture before capturing). Every launch leaves them zero,
// so launches on one device must not overlap in time (one stream, as every xstage caller does).
std::uint32_t* tile_counters_device();

// The split tail's partials and arrival counters, one grow-only pair per device (counters zeroed when
// allocated; every launch leaves them zero). Launches on one device must not overlap in time (one stream, as
// for the dynamic scheduler's counters). Growing takes the larger of the held and the needed sizes and never
// frees the old buffers (a captured graph may still point at them: they stay allocated, a bounded leak), and
// needs cudaMalloc: while the stream is being captured that is refused (launch the largest split shape once
// before capturing).
struct SplitWorkspace {
  float* partials = nullptr;
  std::uint32_t* counters = nullptr;
};
inline constexpr std::uint64_t kMaxSplitWorkspaceBytes = 4ull << 30;
SplitWorkspace split_workspace_device(std::uint64_t partial_floats, std::uint64_t num_counters, cudaStream_t stream);

}  // namespace xs::kernels::attention
