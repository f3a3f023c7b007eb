// Tests for bench/runner: checks before launch, skipped points, journal durability, interrupt and resume.
#include "bench/runner.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>

#include "common/error.hpp"
#include "report/result_file.hpp"

namespace xs::bench {
namespace {

// Deterministic stand-in backend: T_iss = K*B ns; optionally raises SIGINT during the n-th run.
class FakeBackend : public Backend {
 public:
  int runs = 0;
  int interrupt_at = -1;
  std::string name() const override { return "fake"; }
  nlohmann::json describe() const override { return {{"backend", "fake"}}; }
  std::optional<std::string> unavailable_reason(const PointSpec& spec) const override {
    if (spec.target == "peer:1") return std::string("unavailable: one GPU");
    if (spec.num_producers > 1000) return std::string("K exceeds co-resident producers");
    return std::nullopt;
  }
  PointRecord run(const PointSpec& spec) override {
    if (runs == interrupt_at) std::raise(SIGINT);
    ++runs;
    PointRecord r;
    r.id = point_id(spec);
    r.spec = spec;
    r.issue_time_s = summarize({1e-9 * spec.num_producers * static_cast<double>(spec.bytes_per_producer)});
    r.period_s = r.issue_time_s;
    return r;
  }
};

std::vector<ExpandedPoint> make_points(const std::string& target, int n) {
  std::vector<ExpandedPoint> points;
  for (int i = 0; i < n; ++i) {
    PointSpec s;
    s.target = target;
    s.num_producers = i + 1;
    s.bytes_per_producer = 1024;
    points.push_back({"test", s});
  }
  return points;
}

class RunnerTest : public ::testing::Test {
 protected:
  std::filesystem::path dir_ = std::filesystem::temp_directory_path() /
                               ("xs_runner_" + std::to_string(::getpid()) + "_" +
                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string out() const { return (dir_ / "result.json").string(); }
};

TEST_F(RunnerTest, JournalHoldsEveryFinishedPoint) {
  FakeBackend backend;
  const auto outcome = run_sweep(backend, make_points("host", 5), {out(), false, false});
  EXPECT_FALSE(outcome.interrupted);
  EXPECT_EQ(outcome.records.size(), 5u);
  EXPECT_EQ(report::read_journal(report::journal_path_for(out())).size(), 5u);
}

TEST_F(RunnerTest, UnavailablePointsAreSkippedWithReason) {
  FakeBackend backend;
  const auto outcome = run_sweep(backend, make_points("peer:1", 3), {out(), false, false});
  EXPECT_EQ(backend.runs, 0);
  ASSERT_EQ(outcome.records.size(), 3u);
  EXPECT_TRUE(outcome.records[0].skipped);
  EXPECT_EQ(outcome.records[0].skip_reason, "unavailable: one GPU");
}

TEST_F(RunnerTest, InvalidPointFailsBeforeAnyLaunch) {
  FakeBackend backend;
  auto points = make_points("host", 3);
  points[2].spec.num_producers = 5000;
  EXPECT_THROW(run_sweep(backend, points, {out(), false, false}), Error);
  EXPECT_EQ(backend.runs, 0);
  points = make_points("host", 2);
  points[1].spec.bytes_per_producer = 100;  // not a multiple of 16
  EXPECT_THROW(run_sweep(backend, points, {out(), false, false}), Error);
  EXPECT_EQ(backend.runs, 0);
}

TEST_F(RunnerTest, InterruptKeepsFinishedPointsAndResumeCompletes) {
  FakeBackend backend;
  backend.interrupt_at = 3;  // SIGINT arrives while the 4th point runs; it finishes, then the run stops
  const auto points = make_points("host", 8);
  const auto first = run_sweep(backend, points, {out(), false, false});
  EXPECT_TRUE(first.interrupted);
  EXPECT_EQ(first.records.size(), 4u);
  EXPECT_EQ(report::read_journal(report::journal_path_for(out())).size(), 4u);

  FakeBackend again;
  const auto second = run_sweep(again, points, {out(), true, false});
  EXPECT_FALSE(second.interrupted);
  EXPECT_EQ(second.num_resumed, 4u);
  EXPECT_EQ(again.runs, 4);
  ASSERT_EQ(second.records.size(), 8u);
  for (std::size_t i = 0; i < points.size(); ++i)
    EXPECT_EQ(second.records[i].spec.num_producers, points[i].spec.num_producers);
  EXPECT_EQ(report::read_journal(report::journal_path_for(out())).size(), 8u);
}

TEST_F(RunnerTest, ResumeWithoutJournalIsAnError) {
  FakeBackend backend;
  EXPECT_THROW(run_sweep(backend, make_points("host", 2), {out(), true, false}), Error);
}

}  // namespace
}  // namespace xs::bench
