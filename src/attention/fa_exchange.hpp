// xstage attention layer (CUDA): the multi-rank fa_a2a exchange over NCCL symmetric windows (issue 14). Every
// rank of the run makes one communicator (ncclCommInitRank with a unique id from rank 0, for both launch
// models: threads of one process or one process per GPU) and one window of P x the largest point's slice
// bytes; a point's FaExchange (fa_runner.hpp) then stores its fused output into every rank's window at this
// sender's block, runs Serial / A2A-only with ncclAlltoAll into its own window, and meets the other ranks
// at each replay. Not run on several GPUs yet (docs/multi-gpu.md).
#pragma once
#include <cstddef>
#include <memory>

#include "attention/fa_runner.hpp"
#include "bench/rank_comm.hpp"

namespace xs::runtime {
class NcclCommGroup;
class NcclWindowTarget;
}  // namespace xs::runtime

namespace xs::attention {

class FaNcclExchange {
 public:
  // Collective over `comm`: every rank calls it with the same window_bytes (>= P x the largest slice), on the
  // GPU `device` it drives. Throws input_error("--target") with NCCL's reason where a window cannot be made
  // (NCCL built without, no symmetric memory, a rank outside the LSA team), Error "nccl" on an NCCL failure.
  static std::unique_ptr<FaNcclExchange> create(bench::RankComm& comm, int device, std::size_t window_bytes);
  ~FaNcclExchange();
  FaNcclExchange(const FaNcclExchange&) = delete;
  FaNcclExchange& operator=(const FaNcclExchange&) = delete;

  std::shared_ptr<const FaExchange> exchange() const { return exchange_; }

 private:
  FaNcclExchange() = default;
  std::shared_ptr<runtime::NcclCommGroup> comms_;
  std::unique_ptr<runtime::NcclWindowTarget> windows_;  // destroyed before comms_ (declared after it)
  std::shared_ptr<FaExchange> exchange_;
};

}  // namespace xs::attention
