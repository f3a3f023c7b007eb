// Tests for bench/app_bench: the application-suite point loop with a fake point callback: points[] in the
// result file, journal/resume, a partial last line, the run identity (repetitions, verify, model) in the
// header, the interrupt flag, exit 1 on failed verification, and paired differences.
#include "xs/bench/app_bench.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "xs/bench/runner.hpp"
#include "xs/common/error.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/result_file.hpp"

namespace xs::bench {
namespace {
using nlohmann::json;

class AppBenchTest : public ::testing::Test {
 protected:
  std::filesystem::path dir_ = std::filesystem::temp_directory_path() /
                               ("xs_app_bench_" + std::to_string(::getpid()) + "_" +
                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string out() const { return (dir_ / "result.json").string(); }
  std::string journal() const { return report::journal_path_for(out()); }

  // n points of a fake suite; `repetitions` and `verify` are axes, as in fa_a2a.
  AppBenchPlan plan(int n, int repetitions = 10, bool verify = true, const std::string& model = "") const {
    AppBenchPlan p;
    p.suite = "fake";
    for (int i = 0; i < n; ++i)
      p.points.push_back({"fake.host", "host", json{{"M", 1024 * (i + 1)}, {"repetitions", repetitions},
                                                    {"verify", verify}}, "M=" + std::to_string(1024 * (i + 1))});
    p.run_identity = {{"model", model}};
    p.identity.backend = "gpu";
    p.identity.git_sha = "abc";
    p.output_path = out();
    p.progress = false;
    return p;
  }
};

// A measured point: variant times from the axes (fa = M ns, fused = fa + 1 ns), verified.
report::AppPoint fake_point(const AppPointSpec& spec) {
  report::AppPoint p;
  p.id = spec.id;
  p.suite = "fake";
  p.axes = spec.axes;
  const double fa_s = spec.axes["M"].get<double>() * 1e-9;
  const std::vector<double> fa{fa_s, fa_s * 1.01, fa_s * 0.99}, fused{fa_s + 1e-9, fa_s * 1.01 + 1e-9, fa_s * 0.99};
  p.variants["fa"] = summarize(fa);
  p.variants["fused"] = summarize(fused);
  p.paired["fused_minus_fa"] = paired_difference(fused, fa);
  p.verification.checked = spec.axes["verify"].get<bool>();
  p.verification.passed = p.verification.checked;
  p.prediction = {{"E_drain_s", 1e-9}};
  return p;
}

struct Counter {
  int calls = 0;
  int interrupt_at = -1;  // raise SIGINT while this call runs (0-based)
  AppPointRunner runner() {
    return [this](std::size_t, const AppPointSpec& spec) {
      if (calls++ == interrupt_at) std::raise(SIGINT);
      return fake_point(spec);
    };
  }
};

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(AppBenchTest, EveryPointIsJournaledAndWrittenToPointsArray) {
  Counter c;
  const AppBenchPlan p = plan(3);
  const AppBenchOutcome outcome = run_app_points(p, c.runner());
  EXPECT_EQ(c.calls, 3);
  ASSERT_EQ(outcome.points.size(), 3u);
  EXPECT_EQ(lines_of(journal()).size(), 4u);  // header + 3 points
  EXPECT_EQ(write_app_result(p, outcome, {}), 0);
  const report::ResultFile file = report::read_result_file(out());
  EXPECT_TRUE(file.points.empty());
  ASSERT_EQ(file.app_points.size(), 3u);
  EXPECT_EQ(file.meta["suite"], "fake");
  EXPECT_EQ(file.app_points[2].axes["M"], 3072);
  EXPECT_EQ(file.app_points[0].variants.at("fa").samples.size(), 3u);
  EXPECT_NEAR(file.app_points[0].paired.at("fused_minus_fa").median, 1e-9, 1e-15);
  const json raw = report::read_json_file(out());
  ASSERT_EQ(raw["points"].size(), 3u);
  EXPECT_TRUE(raw["points"][1].contains("axes"));
  EXPECT_EQ(raw["points"][1]["prediction"]["E_drain_s"], 1e-9);
}

TEST_F(AppBenchTest, InterruptFinishesThePointThenResumeRunsOnlyTheRest) {
  Counter first;
  first.interrupt_at = 1;  // Ctrl-C during the 2nd point: it finishes, the 3rd never starts
  const AppBenchPlan p = plan(4);
  AppBenchOutcome stopped = run_app_points(p, first.runner());
  EXPECT_TRUE(stopped.interrupted);
  EXPECT_EQ(first.calls, 2);
  EXPECT_EQ(stopped.points.size(), 2u);
  EXPECT_EQ(write_app_result(p, stopped, {}), kInterruptedExitCode);
  EXPECT_FALSE(std::filesystem::exists(out())) << "an interrupted run writes no result file";
  stopped.journal.reset();

  AppBenchPlan again = p;
  again.resume = true;
  Counter second;
  const AppBenchOutcome resumed = run_app_points(again, second.runner());
  EXPECT_FALSE(resumed.interrupted);
  EXPECT_EQ(resumed.num_resumed, 2u);
  EXPECT_EQ(second.calls, 2);
  ASSERT_EQ(resumed.points.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(resumed.points[i].axes, p.points[i].axes) << i;
  EXPECT_EQ(write_app_result(again, resumed, {}), 0);
  EXPECT_EQ(report::read_result_file(out()).app_points.size(), 4u);
}

TEST_F(AppBenchTest, UnfinishedJournalNeedsResumeAndResumeNeedsAJournal) {
  AppBenchPlan p = plan(3);
  p.resume = true;
  Counter c;
  EXPECT_NE(error_message([&] { run_app_points(p, c.runner()); }).find("no journal"), std::string::npos);
  p.resume = false;
  c.interrupt_at = 0;
  run_app_points(p, c.runner());
  const std::string message = error_message([&] { run_app_points(p, c.runner()); });
  EXPECT_NE(message.find("use --resume or remove it"), std::string::npos) << message;
  EXPECT_NE(message.find("1 of 3 points"), std::string::npos) << message;
}

TEST_F(AppBenchTest, PartialLastLineIsCutBeforeAppending) {
  Counter first;
  first.interrupt_at = 0;
  const AppBenchPlan p = plan(3);
  run_app_points(p, first.runner());
  std::ofstream(journal(), std::ios::app) << R"({"id": "fake.host", "suite": "fa)";  // killed mid-append
  AppBenchPlan again = p;
  again.resume = true;
  Counter second;
  const AppBenchOutcome resumed = run_app_points(again, second.runner());
  EXPECT_EQ(resumed.num_resumed, 1u);
  EXPECT_EQ(second.calls, 2);
  const auto lines = lines_of(journal());
  ASSERT_EQ(lines.size(), 4u);
  for (std::size_t i = 1; i < lines.size(); ++i)
    EXPECT_NO_THROW(report::app_point_from_json(report::parse_json_text(lines[i], "line"), "")) << lines[i];
}

TEST_F(AppBenchTest, ResumeRefusesAnotherRepetitionsVerifyOrModel) {
  Counter first;
  first.interrupt_at = 0;
  run_app_points(plan(3), first.runner());
  for (const AppBenchPlan& other : {plan(3, 20), plan(3, 10, false), plan(3, 10, true, "cal.json")}) {
    AppBenchPlan p = other;
    p.resume = true;
    Counter c;
    const std::string message = error_message([&] { run_app_points(p, c.runner()); });
    EXPECT_NE(message.find("config_hash"), std::string::npos) << message;
    EXPECT_EQ(c.calls, 0);
  }
  EXPECT_NE(app_journal_header(plan(3)).config_hash, app_journal_header(plan(3, 20)).config_hash);
  EXPECT_NE(app_journal_header(plan(3)).config_hash, app_journal_header(plan(3, 10, true, "m.json")).config_hash);
}

TEST_F(AppBenchTest, ALineThatIsNotAPointNamesTheJournalLine) {
  Counter first;
  first.interrupt_at = 0;
  const AppBenchPlan p = plan(2);
  run_app_points(p, first.runner());
  std::ofstream(journal(), std::ios::app) << R"({"id": "fake.host", "spec": {}})" << "\n";
  AppBenchPlan again = p;
  again.resume = true;
  Counter c;
  const std::string message = error_message([&] { run_app_points(again, c.runner()); });
  EXPECT_NE(message.find(journal() + ":3"), std::string::npos) << message;
  EXPECT_NE(message.find("not a fake point"), std::string::npos) << message;
}

TEST_F(AppBenchTest, FailedVerificationExitsOneAndIsKeptOnResume) {
  const AppBenchPlan p = plan(3);
  auto failing = [](std::size_t i, const AppPointSpec& spec) {
    report::AppPoint point = fake_point(spec);
    if (i == 1) point.verification.passed = false;
    if (i == 2) {
      point.status = "failed";
      point.reason = "verification failed: 3 wrong";
    }
    return point;
  };
  AppBenchOutcome outcome = run_app_points(p, failing);
  EXPECT_EQ(outcome.num_failed, 2u);
  EXPECT_EQ(write_app_result(p, outcome, {}), 1);
  EXPECT_EQ(report::read_result_file(out()).app_points.size(), 3u) << "failed points are still written";
  outcome.journal.reset();
  // The finished run's journal: a plain rerun starts over; a resumed one counts the journaled failures.
  AppBenchPlan again = p;
  again.resume = true;
  Counter c;
  const AppBenchOutcome resumed = run_app_points(again, c.runner());
  EXPECT_EQ(c.calls, 0);
  EXPECT_EQ(resumed.num_failed, 2u);
  EXPECT_EQ(write_app_result(again, resumed, {}), 1);
}

TEST_F(AppBenchTest, SkippedAndUncheckedPointsDoNotFail) {
  const AppBenchPlan p = plan(2, 10, false);
  auto skipping = [](std::size_t i, const AppPointSpec& spec) {
    report::AppPoint point = fake_point(spec);  // verify=false: unchecked
    if (i == 0) {
      point = report::AppPoint{};
      point.id = spec.id;
      point.suite = "fake";
      point.axes = spec.axes;
      point.status = "skipped";
      point.reason = "unavailable: one GPU";
    }
    return point;
  };
  const AppBenchOutcome outcome = run_app_points(p, skipping);
  EXPECT_EQ(outcome.num_failed, 0u);
  EXPECT_EQ(write_app_result(p, outcome, {}), 0);
}

TEST_F(AppBenchTest, APointReturnedForAnotherSpecIsRefused) {
  auto wrong = [](std::size_t, const AppPointSpec& spec) {
    report::AppPoint point = fake_point(spec);
    point.axes["M"] = 1;
    return point;
  };
  EXPECT_THROW(run_app_points(plan(1), wrong), Error);
}

TEST_F(AppBenchTest, DuplicatePointsAreRefusedBeforeAnyRun) {
  AppBenchPlan p = plan(2);
  p.points[1] = p.points[0];
  Counter c;
  EXPECT_THROW(run_app_points(p, c.runner()), Error);
  EXPECT_EQ(c.calls, 0);
  EXPECT_FALSE(std::filesystem::exists(journal()));
}

TEST(PairedDifference, SameRoundDifferencesKeepTheirSign) {
  const Summary d = paired_difference({5, 7, 9}, {8, 4, 6});
  EXPECT_EQ(d.samples, (std::vector<double>{-3, 3, 3}));
  EXPECT_DOUBLE_EQ(d.median, 3);
  EXPECT_DOUBLE_EQ(d.min, -3);
  // A pairing is of rounds, not of sorted values: the median of differences is not the difference of medians.
  EXPECT_NE(d.median, median({5, 7, 9}) - median({8, 4, 6}));
  EXPECT_THROW(paired_difference({1, 2}, {1}), Error);
}

}  // namespace
}  // namespace xs::bench
