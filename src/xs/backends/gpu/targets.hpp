// xstage backends/gpu layer: remote-store destinations. `local` (device HBM), `host` (mapped pinned host
// memory, written over PCIe), `peer:N` (cudaMalloc on GPU N through peer access, NVLink where present),
// `nccl:N` (rank N's NCCL symmetric window through its LSA pointer, NcclTargetWindow; nccl:<self> is a one-rank
// communicator storing through its own window).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "xs/backends/cuda/devices.hpp"

namespace xs::runtime {

class NcclTargetWindow;  // backends/nccl/nccl_window.hpp

enum class TargetKind { kLocal, kHost, kPeer, kNccl };

struct Target {
  TargetKind kind = TargetKind::kLocal;
  int peer_device = -1;  // N of peer:N / nccl:N
  std::string text;      // as given
};

// Parses "local", "host", "peer:N", "nccl:N"; throws input_error naming the accepted forms.
Target parse_target(const std::string& text);

// "unavailable: ..." when `target` cannot be reached from `device` on this node; another string for
// a target that is wrong input (peer:<self>); nullopt when usable. For nccl:N this makes a small NCCL window
// once per (device, N) in the process to find out (nccl_target_unavailable_reason).
std::optional<std::string> target_unavailable_reason(const Target& target, const DeviceInfo& device,
                                                     const Topology& topology);

// Destination memory of one target, owned. Allocation failure throws Error (exit 3) naming the size.
class TargetBuffer {
 public:
  TargetBuffer(const Target& target, int device, std::size_t bytes);
  ~TargetBuffer();
  TargetBuffer(const TargetBuffer&) = delete;
  TargetBuffer& operator=(const TargetBuffer&) = delete;

  void* device_ptr() const { return device_ptr_; }  // the address kernels store to
  std::size_t bytes() const { return bytes_; }
  // Fills [0, bytes) with 0xFF bytes; synchronous.
  void poison(std::size_t bytes);
  // The first `bytes` as host-readable words: the pinned memory itself for `host`, else a copy in
  // `scratch`. Call after the writing kernels finished.
  const std::uint32_t* host_words(std::size_t bytes, std::vector<std::uint32_t>& scratch) const;

 private:
  // The memory the kernels' stores land in, as its owner addresses it (fill, read-back).
  void* owner_ptr() const;

  TargetKind kind_;
  int owner_device_;      // where the memory lives (the peer for peer:N and nccl:N)
  std::unique_ptr<NcclTargetWindow> nccl_;  // nccl:N: the communicator and window behind device_ptr_
  void* device_ptr_ = nullptr;
  void* host_ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Lets `device` store to `peer` memory (idempotent).
void enable_peer_access(int device, int peer);

// The checks an application point (fa_a2a, megamoe) makes before it touches a GPU: `device` must exist
// (input_error "device" otherwise), the target must be usable from it (a reason starting "unavailable" is
// returned as the skip reason, any other is an input_error "target"), and the GPU must be sm_90 (the
// sm_90a kernels' architecture; returned as a skip reason). nullopt: the point can run; *info is filled.
std::optional<std::string> sm90_point_unavailable_reason(const Target& target, int device, DeviceInfo* info);

}  // namespace xs::runtime
