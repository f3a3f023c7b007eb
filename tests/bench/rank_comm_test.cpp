// Tests for bench/rank_comm and bench/rank_agree: the world of one, ranks as threads (barrier, gather,
// broadcast with 2-4 threads), the timeout and abort that keep a failed rank from hanging the others, and
// the agreement that turns one rank's error into the same error on every rank.
#include "xs/bench/rank_comm.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "xs/bench/rank_agree.hpp"

namespace xs::bench {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SingleRankComm, IsAWorldOfOne) {
  SingleRankComm one;
  EXPECT_EQ(one.rank(), 0);
  EXPECT_EQ(one.size(), 1);
  one.barrier();
  EXPECT_EQ(one.gather_bytes_to_root("abc"), (std::vector<std::string>{"abc"}));
  std::uint64_t id = 42;
  one.broadcast_bytes(&id, sizeof id);
  EXPECT_EQ(id, 42u);
  EXPECT_EQ(broadcast_string(one, "text"), "text");
}

class ThreadRanks : public ::testing::TestWithParam<int> {};

TEST_P(ThreadRanks, BarrierHoldsEveryRankUntilAllArrive) {
  const int n = GetParam();
  std::atomic<int> arrived{0};
  std::vector<int> seen_after_barrier(static_cast<std::size_t>(n), -1);
  run_thread_ranks(n, [&](RankComm& comm) {
    for (int round = 0; round < 3; ++round) {  // reusable: the count restarts each round
      arrived.fetch_add(1);
      comm.barrier();
      if (round == 0) seen_after_barrier[static_cast<std::size_t>(comm.rank())] = arrived.load();
      comm.barrier();
    }
    return 0;
  });
  for (int seen : seen_after_barrier) EXPECT_GE(seen, n) << "a rank left the barrier before every rank arrived";
}

TEST_P(ThreadRanks, GatherGivesRankZeroEveryRanksBytesInOrder) {
  const int n = GetParam();
  std::vector<std::vector<std::string>> got(static_cast<std::size_t>(n));
  run_thread_ranks(n, [&](RankComm& comm) {
    EXPECT_EQ(comm.size(), n);
    EXPECT_EQ(comm.kind(), "threads");
    // Different sizes per rank, and two gathers back to back (the second must not see the first's slots).
    got[static_cast<std::size_t>(comm.rank())] = comm.gather_bytes_to_root(std::string(comm.rank() + 1, 'a' + comm.rank()));
    const auto second = comm.gather_bytes_to_root("r" + std::to_string(comm.rank()));
    if (comm.rank() == 0) {
      EXPECT_EQ(second.size(), static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) EXPECT_EQ(second[static_cast<std::size_t>(r)], "r" + std::to_string(r));
    }
    return 0;
  });
  ASSERT_EQ(got[0].size(), static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) EXPECT_EQ(got[0][static_cast<std::size_t>(r)], std::string(r + 1, 'a' + r));
  for (int r = 1; r < n; ++r) EXPECT_TRUE(got[static_cast<std::size_t>(r)].empty()) << "rank " << r;
}

TEST_P(ThreadRanks, BroadcastCopiesRankZerosBytesToEveryRank) {
  const int n = GetParam();
  std::vector<std::uint64_t> ids(static_cast<std::size_t>(n));
  std::vector<std::string> texts(static_cast<std::size_t>(n));
  run_thread_ranks(n, [&](RankComm& comm) {
    std::uint64_t id = comm.rank() == 0 ? 0x1234'5678'9abc'def0ull : comm.rank();  // as an ncclUniqueId would be
    comm.broadcast_bytes(&id, sizeof id);
    ids[static_cast<std::size_t>(comm.rank())] = id;
    texts[static_cast<std::size_t>(comm.rank())] =
        broadcast_string(comm, comm.rank() == 0 ? std::string(1000, 'x') : "ignored");
    return 0;
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(ids[static_cast<std::size_t>(r)], 0x1234'5678'9abc'def0ull) << "rank " << r;
    EXPECT_EQ(texts[static_cast<std::size_t>(r)], std::string(1000, 'x')) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(TwoToFour, ThreadRanks, ::testing::Values(2, 3, 4));

TEST(ThreadRankComm, BroadcastOfAnotherSizeIsRefused) {
  const std::string message = error_of([] {
    run_thread_ranks(2, [](RankComm& comm) {
      std::uint64_t big = 0;
      std::uint32_t small = 0;
      if (comm.rank() == 0) comm.broadcast_bytes(&big, sizeof big);
      else comm.broadcast_bytes(&small, sizeof small);
      return 0;
    });
  });
  EXPECT_NE(message.find("same size"), std::string::npos) << message;
}

TEST(ThreadRankComm, ARankThatNeverComesIsATimeoutNotAHang) {
  ThreadRankGroup group(2, /*timeout_s=*/0.2);
  const std::string message = error_of([&] { group.comm(0).barrier(); });  // rank 1 never calls
  EXPECT_NE(message.find("timed out"), std::string::npos) << message;
  EXPECT_NE(message.find("1 of 2 ranks arrived"), std::string::npos) << message;
  // The group is spent: a later collective fails at once instead of pairing with a stale arrival.
  EXPECT_NE(error_of([&] { group.comm(1).barrier(); }).find("timed out"), std::string::npos);
}

TEST(ThreadRankComm, AThrowingRankAbortsTheOthersAndItsOwnErrorIsRethrown) {
  // Rank 1 fails before the collective; ranks 0 and 2 wait in it. The timeout is long: only the abort can end
  // the wait within the test's life.
  std::mutex m;
  std::vector<std::string> others;
  const std::string message = error_of([&] {
    run_thread_ranks(3, [&](RankComm& comm) -> int {
      if (comm.rank() == 1) throw input_error("--P", "rank 1 refuses");
      try {
        comm.barrier();
      } catch (const Error& e) {
        std::lock_guard lock(m);
        others.push_back(e.what());
        throw;
      }
      return 0;
    }, /*timeout_s=*/600);
  });
  EXPECT_EQ(message, "--P: rank 1 refuses");
  ASSERT_EQ(others.size(), 2u);
  for (const auto& o : others) EXPECT_NE(o.find("rank 1 gave up: --P: rank 1 refuses"), std::string::npos) << o;
}

TEST(Agree, OneRankPropagatesTheOriginalException) {
  SingleRankComm one;
  EXPECT_THROW(agree(one, [] { throw no_gpu_error("none"); }), Error);
  try {
    agree(one, [] { throw no_gpu_error("none"); });
  } catch (const RankAgreedError&) {
    FAIL() << "one rank must see the step's own exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kNoGpu);
  }
}

TEST(Agree, AFailureOnOneRankBecomesTheSameErrorOnEveryRank) {
  std::mutex m;
  std::vector<std::pair<int, std::string>> seen;  // (code, message) per rank
  std::vector<int> failed_ranks;
  EXPECT_THROW(run_thread_ranks(3, [&](RankComm& comm) -> int {
    try {
      agree(comm, [&] {
        if (comm.rank() == 2) throw input_error("heads", "P=3 does not divide 8");
        if (comm.rank() == 1) throw std::runtime_error("device lost");  // not an xs::Error: exit 3
      });
    } catch (const RankAgreedError& e) {
      std::lock_guard lock(m);
      seen.emplace_back(static_cast<int>(e.code()), e.what());
      failed_ranks.push_back(e.failed_rank());
      throw;
    }
    return 0;
  }), RankAgreedError);
  ASSERT_EQ(seen.size(), 3u) << "every rank throws";
  for (const auto& [code, message] : seen) {
    EXPECT_EQ(code, 3) << "the lowest failing rank (1, a std::exception: exit 3) is the one reported";
    EXPECT_EQ(message.rfind("rank 1: ", 0), 0u) << message;
  }
  for (int r : failed_ranks) EXPECT_EQ(r, 1);
}

TEST(Agree, TheSameRefusalOnEveryRankIsReportedWithoutARank) {
  std::mutex m;
  std::vector<std::string> seen;
  EXPECT_THROW(run_thread_ranks(3, [&](RankComm& comm) -> int {
    try {
      agree(comm, [] { throw input_error("suite", "unknown suite 'x'"); });
    } catch (const RankAgreedError& e) {
      std::lock_guard lock(m);
      seen.push_back(e.what());
      throw;
    }
    return 0;
  }), RankAgreedError);
  ASSERT_EQ(seen.size(), 3u);
  for (const auto& s : seen) EXPECT_EQ(s, "suite: unknown suite 'x'");
}

TEST(Agree, NoFailureLetsEveryRankGoOn) {
  std::atomic<int> done{0};
  run_thread_ranks(4, [&](RankComm& comm) {
    agree(comm, [] {});
    done.fetch_add(1);
    return 0;
  });
  EXPECT_EQ(done.load(), 4);
}

TEST(GatherCombineBroadcast, RankZeroCombinesAndEveryRankGetsTheResult) {
  std::vector<nlohmann::json> results(3);
  run_thread_ranks(3, [&](RankComm& comm) {
    results[static_cast<std::size_t>(comm.rank())] = gather_combine_broadcast(
        comm, [&] { return nlohmann::json(10 * (comm.rank() + 1)); },
        [](std::vector<nlohmann::json> v) {
          int sum = 0;
          for (const auto& x : v) sum += x.get<int>();
          return nlohmann::json{{"sum", sum}};
        });
    return 0;
  });
  for (const auto& r : results) EXPECT_EQ(r["sum"], 60);
}

TEST(GatherCombineBroadcast, ACombineFailureOnRankZeroFailsEveryRank) {
  std::atomic<int> agreed{0};
  EXPECT_THROW(run_thread_ranks(2, [&](RankComm& comm) -> int {
    try {
      gather_combine_broadcast(comm, [] { return nlohmann::json(1); },
                               [](std::vector<nlohmann::json>) -> nlohmann::json {
                                 throw input_error("rank 1", "ragged input");
                               });
    } catch (const RankAgreedError& e) {
      EXPECT_NE(std::string(e.what()).find("rank 0: rank 1: ragged input"), std::string::npos) << e.what();
      agreed.fetch_add(1);
      throw;
    }
    return 0;
  }), RankAgreedError);
  EXPECT_EQ(agreed.load(), 2);
}

}  // namespace
}  // namespace xs::bench
