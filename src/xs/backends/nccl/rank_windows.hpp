// xstage backends/nccl layer: one NCCL symmetric window per rank of a multi-rank run, for applications whose stores
// cross ranks (fa_a2a's All-to-All, megamoe's Combine). Every rank makes one communicator (ncclCommInitRank
// with a unique id rank 0 broadcasts over the run's RankComm: threads of one process or one process per GPU)
// and registers one window; each rank gets every window's load/store address. See docs/multi-gpu.md.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "xs/bench/rank_comm.hpp"

namespace xs::runtime {

class NcclCommGroup;
class NcclWindowTarget;

// What a point needs to store into every rank's window (the applications' exchanges extend it): plain pointers
// and a barrier, no CUDA or NCCL type.
struct WindowExchange {
  int world_rank = 0;
  std::vector<void*> peer_windows;  // [world rank]: that rank's window as this rank's kernels store to it
  void* own_window = nullptr;       // this rank's window, on its own GPU (poison, read-back)
  std::size_t window_bytes = 0;     // of each window
  std::function<void()> barrier;    // every rank of the run
  std::string description;
};

class RankWindows {
 public:
  // Collective over `comm`: every rank calls it with the same bytes, on the GPU `device` it drives. Throws
  // input_error("--target") with NCCL's reason where a window cannot be made (built without NCCL, no symmetric
  // memory, a rank outside the load/store team), Error "nccl" (exit 3) on an NCCL failure.
  static std::unique_ptr<RankWindows> create(bench::RankComm& comm, int device, std::size_t bytes);
  ~RankWindows();
  RankWindows(const RankWindows&) = delete;
  RankWindows& operator=(const RankWindows&) = delete;

  int world_rank() const { return world_rank_; }
  int world_size() const { return static_cast<int>(peer_windows_.size()); }
  const std::vector<void*>& peer_windows() const { return peer_windows_; }  // [world rank], as stored to from here
  void* own_window() const { return own_window_; }                          // this rank's, on its GPU
  std::size_t window_bytes() const { return window_bytes_; }                // registered size (>= the request)
  // ncclAlltoAll of bytes_per_peer per pair on the cudaStream_t `stream` (capturable; same order on every rank).
  void alltoall(const void* send, void* recv, std::size_t bytes_per_peer, void* stream) const;
  std::string describe() const;
  // The exchange over these windows; its barrier is `comm`'s. `comm` and this object must outlive it.
  WindowExchange exchange(bench::RankComm& comm) const;

 private:
  RankWindows() = default;
  std::shared_ptr<NcclCommGroup> comms_;
  std::unique_ptr<NcclWindowTarget> windows_;  // destroyed before comms_ (declared after it)
  int world_rank_ = 0, device_ = -1;
  std::vector<void*> peer_windows_;
  void* own_window_ = nullptr;
  std::size_t window_bytes_ = 0;
};

}  // namespace xs::runtime
