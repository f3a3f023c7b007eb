// xstage bench layer: the world-of-one and ranks-as-threads communicators (see rank_comm.hpp). The thread
// collectives are a generation barrier under one mutex, with per-rank slots for gather and one for broadcast.
#include "xs/bench/rank_comm.hpp"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

namespace xs::bench {

double rank_timeout_s_from_env() {
  const char* text = std::getenv("XS_RANK_TIMEOUT_S");
  if (text == nullptr || *text == '\0') return kDefaultRankTimeoutS;
  char* end = nullptr;
  const double s = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(s > 0))
    throw input_error("XS_RANK_TIMEOUT_S", fmt::format("\"{}\" is not a positive number of seconds", text));
  return s;
}

Error rank_comm_error(const std::string& what, const std::string& message) {
  return Error(ExitCode::kDeviceFailure, "rank", what, what + ": " + message);
}

std::string broadcast_string(RankComm& comm, const std::string& text) {
  std::uint64_t num_bytes = comm.rank() == 0 ? text.size() : 0;
  comm.broadcast_bytes(&num_bytes, sizeof num_bytes);
  std::string out = comm.rank() == 0 ? text : std::string(num_bytes, '\0');
  if (num_bytes > 0) comm.broadcast_bytes(out.data(), out.size());
  return out;
}

struct ThreadRankGroup::State {
  int num_ranks = 1;
  double timeout_s = kDefaultRankTimeoutS;
  std::mutex mutex;
  std::condition_variable arrived_cv;
  int num_arrived = 0;
  std::uint64_t generation = 0;
  std::vector<std::string> slots;  // gather: one per rank
  std::string root_bytes;          // broadcast: rank 0's
  bool aborted = false;
  std::string abort_reason;

  // Everyone arrives or nobody leaves; a timeout or an abort throws (and a timeout aborts the group: its
  // arrival count no longer matches any collective).
  void wait_for_all(int rank, const char* collective) {
    std::unique_lock lock(mutex);
    if (aborted) throw rank_comm_error(fmt::format("rank {}", rank), fmt::format("{}: {}", collective, abort_reason));
    const std::uint64_t my_generation = generation;
    if (++num_arrived == num_ranks) {
      num_arrived = 0;
      ++generation;
      arrived_cv.notify_all();
      return;
    }
    const auto limit = std::chrono::duration<double>(timeout_s);
    const bool done = arrived_cv.wait_for(lock, limit, [&] { return generation != my_generation || aborted; });
    if (generation != my_generation) return;
    if (!done) {
      aborted = true;
      abort_reason = fmt::format("rank {} timed out after {} s in {} ({} of {} ranks arrived)", rank, timeout_s,
                                 collective, num_arrived, num_ranks);
      arrived_cv.notify_all();
    }
    throw rank_comm_error(fmt::format("rank {}", rank), fmt::format("{}: {}", collective, abort_reason));
  }
};

namespace {

class ThreadRankComm final : public RankComm {
 public:
  ThreadRankComm(std::shared_ptr<ThreadRankGroup::State> state, int rank) : state_(std::move(state)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return state_->num_ranks; }
  std::string kind() const override { return "threads"; }
  void barrier() override { state_->wait_for_all(rank_, "barrier"); }

  std::vector<std::string> gather_bytes_to_root(const std::string& bytes) override {
    {
      std::lock_guard lock(state_->mutex);
      state_->slots[static_cast<std::size_t>(rank_)] = bytes;
    }
    state_->wait_for_all(rank_, "gather");
    std::vector<std::string> out;
    if (rank_ == 0) {
      std::lock_guard lock(state_->mutex);
      out = state_->slots;
    }
    state_->wait_for_all(rank_, "gather");  // slots stay until rank 0 copied them
    return out;
  }

  void broadcast_bytes(void* data, std::size_t num_bytes) override {
    if (rank_ == 0) {
      std::lock_guard lock(state_->mutex);
      state_->root_bytes.assign(static_cast<const char*>(data), num_bytes);
    }
    state_->wait_for_all(rank_, "broadcast");
    std::size_t root_num_bytes = 0;
    if (rank_ != 0) {
      std::lock_guard lock(state_->mutex);
      root_num_bytes = state_->root_bytes.size();
      if (root_num_bytes == num_bytes && num_bytes > 0) std::memcpy(data, state_->root_bytes.data(), num_bytes);
    }
    state_->wait_for_all(rank_, "broadcast");
    if (rank_ != 0 && root_num_bytes != num_bytes)
      throw rank_comm_error(fmt::format("rank {}", rank_), fmt::format("broadcast of {} bytes, rank 0 sent {}: every "
                                                                       "rank must pass the same size", num_bytes,
                                                                       root_num_bytes));
  }

 private:
  std::shared_ptr<ThreadRankGroup::State> state_;
  int rank_;
};

}  // namespace

ThreadRankGroup::ThreadRankGroup(int num_ranks, double timeout_s) : state_(std::make_shared<State>()) {
  if (num_ranks < 1) throw input_error("ranks", fmt::format("{} ranks: need at least 1", num_ranks));
  if (!(timeout_s > 0)) throw input_error("timeout_s", "must be positive");
  state_->num_ranks = num_ranks;
  state_->timeout_s = timeout_s;
  state_->slots.resize(static_cast<std::size_t>(num_ranks));
  for (int r = 0; r < num_ranks; ++r) ends_.push_back(std::make_unique<ThreadRankComm>(state_, r));
}

ThreadRankGroup::~ThreadRankGroup() = default;

int ThreadRankGroup::size() const { return state_->num_ranks; }

RankComm& ThreadRankGroup::comm(int rank) {
  if (rank < 0 || rank >= state_->num_ranks)
    throw input_error("rank", fmt::format("{} is not in [0, {})", rank, state_->num_ranks));
  return *ends_[static_cast<std::size_t>(rank)];
}

void ThreadRankGroup::abort(int rank, const std::string& why) {
  std::lock_guard lock(state_->mutex);
  if (state_->aborted) return;  // the first reason is the one worth reporting
  state_->aborted = true;
  state_->abort_reason = fmt::format("rank {} gave up: {}", rank, why);
  state_->arrived_cv.notify_all();
}

std::vector<int> run_thread_ranks(int num_ranks, const std::function<int(RankComm&)>& body, double timeout_s) {
  ThreadRankGroup group(num_ranks, timeout_s);
  std::vector<int> codes(static_cast<std::size_t>(num_ranks), 0);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(num_ranks));
  std::vector<bool> caused_by_abort(static_cast<std::size_t>(num_ranks), false);
  std::vector<std::thread> threads;
  for (int r = 0; r < num_ranks; ++r) {
    threads.emplace_back([&, r] {
      const auto i = static_cast<std::size_t>(r);
      try {
        codes[i] = body(group.comm(r));
      } catch (const Error& e) {
        errors[i] = std::current_exception();
        caused_by_abort[i] = e.domain() == "rank";
        group.abort(r, e.what());
      } catch (const std::exception& e) {
        errors[i] = std::current_exception();
        group.abort(r, e.what());
      } catch (...) {
        errors[i] = std::current_exception();
        group.abort(r, "unknown exception");
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int pass = 0; pass < 2; ++pass)  // a rank's own error first, then a communication error
    for (std::size_t i = 0; i < errors.size(); ++i)
      if (errors[i] && (pass == 1 || !caused_by_abort[i])) std::rethrow_exception(errors[i]);
  return codes;
}

}  // namespace xs::bench
