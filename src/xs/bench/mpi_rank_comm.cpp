// xstage bench layer: MPI start-up and the MPI RankComm (see mpi_rank_comm.hpp). Collectives are non-blocking
// MPI calls polled with MPI_Test (the gather point to point, so rank 0 can name a missing rank), so a rank that
// never comes is a timeout.
#include "xs/bench/mpi_rank_comm.hpp"

#if defined(XS_HAVE_MPI)
#include <fmt/format.h>
#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>
#endif

namespace xs::bench {

#if !defined(XS_HAVE_MPI)
bool mpi_built() { return false; }
#else
bool mpi_built() { return true; }

namespace {

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(ExitCode::kDeviceFailure, "mpi", call, fmt::format("{} failed: {}", call, std::string(text, len)));
}

// Polls `request` until it completes or timeout_s passes (then throws: the request stays pending, and the
// caller's way out is MPI_Abort).
void wait_for(MPI_Request& request, double timeout_s, int rank, const char* collective) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    if (std::chrono::steady_clock::now() > deadline)
      throw rank_comm_error(fmt::format("rank {}", rank),
                            fmt::format("{}: timed out after {} s waiting for the other ranks (a rank failed or "
                                        "hangs; raise XS_RANK_TIMEOUT_S for longer points)", collective, timeout_s));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
}

// Polls every request until all complete or timeout_s passes; then throws naming the peers (peers[i] for
// requests[i]) that never answered, so the error says which rank failed or hangs.
void wait_all_for(std::vector<MPI_Request>& requests, const std::vector<int>& peers, double timeout_s, int rank,
                  const char* collective) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    std::string pending;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      int done = 0;  // a completed request is MPI_REQUEST_NULL, which tests as done
      check_mpi(MPI_Test(&requests[i], &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (!done) pending += fmt::format("{}{}", pending.empty() ? "" : ", ", peers[i]);
    }
    if (pending.empty()) return;
    if (std::chrono::steady_clock::now() > deadline)
      throw rank_comm_error(fmt::format("rank {}", rank),
                            fmt::format("{}: no answer from rank {} within {} s (it failed, hangs or exited; raise "
                                        "XS_RANK_TIMEOUT_S for longer points)", collective, pending, timeout_s));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
}

// Point-to-point tags of the gather (collectives never match point-to-point messages).
constexpr int kGatherSizeTag = 7101, kGatherDataTag = 7102;

class MpiRankComm final : public RankComm {
 public:
  explicit MpiRankComm(double timeout_s) : timeout_s_(timeout_s) {
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  ~MpiRankComm() override { MPI_Comm_free(&comm_); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string kind() const override { return "mpi"; }

  // A gather to rank 0 and rank 0's word back: rank 0 can name a rank that does not come (MPI_Ibarrier cannot).
  void barrier() override {
    gather_bytes_to_root("");
    char go = 1;
    broadcast_bytes(&go, 1);
  }

  // Point to point rather than MPI_Igatherv, so that rank 0 learns which ranks did not send.
  std::vector<std::string> gather_bytes_to_root(const std::string& bytes) override {
    if (bytes.size() > INT_MAX) throw input_error("gather", "more than 2 GiB from one rank");
    if (rank_ != 0) {
      std::uint64_t num_bytes = bytes.size();
      std::vector<MPI_Request> requests(2);
      check_mpi(MPI_Isend(&num_bytes, 1, MPI_UINT64_T, 0, kGatherSizeTag, comm_, &requests[0]), "MPI_Isend");
      check_mpi(MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, kGatherDataTag, comm_,
                          &requests[1]), "MPI_Isend");
      wait_all_for(requests, {0, 0}, timeout_s_, rank_, "gather");
      return {};
    }
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(size_), 0);
    std::vector<MPI_Request> requests;
    std::vector<int> peers;
    for (int r = 1; r < size_; ++r) {
      requests.emplace_back();
      peers.push_back(r);
      check_mpi(MPI_Irecv(&sizes[static_cast<std::size_t>(r)], 1, MPI_UINT64_T, r, kGatherSizeTag, comm_,
                          &requests.back()), "MPI_Irecv");
    }
    wait_all_for(requests, peers, timeout_s_, rank_, "gather");
    std::vector<std::string> out(static_cast<std::size_t>(size_));
    out[0] = bytes;
    std::int64_t total = 0;
    for (std::size_t r = 1; r < out.size(); ++r) {
      total += static_cast<std::int64_t>(sizes[r]);
      if (sizes[r] > INT_MAX || total > INT_MAX) throw input_error("gather", "more than 2 GiB in all");
      out[r].resize(sizes[r]);
      check_mpi(MPI_Irecv(out[r].data(), static_cast<int>(sizes[r]), MPI_BYTE, static_cast<int>(r), kGatherDataTag,
                          comm_, &requests[r - 1]), "MPI_Irecv");
    }
    wait_all_for(requests, peers, timeout_s_, rank_, "gather");
    return out;
  }

  void broadcast_bytes(void* data, std::size_t num_bytes) override {
    if (num_bytes > INT_MAX) throw input_error("broadcast", "more than 2 GiB");
    std::uint64_t root_num_bytes = num_bytes;  // MPI needs matching counts: agree on the size first
    MPI_Request request;
    check_mpi(MPI_Ibcast(&root_num_bytes, 1, MPI_UINT64_T, 0, comm_, &request), "MPI_Ibcast");
    wait_for(request, timeout_s_, rank_, "broadcast");
    std::string scratch;
    void* target = data;
    if (root_num_bytes != num_bytes) {  // still take part, then refuse
      scratch.resize(root_num_bytes);
      target = scratch.data();
    }
    check_mpi(MPI_Ibcast(target, static_cast<int>(root_num_bytes), MPI_BYTE, 0, comm_, &request), "MPI_Ibcast");
    wait_for(request, timeout_s_, rank_, "broadcast");
    if (root_num_bytes != num_bytes)
      throw rank_comm_error(fmt::format("rank {}", rank_), fmt::format("broadcast of {} bytes, rank 0 sent {}: every "
                                                                       "rank must pass the same size", num_bytes,
                                                                       root_num_bytes));
  }

 private:
  double timeout_s_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

}  // namespace

struct MpiSession::Impl {
  MPI_Comm exit_comm = MPI_COMM_NULL;  // made at start-up: a dup later would itself wait for a stuck rank
};

MpiSession::MpiSession(int* argc, char*** argv) : impl_(std::make_unique<Impl>()) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) throw input_error("MPI", "already initialized: one MpiSession per process");
  int provided = 0;
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  // Collectives return errors instead of aborting, so they become xs::Error with a message.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &impl_->exit_comm), "MPI_Comm_dup");
}

MpiSession::~MpiSession() {
  if (impl_->exit_comm != MPI_COMM_NULL) MPI_Comm_free(&impl_->exit_comm);
  MPI_Finalize();
}

std::unique_ptr<RankComm> MpiSession::make_comm(double timeout_s) { return std::make_unique<MpiRankComm>(timeout_s); }

bool MpiSession::exit_barrier(double timeout_s) {
  MPI_Request request;
  check_mpi(MPI_Ibarrier(impl_->exit_comm, &request), "MPI_Ibarrier");
  try {
    wait_for(request, timeout_s, 0, "exit barrier");
  } catch (const Error&) {
    return false;
  }
  return true;
}

void MpiSession::abort_all(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; satisfies [[noreturn]] if an implementation does
}
#endif

}  // namespace xs::bench
