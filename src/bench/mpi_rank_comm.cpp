// xstage bench layer: MPI start-up and the MPI RankComm (see mpi_rank_comm.hpp). Collectives are the
// non-blocking MPI_Ibarrier/Igather(v)/Ibcast polled with MPI_Test, so a rank that never comes is a timeout.
#include "bench/mpi_rank_comm.hpp"

#if defined(XS_HAVE_MPI)
#include <fmt/format.h>
#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <thread>
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

  void barrier() override {
    MPI_Request request;
    check_mpi(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
    wait_for(request, timeout_s_, rank_, "barrier");
  }

  std::vector<std::string> gather_bytes_to_root(const std::string& bytes) override {
    if (bytes.size() > INT_MAX) throw input_error("gather", "more than 2 GiB from one rank");
    int my_count = static_cast<int>(bytes.size());
    std::vector<int> counts(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
    MPI_Request request;
    check_mpi(MPI_Igather(&my_count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_, &request), "MPI_Igather");
    wait_for(request, timeout_s_, rank_, "gather");
    std::vector<int> displacements(counts.size());
    std::int64_t total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      displacements[r] = static_cast<int>(total);
      total += counts[r];
    }
    if (total > INT_MAX) throw input_error("gather", "more than 2 GiB in all");
    std::string all(static_cast<std::size_t>(total), '\0');
    check_mpi(MPI_Igatherv(bytes.data(), my_count, MPI_BYTE, all.data(), counts.data(), displacements.data(),
                           MPI_BYTE, 0, comm_, &request), "MPI_Igatherv");
    wait_for(request, timeout_s_, rank_, "gather");
    std::vector<std::string> out;
    for (std::size_t r = 0; r < counts.size(); ++r) out.push_back(all.substr(displacements[r], counts[r]));
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
