// xstage attention layer (CUDA): where the P rank slices of the fused / serial Ulysses output go for one
// fa_a2a target (issue 13 item 6).
//   local, host: every slice in one target buffer (a single-sender emulation: the whole volume takes the
//     target's path, so `local` is the no-remote-path control and `host` the PCIe path).
//   peer:N: an All-to-All over P - 1 peers in the one-process rank layout (bench/rank_layout
//     all_gpus_one_process: rank r drives GPU r). The sender is rank `device`; slice r != sender goes to
//     GPU r through peer access, the sender's own slice stays in its local HBM. N selects the peer path and
//     is checked like any peer:N target; every GPU of the group is checked too.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xs/backends/gpu/targets.hpp"

namespace xs::attention {

// "unavailable: ..." (a skip reason) when the group cannot run here: one GPU, fewer GPUs than P ranks, a
// rank GPU the sender cannot reach as a peer; nullopt otherwise (local and host: always nullopt). Throws
// input_error("--device") for a peer target whose sender is not one of the P ranks. Needs a GPU.
std::optional<std::string> rank_group_unavailable_reason(const runtime::Target& target, int device, int num_ranks);

class RankDestinations {
 public:
  RankDestinations(const runtime::Target& target, int device, int num_ranks, std::uint64_t bytes_per_rank);
  void* slice(int rank) const { return slices_.at(static_cast<std::size_t>(rank)); }
  int num_ranks() const { return static_cast<int>(slices_.size()); }
  std::uint64_t bytes_per_rank() const { return bytes_per_rank_; }
  // All slices in one buffer, rank r at r * bytes_per_rank (local, host): one bulk copy can fill them.
  void* contiguous_base() const { return buffers_.size() == 1 ? buffers_.front()->device_ptr() : nullptr; }
  // Bytes per launch that take the target's path (peer: the P - 1 remote slices).
  std::uint64_t remote_bytes() const { return remote_bytes_; }
  std::string describe() const { return description_; }
  void poison();  // every slice 0xFF; synchronous
  // Every slice's bf16 bits on the host, rank order. Call after the writers finished.
  std::vector<std::vector<std::uint16_t>> download() const;

 private:
  std::vector<std::unique_ptr<runtime::TargetBuffer>> buffers_;
  std::vector<int> buffer_of_;  // slice -> buffer
  std::vector<void*> slices_;
  std::uint64_t bytes_per_rank_ = 0, remote_bytes_ = 0;
  std::string description_;
};

}  // namespace xs::attention
