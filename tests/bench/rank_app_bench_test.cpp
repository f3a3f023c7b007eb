// Tests for the rank-aware application loop (bench/app_bench.hpp over bench/rank_comm.hpp) with a fake point
// callback on 2-3 thread ranks: only rank 0 writes, the merged point is per trial the slowest rank then the
// median, every rank gets the same seed, a throw on one rank fails every rank cleanly, resume and interrupt.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "xs/bench/app_bench.hpp"
#include "xs/bench/rank_agree.hpp"
#include "xs/bench/runner.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/result_file.hpp"

namespace xs::bench {
namespace {
using nlohmann::json;

class RankAppBenchTest : public ::testing::Test {
 protected:
  std::filesystem::path dir_ = std::filesystem::temp_directory_path() /
                               ("xs_rank_app_bench_" + std::to_string(::getpid()) + "_" +
                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { std::filesystem::create_directories(dir_ / "others"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string out() const { return (dir_ / "result.json").string(); }

  // Rank 0 writes to out(); the other ranks are given paths in others/, which must stay empty.
  AppBenchPlan plan(int n, int rank) const {
    AppBenchPlan p;
    p.suite = "fake";
    for (int i = 0; i < n; ++i)
      p.points.push_back({"fake.host", "host", json{{"M", 1024 * (i + 1)}, {"verify", true}},
                          "M=" + std::to_string(1024 * (i + 1))});
    p.run_identity = {{"model", ""}};
    p.identity.backend = "gpu";
    p.identity.git_sha = "abc";
    p.output_path = rank == 0 ? out() : (dir_ / "others" / ("r" + std::to_string(rank) + ".json")).string();
    p.progress = false;
    p.describe_rank = [rank] { return json{{"device", "Fake GPU"}, {"uuid", "GPU-fake-" + std::to_string(rank)}}; };
    return p;
  }
};

// Rank r's times for trial t of point i: trial t's slowest rank is t % num_ranks, so the merged samples take
// each trial from a different rank. fa = (1 + i) us (+1 us on the slow rank); fused = fa + (r + 1) ns.
report::AppPoint rank_point(const AppPointSpec& spec, std::size_t i, int rank, int num_ranks) {
  report::AppPoint p;
  p.id = spec.id;
  p.suite = "fake";
  p.axes = spec.axes;
  std::vector<double> fa, fused;
  for (int t = 0; t < 5; ++t) {
    const double fa_s = (1.0 + static_cast<double>(i)) * 1e-6 + (t % num_ranks == rank ? 1e-6 * (t + 1) : 0.0);
    fa.push_back(fa_s);
    fused.push_back(fa_s + (rank + 1) * 1e-9);
  }
  p.variants["fa"] = summarize(fa);
  p.variants["fused"] = summarize(fused);
  p.paired["fused_minus_fa"] = paired_difference(fused, fa);
  p.verification.checked = true;
  p.verification.passed = true;
  p.verification.values = {{"rank", rank}};
  return p;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_F(RankAppBenchTest, RankZeroAloneWritesTheMergedPoints) {
  constexpr int kRanks = 3, kPoints = 2;
  std::vector<int> codes(kRanks, -1);
  std::vector<std::vector<report::AppPoint>> points_by_rank(kRanks);
  run_thread_ranks(kRanks, [&](RankComm& comm) {
    const AppBenchPlan p = plan(kPoints, comm.rank());
    const AppBenchOutcome outcome = run_app_points(p, comm, [&](std::size_t i, const AppPointSpec& spec,
                                                                const PointContext& c) {
      return rank_point(spec, i, c.comm.rank(), c.comm.size());
    });
    points_by_rank[static_cast<std::size_t>(comm.rank())] = outcome.points;
    EXPECT_EQ(outcome.writes_output, comm.rank() == 0);
    EXPECT_EQ(outcome.journal != nullptr, comm.rank() == 0);
    codes[static_cast<std::size_t>(comm.rank())] = write_app_result(p, outcome, {});
    return 0;
  }, 60);
  EXPECT_EQ(codes, (std::vector<int>{0, 0, 0}));
  EXPECT_TRUE(std::filesystem::is_empty(dir_ / "others")) << "ranks other than 0 wrote something";
  EXPECT_EQ(lines_of(report::journal_path_for(out())).size(), 1u + kPoints);

  const report::ResultFile file = report::read_result_file(out());
  ASSERT_EQ(file.app_points.size(), static_cast<std::size_t>(kPoints));
  // Point 0, fa: trial t's slowest rank adds (t + 1) us to 1 us -> {2, 3, 4, 5, 6} us; median 4 us.
  const Summary& fa = file.app_points[0].variants.at("fa");
  ASSERT_EQ(fa.samples.size(), 5u);
  for (int t = 0; t < 5; ++t) EXPECT_NEAR(fa.samples[t], (2.0 + t) * 1e-6, 1e-15) << "trial " << t;
  EXPECT_NEAR(fa.median, 4e-6, 1e-15);
  // Not the median of any one rank: rank 0's own fa median is 1 us (slow only in trials 0 and 3).
  EXPECT_NEAR(points_by_rank[1][0].variants.at("fa").median, 4e-6, 1e-15) << "every rank holds the merged point";
  // fused per trial: max over ranks of fa + (r + 1) ns. Trial 0: the slow rank is 0 -> 2 us + 1 ns.
  const Summary& fused = file.app_points[0].variants.at("fused");
  EXPECT_NEAR(fused.samples[0], 2e-6 + 1e-9, 1e-15);
  // The paired difference is of the merged per-trial maxima, not a max of differences.
  EXPECT_NEAR(file.app_points[0].paired.at("fused_minus_fa").samples[0], 1e-9, 1e-15);
  EXPECT_EQ(file.app_points[0].verification.values["by_rank"].size(), 3u);

  const json raw = report::read_json_file(out());
  ASSERT_EQ(raw["meta"]["ranks"].size(), 3u);
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(raw["meta"]["ranks"][r]["rank"], r);
    EXPECT_EQ(raw["meta"]["ranks"][r]["uuid"], "GPU-fake-" + std::to_string(r));
  }
  EXPECT_EQ(raw["meta"]["launch"]["model"], "threads");
  EXPECT_EQ(raw["meta"]["launch"]["num_ranks"], 3);
  EXPECT_EQ(raw["points"][0]["extra"]["ranks"]["num_ranks"], 3);
}

TEST_F(RankAppBenchTest, EveryRankGetsTheSameSeedPerPointAndStartsTogether) {
  constexpr int kRanks = 3, kPoints = 3;
  std::mutex m;
  std::vector<std::vector<std::uint64_t>> seeds(kPoints);
  std::atomic<int> finished[kPoints] = {};
  std::atomic<int> early_starts{0};
  run_thread_ranks(kRanks, [&](RankComm& comm) {
    const AppBenchPlan p = plan(kPoints, comm.rank());
    const AppBenchOutcome outcome = run_app_points(p, comm, [&](std::size_t i, const AppPointSpec& spec,
                                                                const PointContext& c) {
      if (i > 0 && finished[i - 1].load() != kRanks) early_starts.fetch_add(1);
      {
        std::lock_guard lock(m);
        seeds[i].push_back(c.seed);
      }
      finished[i].fetch_add(1);
      return rank_point(spec, i, c.comm.rank(), c.comm.size());
    });
    write_app_result(p, outcome, {});
    return 0;
  }, 60);
  EXPECT_EQ(early_starts.load(), 0) << "a rank started a point before every rank had finished the previous one";
  for (int i = 0; i < kPoints; ++i) {
    ASSERT_EQ(seeds[i].size(), static_cast<std::size_t>(kRanks));
    EXPECT_NE(seeds[i][0], 0u);
    for (auto s : seeds[i]) EXPECT_EQ(s, seeds[i][0]) << "point " << i;
  }
  EXPECT_NE(seeds[0][0], seeds[1][0]) << "each point draws its own seed";
}

TEST_F(RankAppBenchTest, AThrowOnOneRankFailsEveryRankCleanlyThenResumeRunsTheRest) {
  constexpr int kRanks = 3, kPoints = 3;
  std::mutex m;
  std::vector<std::string> messages;
  EXPECT_THROW(run_thread_ranks(kRanks, [&](RankComm& comm) -> int {
    const AppBenchPlan p = plan(kPoints, comm.rank());
    try {
      run_app_points(p, comm, [&](std::size_t i, const AppPointSpec& spec, const PointContext& c) {
        if (i == 1 && c.comm.rank() == 2) throw Error(ExitCode::kDeviceFailure, "cuda", "", "illegal address");
        return rank_point(spec, i, c.comm.rank(), c.comm.size());
      });
    } catch (const RankAgreedError& e) {
      std::lock_guard lock(m);
      messages.push_back(e.what());
      EXPECT_EQ(e.code(), ExitCode::kDeviceFailure);
      throw;
    }
    return 0;
  }, /*timeout_s=*/600), RankAgreedError);  // a hang would need the long timeout; the agreement ends it at once
  ASSERT_EQ(messages.size(), static_cast<std::size_t>(kRanks)) << "every rank fails, none waits";
  for (const auto& msg : messages) EXPECT_EQ(msg, "rank 2: illegal address");
  EXPECT_FALSE(std::filesystem::exists(out()));
  EXPECT_EQ(lines_of(report::journal_path_for(out())).size(), 2u) << "header + the point finished before";

  std::atomic<int> calls{0};
  std::vector<std::size_t> resumed(kRanks);
  run_thread_ranks(kRanks, [&](RankComm& comm) {
    AppBenchPlan p = plan(kPoints, comm.rank());
    p.resume = true;
    const AppBenchOutcome outcome = run_app_points(p, comm, [&](std::size_t i, const AppPointSpec& spec,
                                                                const PointContext& c) {
      calls.fetch_add(1);
      return rank_point(spec, i, c.comm.rank(), c.comm.size());
    });
    resumed[static_cast<std::size_t>(comm.rank())] = outcome.num_resumed;
    EXPECT_EQ(outcome.points.size(), static_cast<std::size_t>(kPoints));
    EXPECT_EQ(write_app_result(p, outcome, {}), 0);
    return 0;
  }, 60);
  EXPECT_EQ(calls.load(), 2 * kRanks) << "only the two unfinished points run, on every rank";
  EXPECT_EQ(resumed, (std::vector<std::size_t>{1, 1, 1}));
  EXPECT_EQ(report::read_result_file(out()).app_points.size(), static_cast<std::size_t>(kPoints));
  EXPECT_TRUE(std::filesystem::is_empty(dir_ / "others"));
}

TEST_F(RankAppBenchTest, AJournalOfAnotherWorldSizeIsRefusedOnResume) {
  run_thread_ranks(2, [&](RankComm& comm) {
    AppBenchPlan p = plan(2, comm.rank());
    run_app_points(p, comm, [&](std::size_t i, const AppPointSpec& spec, const PointContext& c) {
      if (i == 0 && c.comm.rank() == 0) std::raise(SIGINT);  // stop after the first point
      return rank_point(spec, i, c.comm.rank(), c.comm.size());
    });
    return 0;
  }, 60);
  EXPECT_NE(app_journal_header(plan(2, 0), 2).config_hash, app_journal_header(plan(2, 0), 3).config_hash);
  EXPECT_EQ(app_journal_header(plan(2, 0)).config_hash, app_journal_header(plan(2, 0), 1).config_hash);
  std::string message;
  try {
    run_thread_ranks(3, [&](RankComm& comm) {
      AppBenchPlan p = plan(2, comm.rank());
      p.resume = true;
      run_app_points(p, comm, [&](std::size_t i, const AppPointSpec& spec, const PointContext& c) {
        return rank_point(spec, i, c.comm.rank(), c.comm.size());
      });
      return 0;
    }, 60);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("rank 0: "), std::string::npos) << message;
  EXPECT_NE(message.find("config_hash"), std::string::npos) << message;
}

TEST_F(RankAppBenchTest, InterruptOnRankZeroStopsEveryRankBeforeTheNextPoint) {
  std::atomic<int> calls{0};
  std::vector<int> codes(2, -1);
  run_thread_ranks(2, [&](RankComm& comm) {
    const AppBenchPlan p = plan(3, comm.rank());
    const AppBenchOutcome outcome = run_app_points(p, comm, [&](std::size_t i, const AppPointSpec& spec,
                                                                const PointContext& c) {
      calls.fetch_add(1);
      if (i == 0 && c.comm.rank() == 0) std::raise(SIGINT);
      return rank_point(spec, i, c.comm.rank(), c.comm.size());
    });
    EXPECT_TRUE(outcome.interrupted);
    EXPECT_EQ(outcome.points.size(), 1u);
    codes[static_cast<std::size_t>(comm.rank())] = write_app_result(p, outcome, {});
    return 0;
  }, 60);
  EXPECT_EQ(calls.load(), 2) << "point 0 on both ranks; point 1 never started";
  EXPECT_EQ(codes, (std::vector<int>{kInterruptedExitCode, kInterruptedExitCode}));
  EXPECT_FALSE(std::filesystem::exists(out()));
}

TEST_F(RankAppBenchTest, RaggedTrialsAcrossRanksFailEveryRank) {
  std::atomic<int> agreed{0};
  EXPECT_THROW(run_thread_ranks(2, [&](RankComm& comm) -> int {
    const AppBenchPlan p = plan(1, comm.rank());
    try {
      run_app_points(p, comm, [&](std::size_t i, const AppPointSpec& spec, const PointContext& c) {
        report::AppPoint point = rank_point(spec, i, c.comm.rank(), c.comm.size());
        if (c.comm.rank() == 1) point.variants["fa"] = summarize({1e-6, 2e-6});  // 2 trials, rank 0 has 5
        return point;
      });
    } catch (const RankAgreedError& e) {
      EXPECT_NE(std::string(e.what()).find("ragged"), std::string::npos) << e.what();
      agreed.fetch_add(1);
      throw;
    }
    return 0;
  }, 60), RankAgreedError);
  EXPECT_EQ(agreed.load(), 2);
}

TEST_F(RankAppBenchTest, OneRankThroughTheRankAwareLoopWritesNoRankSections) {
  SingleRankComm one;
  AppBenchPlan p = plan(2, 0);
  p.describe_rank = nullptr;
  std::uint64_t seed = 0;
  const AppBenchOutcome outcome = run_app_points(p, one, [&](std::size_t i, const AppPointSpec& spec,
                                                             const PointContext& c) {
    seed = c.seed;
    return rank_point(spec, i, 0, 1);
  });
  EXPECT_NE(seed, 0u);
  EXPECT_EQ(write_app_result(p, outcome, {}), 0);
  const json raw = report::read_json_file(out());
  EXPECT_FALSE(raw["meta"].contains("ranks"));
  EXPECT_FALSE(raw["meta"].contains("launch"));
  EXPECT_FALSE(raw["points"][0]["extra"].contains("ranks"));
  // With one rank the point is the rank's own (slow in every trial: {2..6} us).
  EXPECT_NEAR(raw["points"][0]["variants"]["fa"]["median"].get<double>(), 4e-6, 1e-15);
}

}  // namespace
}  // namespace xs::bench

namespace xs::bench {
namespace {

// A rank's end that counts its barriers (and passes every collective on).
class CountingComm final : public RankComm {
 public:
  explicit CountingComm(RankComm& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string kind() const override { return inner_.kind(); }
  void barrier() override {
    ++num_barriers;
    inner_.barrier();
  }
  std::vector<std::string> gather_bytes_to_root(const std::string& bytes) override {
    return inner_.gather_bytes_to_root(bytes);
  }
  void broadcast_bytes(void* data, std::size_t num_bytes) override { inner_.broadcast_bytes(data, num_bytes); }
  int num_barriers = 0;

 private:
  RankComm& inner_;
};

TEST_F(RankAppBenchTest, EveryRankMeetsAtABarrierBeforeEachMeasuredPoint) {
  std::vector<int> barriers(3, -1), barriers_before_first_point(3, -1);
  run_thread_ranks(3, [&](RankComm& thread_comm) {
    CountingComm comm(thread_comm);
    AppBenchPlan p = plan(4, comm.rank());
    run_app_points(p, comm, [&](std::size_t i, const AppPointSpec& spec, const PointContext& c) {
      if (i == 0) barriers_before_first_point[static_cast<std::size_t>(c.comm.rank())] = comm.num_barriers;
      return rank_point(spec, i, c.comm.rank(), c.comm.size());
    });
    barriers[static_cast<std::size_t>(comm.rank())] = comm.num_barriers;
    return 0;
  }, 60);
  EXPECT_EQ(barriers, (std::vector<int>{4, 4, 4})) << "one barrier per measured point on every rank";
  EXPECT_EQ(barriers_before_first_point, (std::vector<int>{1, 1, 1})) << "the barrier comes before the point runs";
}

TEST_F(RankAppBenchTest, APointSplitOverAnotherPIsRefusedOnEveryRankBeforeAnyRun) {
  std::atomic<int> calls{0}, agreed{0};
  EXPECT_THROW(run_thread_ranks(2, [&](RankComm& comm) -> int {
    AppBenchPlan p = plan(2, comm.rank());
    for (auto& spec : p.points) spec.axes["P"] = 8;  // fa_a2a's default --P 8, run on 2 ranks
    try {
      run_app_points(p, comm, [&](std::size_t i, const AppPointSpec& spec, const PointContext& c) {
        calls.fetch_add(1);
        return rank_point(spec, i, c.comm.rank(), c.comm.size());
      });
    } catch (const RankAgreedError& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      EXPECT_NE(std::string(e.what()).find("--P: P=8 but the run has 2 ranks"), std::string::npos) << e.what();
      agreed.fetch_add(1);
      throw;
    }
    return 0;
  }, 60), RankAgreedError);
  EXPECT_EQ(agreed.load(), 2);
  EXPECT_EQ(calls.load(), 0);
  EXPECT_FALSE(std::filesystem::exists(report::journal_path_for(out())));
}

}  // namespace
}  // namespace xs::bench
