// xstage bench layer: how the ranks of one run talk on the host (rank, size, barrier, gather to rank 0,
// broadcast from rank 0), with a world of one, ranks as threads of one process (one thread per GPU, as
// nccl-tests -g) and, in bench/mpi_rank_comm.hpp, one process per rank under MPI. Plain C++; no NCCL here.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "xs/common/error.hpp"

namespace xs::bench {

// How long a rank waits in one collective for the others before giving up (a rank that died or hangs must
// not hang the rest forever). Points can take minutes, so it is generous; XS_RANK_TIMEOUT_S overrides it.
inline constexpr double kDefaultRankTimeoutS = 1800;
double rank_timeout_s_from_env();  // XS_RANK_TIMEOUT_S if set (> 0), else kDefaultRankTimeoutS

// A collective that could not complete: a timeout, or another rank of the group gave up. Exit 3 (it is a
// failure of the run, not of the input).
Error rank_comm_error(const std::string& what, const std::string& message);

// Every rank of a run calls the same collectives in the same order (as in MPI). Collectives throw
// rank_comm_error on timeout or when the group was aborted; they never return partial data.
class RankComm {
 public:
  virtual ~RankComm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string kind() const = 0;  // "single" | "threads" | "mpi": the launch model, for meta
  virtual void barrier() = 0;
  // Rank 0 gets every rank's bytes in rank order (sizes may differ); the other ranks get an empty vector.
  virtual std::vector<std::string> gather_bytes_to_root(const std::string& bytes) = 0;
  // Copies rank 0's `num_bytes` at `data` to `data` on every rank; every rank passes the same num_bytes.
  // The NCCL bootstrap is broadcast_bytes(&unique_id, sizeof(ncclUniqueId)) after rank 0's ncclGetUniqueId.
  virtual void broadcast_bytes(void* data, std::size_t num_bytes) = 0;
};

// Rank 0's text on every rank, of any length (its size first, then its bytes). Other ranks' `text` is ignored.
std::string broadcast_string(RankComm& comm, const std::string& text);

// A world of one: collectives return at once (gather gives {bytes}, broadcast leaves data as it is).
class SingleRankComm final : public RankComm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string kind() const override { return "single"; }
  void barrier() override {}
  std::vector<std::string> gather_bytes_to_root(const std::string& bytes) override { return {bytes}; }
  void broadcast_bytes(void*, std::size_t) override {}
};

// Ranks as threads of one process: comm(r) is rank r's end; each thread uses only its own.
class ThreadRankGroup {
 public:
  explicit ThreadRankGroup(int num_ranks, double timeout_s = kDefaultRankTimeoutS);
  ~ThreadRankGroup();
  ThreadRankGroup(const ThreadRankGroup&) = delete;
  ThreadRankGroup& operator=(const ThreadRankGroup&) = delete;
  int size() const;
  RankComm& comm(int rank);
  // Rank `rank` gave up (`why`): every collective waiting now or called later throws rank_comm_error naming
  // it, so the other threads end instead of waiting for a rank that will not come.
  void abort(int rank, const std::string& why);

  struct State;  // shared by the ranks' ends (rank_comm.cpp)

 private:
  std::shared_ptr<State> state_;
  std::vector<std::unique_ptr<RankComm>> ends_;
};

// The one-process-drives-all-local-GPUs launch model: runs body(comm) on num_ranks threads (rank r on thread
// r) and returns each rank's result. When a rank throws, the group is aborted (the others' collectives throw)
// and, after every thread ended, the first rank's own error is rethrown (not an "aborted" error it caused
// elsewhere).
std::vector<int> run_thread_ranks(int num_ranks, const std::function<int(RankComm&)>& body,
                                  double timeout_s = kDefaultRankTimeoutS);

}  // namespace xs::bench
