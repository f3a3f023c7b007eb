// xstage backends/nccl layer: NCCL symmetric-window destinations (the nccl:N target). Every local rank allocates with
// ncclMemAlloc, registers a NCCL_WIN_COLL_SYMMETRIC window, creates a device communicator, and reads the
// load/store (LSA) addresses of every team member's window in a kernel; callers get plain dst[world rank]
// pointer tables, like the other targets. See docs/nccl-window.md for the NCCL usage and what was tested where.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xs/backends/nccl/nccl_comm.hpp"
#include "xs/backends/nccl/nccl_plan.hpp"

namespace xs::runtime {

class NcclWindowTarget {
 public:
  struct Rank {
    int device = -1;
    int world_rank = -1;
    void* local_ptr = nullptr;     // this rank's own buffer (ncclMemAlloc on `device`), bytes_per_rank() long
    const void* window = nullptr;  // its ncclWindow_t (device memory), for kernels that call the device API
    NcclTeamView lsa;              // ncclTeamLsa(comm)
    std::vector<void*> dst;        // dst[world rank]: that rank's window as this rank's kernels store to it;
                                   // nullptr for ranks outside this rank's LSA team (not load/store reachable)
  };
  // Either a target, or the reason it cannot be made here ("unavailable: ..."), which callers record as a
  // skipped point. Bad arguments throw input_error; CUDA/NCCL failures other than an unsupported window or
  // device communicator (allocation, a fault) throw Error (exit 3).
  struct Outcome {
    std::unique_ptr<NcclWindowTarget> target;
    std::string unavailable_reason;
  };

  // Collective over the communicator: every rank of it (all local ranks of `comms` here, the other processes'
  // ranks there) must call it with the same bytes_per_rank.
  static Outcome create(std::shared_ptr<const NcclCommGroup> comms, std::size_t bytes_per_rank);

  // Frees in reverse order of creation: device communicators, windows, memory. Never throws.
  ~NcclWindowTarget();
  NcclWindowTarget(const NcclWindowTarget&) = delete;
  NcclWindowTarget& operator=(const NcclWindowTarget&) = delete;

  std::size_t bytes_per_rank() const { return bytes_per_rank_; }  // registered size: the request rounded to 4 KiB
  int num_local() const { return static_cast<int>(ranks_.size()); }
  int world_size() const { return comms_->world_size(); }
  const Rank& rank(int local_idx) const { return ranks_.at(static_cast<std::size_t>(local_idx)); }
  const std::vector<void*>& dst(int local_idx) const { return rank(local_idx).dst; }

 private:
  struct DeviceComms;  // the ncclDevComm values, opaque here (nccl_device.h stays out of this header)
  NcclWindowTarget(std::shared_ptr<const NcclCommGroup> comms, std::size_t bytes);

  std::shared_ptr<const NcclCommGroup> comms_;  // outlives the windows registered on it
  std::size_t bytes_per_rank_ = 0;
  std::vector<Rank> ranks_;
  std::unique_ptr<DeviceComms> dev_comms_;
};

// The single-process window behind `nccl:N` measured from GPU `device`: a communicator over
// nccl_target_devices(device, N); kernels on `device` store through store_ptr() into rank N's window.
class NcclTargetWindow {
 public:
  struct Outcome {
    std::unique_ptr<NcclTargetWindow> window;
    std::string unavailable_reason;
  };
  static Outcome create(int device, int peer, std::size_t bytes);

  void* store_ptr() const { return store_ptr_; }  // valid on `device`
  void* owner_ptr() const { return owner_ptr_; }  // the same memory as its owner's own buffer, for fill/read-back
  int owner_device() const { return owner_device_; }
  const NcclWindowTarget& target() const { return *target_; }

 private:
  NcclTargetWindow() = default;
  std::shared_ptr<NcclCommGroup> comms_;
  std::unique_ptr<NcclWindowTarget> target_;  // declared after comms_: destroyed first
  void* store_ptr_ = nullptr;
  void* owner_ptr_ = nullptr;
  int owner_device_ = -1;
};

// Why nccl:`peer` cannot be used from GPU `device`, or nullopt. Built without NCCL, or the device API refused
// for this NCCL: said at once; otherwise decided by making a small window once per (device, peer) in this
// process (a communicator init, about a second) and remembered. Never throws for an NCCL/CUDA failure: that
// becomes the reason.
std::optional<std::string> nccl_target_unavailable_reason(int device, int peer);

}  // namespace xs::runtime
