// xstage backends/nccl layer: one NCCL window per rank of a multi-rank run (see rank_windows.hpp).
#include "xs/backends/nccl/rank_windows.hpp"

#include <fmt/format.h>

#include "xs/common/error.hpp"
#include "xs/backends/nccl/nccl_alltoall.hpp"
#include "xs/backends/nccl/nccl_comm.hpp"
#include "xs/backends/nccl/nccl_plan.hpp"
#include "xs/backends/nccl/nccl_window.hpp"

namespace xs::runtime {

RankWindows::~RankWindows() = default;

std::unique_ptr<RankWindows> RankWindows::create(bench::RankComm& comm, int device, std::size_t bytes) {
  if (bytes == 0) throw input_error("windows", "a window of 0 bytes");
  // The same answer on every rank before any NCCL collective: built without NCCL, or rank 0 could not make the
  // id (its failure is broadcast, so no rank waits in a broadcast that never comes).
  if (!nccl_built()) throw input_error("--target", "nccl on several ranks: " + std::string(nccl_built_without_reason()));
  std::unique_ptr<RankWindows> out(new RankWindows);
  NcclUniqueIdBytes id{};
  std::string failure;
  if (comm.rank() == 0) {
    try {
      id = nccl_make_unique_id();
    } catch (const Error& e) {
      failure = e.what();
    }
  }
  failure = bench::broadcast_string(comm, failure);
  if (!failure.empty()) throw Error(ExitCode::kDeviceFailure, "nccl", "ncclGetUniqueId on rank 0", failure);
  comm.broadcast_bytes(id.data(), id.size());
  out->comms_ = NcclCommGroup::init_rank(id, comm.size(), comm.rank(), device);
  NcclWindowTarget::Outcome made = NcclWindowTarget::create(out->comms_, bytes);
  if (!made.target)
    throw input_error("--target", fmt::format("nccl on {} ranks: no window on rank {}: {}", comm.size(), comm.rank(),
                                              made.unavailable_reason));
  out->windows_ = std::move(made.target);
  const NcclWindowTarget::Rank& me = out->windows_->rank(0);
  out->world_rank_ = me.world_rank;
  out->device_ = me.device;
  out->peer_windows_ = me.dst;
  out->own_window_ = me.local_ptr;
  out->window_bytes_ = out->windows_->bytes_per_rank();
  for (std::size_t r = 0; r < out->peer_windows_.size(); ++r)
    if (out->peer_windows_[r] == nullptr)
      throw input_error("--target", fmt::format("nccl on {} ranks: rank {}'s window is not load/store reachable from "
                                                "rank {} (another node?); the fused stores need every window",
                                                comm.size(), r, me.world_rank));
  return out;
}

void RankWindows::alltoall(const void* send, void* recv, std::size_t bytes_per_peer, void* stream) const {
  enqueue_nccl_alltoall(comms_->member(0).comm, send, recv, bytes_per_peer, stream);
}

WindowExchange RankWindows::exchange(bench::RankComm& comm) const {
  WindowExchange ex;
  ex.world_rank = world_rank_;
  ex.peer_windows = peer_windows_;
  ex.own_window = own_window_;
  ex.window_bytes = window_bytes_;
  ex.barrier = [&comm] { comm.barrier(); };
  ex.description = describe();
  return ex;
}

std::string RankWindows::describe() const {
  return fmt::format("{} ranks' NCCL symmetric windows ({} bytes each; this rank {}, GPU {})", world_size(),
                     window_bytes_, world_rank_, device_);
}

}  // namespace xs::runtime
