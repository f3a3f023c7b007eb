// xstage attention layer (CUDA): the multi-rank fa_a2a exchange over NCCL windows (see fa_exchange.hpp).
#include "attention/fa_exchange.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/nccl_alltoall.hpp"
#include "runtime/nccl_comm.hpp"
#include "runtime/nccl_window.hpp"

namespace xs::attention {

FaNcclExchange::~FaNcclExchange() = default;

std::unique_ptr<FaNcclExchange> FaNcclExchange::create(bench::RankComm& comm, int device, std::size_t window_bytes) {
  if (window_bytes == 0) throw input_error("exchange", "a receive window of 0 bytes");
  std::unique_ptr<FaNcclExchange> out(new FaNcclExchange);
  runtime::NcclUniqueIdBytes id{};
  if (comm.rank() == 0) id = runtime::nccl_make_unique_id();
  comm.broadcast_bytes(id.data(), id.size());
  out->comms_ = runtime::NcclCommGroup::init_rank(id, comm.size(), comm.rank(), device);
  runtime::NcclWindowTarget::Outcome made = runtime::NcclWindowTarget::create(out->comms_, window_bytes);
  if (!made.target)
    throw input_error("--target", fmt::format("nccl on {} ranks: no receive window on rank {}: {}", comm.size(),
                                              comm.rank(), made.unavailable_reason));
  out->windows_ = std::move(made.target);
  const runtime::NcclWindowTarget::Rank& me = out->windows_->rank(0);
  auto ex = std::make_shared<FaExchange>();
  ex->world_rank = me.world_rank;
  ex->peer_windows = me.dst;
  ex->own_window = me.local_ptr;
  ex->window_bytes = out->windows_->bytes_per_rank();
  ex->barrier = [&comm] { comm.barrier(); };  // the run's rank communicator outlives the exchange
  ncclComm* const nccl = out->comms_->member(0).comm;
  ex->alltoall = [nccl](const void* send, void* recv, std::size_t bytes_per_peer, void* stream) {
    runtime::enqueue_nccl_alltoall(nccl, send, recv, bytes_per_peer, stream);
  };
  ex->description = fmt::format("an All-to-All over {} ranks' NCCL symmetric windows ({} bytes each; this rank {}, "
                                "GPU {}; Serial and A2A-only by ncclAlltoAll)",
                                comm.size(), ex->window_bytes, me.world_rank, me.device);
  out->exchange_ = std::move(ex);
  return out;
}

}  // namespace xs::attention
