// Tests for bench/runner: checks before launch, skipped points, journal durability, interrupt and resume,
// the journal's run header, the lock and the output-path checks.
#include "xs/bench/runner.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "xs/common/error.hpp"
#include "xs/common/program_name.hpp"
#include "xs/report/result_file.hpp"

namespace xs::bench {
namespace {

// Deterministic stand-in backend: T_iss = K*B ns; optionally raises SIGINT during the n-th run.
class FakeBackend : public Backend {
 public:
  int runs = 0;
  int interrupt_at = -1;
  bool endless_at_interrupt = false;  // the interrupted point never ends on its own (--reps 2e9)
  bool second_signal = false;         // a second SIGINT follows the first
  int seed = 1;
  std::string name() const override { return "fake"; }
  nlohmann::json describe() const override {
    return {{"backend", "fake"}, {"planted", {{"R_Bps", 7e11}, {"seed", seed}}}};
  }
  std::optional<std::string> unavailable_reason(const PointSpec& spec) const override {
    if (spec.target == "peer:1") return std::string("unavailable: one GPU");
    if (spec.num_producers > 1000) return std::string("K exceeds co-resident producers");
    return std::nullopt;
  }
  PointRecord run(const PointSpec& spec) override {
    if (runs == interrupt_at) {
      std::raise(SIGINT);
      if (second_signal) std::raise(SIGINT);
      while (endless_at_interrupt) throw_if_stopping();  // a repetition loop that only a stop ends
    }
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
  EXPECT_EQ(report::read_journal(report::journal_path_for(out())).records.size(), 5u);
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
  auto first = run_sweep(backend, points, {out(), false, false});
  EXPECT_TRUE(first.interrupted);
  EXPECT_EQ(first.records.size(), 4u);
  first.journal.reset();  // the run is over: its lock goes
  EXPECT_EQ(report::read_journal(report::journal_path_for(out())).records.size(), 4u);

  FakeBackend again;
  const auto second = run_sweep(again, points, {out(), true, false});
  EXPECT_FALSE(second.interrupted);
  EXPECT_EQ(second.num_resumed, 4u);
  EXPECT_EQ(again.runs, 4);
  ASSERT_EQ(second.records.size(), 8u);
  for (std::size_t i = 0; i < points.size(); ++i)
    EXPECT_EQ(second.records[i].spec.num_producers, points[i].spec.num_producers);
  EXPECT_EQ(report::read_journal(report::journal_path_for(out())).records.size(), 8u);
}

TEST_F(RunnerTest, ResumeWithoutJournalIsAnError) {
  FakeBackend backend;
  EXPECT_THROW(run_sweep(backend, make_points("host", 2), {out(), true, false}), Error);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(RunnerTest, JournalStartsWithThisRunsHeader) {
  FakeBackend backend;
  backend.seed = 9;
  const auto points = make_points("host", 3);
  run_sweep(backend, points, {out(), false, false});
  const auto contents = report::read_journal(report::journal_path_for(out()));
  EXPECT_EQ(contents.header.backend, "fake");
  EXPECT_EQ(contents.header.target, "host");
  EXPECT_EQ(contents.header.seed, 9);
  EXPECT_EQ(contents.header.sim, nlohmann::json({{"R_Bps", 7e11}}));
  EXPECT_EQ(contents.header.num_points, 3u);
  EXPECT_FALSE(report::header_mismatch(contents.header, journal_header_for(backend, points)).has_value());
}

TEST_F(RunnerTest, ResumeOfAnotherRunIsRefusedAndChangesNothing) {
  FakeBackend backend;
  backend.interrupt_at = 1;
  const auto points = make_points("host", 4);
  ASSERT_TRUE(run_sweep(backend, points, {out(), false, false}).interrupted);
  const std::string journal = report::journal_path_for(out());
  const std::string before = slurp(journal);

  auto expect_refused = [&](FakeBackend& b, const std::vector<ExpandedPoint>& p, const std::string& field) {
    try {
      run_sweep(b, p, {out(), true, false});
      ADD_FAILURE() << "resumed another run (" << field << ")";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      EXPECT_NE(std::string(e.what()).find(field + " (journal: "), std::string::npos) << e.what();
    }
    EXPECT_EQ(b.runs, 0);
    EXPECT_EQ(slurp(journal), before);
  };
  FakeBackend other_seed;
  other_seed.seed = 2;
  expect_refused(other_seed, points, "seed");
  FakeBackend same;
  expect_refused(same, make_points("local", 4), "target");
  expect_refused(same, make_points("host", 5), "num_points");
  auto other_reps = points;
  other_reps[3].spec.repetitions += 1;
  expect_refused(same, other_reps, "config_hash");
}

TEST_F(RunnerTest, ExistingJournalWithoutResumeIsRefusedUnlessItsRunFinished) {
  FakeBackend backend;
  backend.interrupt_at = 1;
  const auto points = make_points("host", 4);
  run_sweep(backend, points, {out(), false, false});
  const std::string journal = report::journal_path_for(out());
  const std::string before = slurp(journal);
  FakeBackend again;
  try {
    run_sweep(again, points, {out(), false, false});
    FAIL() << "an unfinished journal was overwritten";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("use --resume or remove it"), std::string::npos) << e.what();
  }
  EXPECT_EQ(again.runs, 0);
  EXPECT_EQ(slurp(journal), before);

  // Finished, and its result file written: a new run of the same --out starts over.
  FakeBackend finish;
  run_sweep(finish, points, {out(), true, false});
  std::ofstream(out()) << "{}";
  FakeBackend fresh;
  const auto outcome = run_sweep(fresh, points, {out(), false, false});
  EXPECT_EQ(fresh.runs, 4);
  EXPECT_EQ(outcome.num_resumed, 0u);
  EXPECT_EQ(report::read_journal(journal).records.size(), 4u);
}

TEST_F(RunnerTest, TheOutcomeHoldsTheLockUntilItIsDestroyed) {
  FakeBackend backend;
  const auto points = make_points("host", 2);
  auto outcome = run_sweep(backend, points, {out(), false, false});
  std::ofstream(out()) << "{}";
  FakeBackend second;
  try {
    run_sweep(second, points, {out(), false, false});
    FAIL() << "two runs shared one output";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("another run holds " + report::journal_path_for(out())),
              std::string::npos) << e.what();
  }
  EXPECT_EQ(second.runs, 0);
  outcome.journal.reset();
  EXPECT_NO_THROW(run_sweep(second, points, {out(), false, false}));
}

TEST_F(RunnerTest, BadOutputPathsFailBeforeAnythingIsMeasuredOrCreated) {
  FakeBackend backend;
  const auto points = make_points("host", 2);
  std::ofstream((dir_ / "plain").string()) << "x";
  for (const RunOptions& bad : {RunOptions{"/dev/null", false, false},
                                RunOptions{(dir_ / "plain" / "r.json").string(), false, false},
                                RunOptions{dir_.string(), false, false}}) {
    EXPECT_THROW(run_sweep(backend, points, bad), Error) << bad.output_path;
  }
  EXPECT_EQ(backend.runs, 0);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 1);  // only "plain"
  // A journal path taken by a fifo is refused too.
  ASSERT_EQ(::mkfifo(report::journal_path_for(out()).c_str(), 0644), 0);
  EXPECT_THROW(run_sweep(backend, points, {out(), false, false}), Error);
  EXPECT_THROW(run_sweep(backend, points, {out(), true, false}), Error);
  EXPECT_EQ(backend.runs, 0);
}

TEST_F(RunnerTest, AStopAbandonsALongPointAndKeepsTheFinishedOnes) {
  FakeBackend backend;
  backend.interrupt_at = 2;
  backend.endless_at_interrupt = true;  // without the stop check this test would never end
  const auto points = make_points("host", 5);
  auto outcome = run_sweep(backend, points, {out(), false, false});
  EXPECT_TRUE(outcome.interrupted);
  EXPECT_EQ(outcome.records.size(), 2u);
  outcome.journal.reset();
  EXPECT_EQ(report::read_journal(report::journal_path_for(out())).records.size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(out()));
  // The stop request ends with the sweep: the next one runs normally.
  FakeBackend next;
  EXPECT_EQ(run_sweep(next, points, {out(), true, false}).records.size(), 5u);
}

TEST_F(RunnerTest, ASecondSignalAbortsAtOnceAndKeepsTheJournal) {
  const auto points = make_points("host", 5);
  EXPECT_EXIT(
      {
        set_program_name("xstage-test");  // the handler's lines carry the tool's name, as every other line
        FakeBackend backend;
        backend.interrupt_at = 2;
        backend.second_signal = true;
        backend.endless_at_interrupt = true;
        run_sweep(backend, points, {out(), false, false});
      },
      ::testing::KilledBySignal(SIGINT),
      "\nxstage-test: stopping: finishing point 3/5 [^\n]*Ctrl-C again to abort\n\nxstage-test: aborted; finished "
      "points are in the journal");
  EXPECT_EQ(report::read_journal(report::journal_path_for(out())).records.size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(out()));
}

}  // namespace
}  // namespace xs::bench
