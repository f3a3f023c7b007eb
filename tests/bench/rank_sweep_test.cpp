// Tests for the rank-aware sweep (bench/runner.hpp run_sweep over a RankComm, bench/rank_merge.hpp
// merge_rank_records) on ranks as threads, with the simulator (one backend per rank, its own seed): the merge
// per repetition, rank 0 alone journaling, a failing rank failing every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "xs/bench/rank_agree.hpp"
#include "xs/bench/rank_merge.hpp"
#include "xs/bench/runner.hpp"
#include "xs/common/error.hpp"
#include "xs/report/file_io.hpp"
#include "xs/backends/sim/simulator.hpp"

namespace xs::bench {
namespace {

PointRecord record_with(const std::vector<double>& issue_s, const std::vector<double>& period_s) {
  PointRecord r;
  r.spec.target = "host";
  r.spec.num_producers = 8;
  r.spec.bytes_per_producer = 16384;
  r.id = point_id(r.spec);
  r.issue_time_s = summarize(issue_s);
  r.period_s = summarize(period_s);
  r.verification = {true, 100, 0};
  return r;
}

TEST(MergeRankRecords, PerRepetitionTheSlowestRank) {
  const PointRecord a = record_with({1e-6, 5e-6, 3e-6}, {2e-6, 2e-6, 9e-6});
  PointRecord b = record_with({2e-6, 4e-6, 3e-6}, {1e-6, 3e-6, 1e-6});
  b.verification.wrong = 2;
  const PointRecord m = merge_rank_records({a, b});
  EXPECT_EQ(m.issue_time_s.samples, (std::vector<double>{2e-6, 5e-6, 3e-6}));
  EXPECT_DOUBLE_EQ(m.issue_time_s.median, 3e-6);
  EXPECT_EQ(m.period_s.samples, (std::vector<double>{2e-6, 3e-6, 9e-6}));
  EXPECT_FALSE(m.issue_time_max_s.has_value());  // neither rank had it
  EXPECT_EQ(m.verification.bytes_checked, 200u);
  EXPECT_EQ(m.verification.wrong, 2u);
  EXPECT_FALSE(m.prediction.has_value());
}

TEST(MergeRankRecords, SkippedOnOneRankIsSkippedAndOtherPointsAreRefused) {
  const PointRecord a = record_with({1e-6}, {1e-6});
  PointRecord b = a;
  b.skipped = true;
  b.skip_reason = "unavailable: one GPU";
  const PointRecord m = merge_rank_records({a, b});
  EXPECT_TRUE(m.skipped);
  EXPECT_EQ(m.skip_reason, "rank 1: unavailable: one GPU");
  PointRecord c = a;
  c.spec.num_producers = 9;
  try {
    merge_rank_records({a, c});
    FAIL() << "a different point was merged";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "rank 1");
  }
  PointRecord ragged = record_with({1e-6, 2e-6}, {1e-6, 2e-6});
  EXPECT_THROW(merge_rank_records({a, ragged}), Error);
}

TEST(SimRanks, RankZeroKeepsTheSeedAndOtherRanksDrawTheirOwn) {
  EXPECT_EQ(sim::rank_seed(7, 0), 7u);
  EXPECT_NE(sim::rank_seed(7, 1), sim::rank_seed(7, 2));
  EXPECT_NE(sim::rank_seed(7, 1), sim::rank_seed(8, 1));
  EXPECT_NE(sim::rank_seed(1, 1), 2u);  // not seed + rank: rank 1 of seed 1 is not rank 0 of seed 2
  EXPECT_EQ(sim::make_sim_backend(sim::SimParams{}, 2)->describe()["planted"]["seed"], sim::rank_seed(1, 2));
}

TEST(SimFault, ParsesRankPointModeAndRefusesOtherText) {
  const sim::SimFault f = sim::parse_sim_fault("2:3:hang");
  EXPECT_EQ(f.rank, 2);
  EXPECT_EQ(f.point, 3u);
  EXPECT_EQ(f.mode, "hang");
  EXPECT_EQ(sim::parse_sim_fault("").rank, -1);
  for (const char* bad : {"2:3", "2:0:throw", "-1:1:throw", "1:1:explode", "x:1:throw", "1:2x:exit"}) {
    try {
      sim::parse_sim_fault(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput) << bad;
      EXPECT_NE(std::string(e.what()).find("<rank>:<point>:<mode>"), std::string::npos) << e.what();
    }
  }
}

std::vector<ExpandedPoint> sweep() {
  std::vector<ExpandedPoint> points;
  for (int k : {8, 33})
    for (double gap_s : {0.0, 2e-6}) {
      PointSpec s;
      s.target = "host";
      s.num_producers = k;
      s.bytes_per_producer = 16384;
      s.gap_s = gap_s;
      s.num_bursts = 12;
      s.warmup_bursts = 2;
      s.repetitions = 5;
      points.push_back({"test", s});
    }
  return points;
}

sim::SimParams noisy() {
  sim::SimParams p;
  p.noise = 0.05;
  return p;
}

class RankSweep : public ::testing::Test {
 protected:
  std::string dir = (std::filesystem::temp_directory_path() /
                     ("xs_rank_sweep_" + std::to_string(::getpid()) + "_" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name())).string();
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
};

TEST_F(RankSweep, ThreeThreadRanksMergePerRepetitionAndOnlyRankZeroJournals) {
  const auto points = sweep();
  std::vector<SweepOutcome> outcomes(3);
  run_thread_ranks(3, [&](RankComm& comm) {
    auto backend = sim::make_sim_backend(noisy(), comm.rank());
    outcomes[static_cast<std::size_t>(comm.rank())] =
        run_sweep(*backend, points, {dir + "/r" + std::to_string(comm.rank()) + ".json", false, false}, comm);
    return 0;
  });
  // Each rank alone, with its seed: the merged samples are the per-repetition max of these.
  std::vector<std::vector<PointRecord>> alone;
  for (int r = 0; r < 3; ++r) {
    sim::SimParams p = noisy();
    p.seed = sim::rank_seed(p.seed, r);
    for (const auto& point : points) {
      if (alone.size() <= static_cast<std::size_t>(r)) alone.emplace_back();
      alone.back().push_back(sim::simulate_point(p, point.spec));
    }
  }
  std::size_t above_rank0 = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& merged = outcomes[0].records.at(i).issue_time_s.samples;
    ASSERT_EQ(merged.size(), 5u);
    for (std::size_t t = 0; t < merged.size(); ++t) {
      const double max_s = std::max({alone[0][i].issue_time_s.samples[t], alone[1][i].issue_time_s.samples[t],
                                     alone[2][i].issue_time_s.samples[t]});
      EXPECT_EQ(merged[t], max_s) << "point " << i << " repetition " << t;
      above_rank0 += merged[t] > alone[0][i].issue_time_s.samples[t] ? 1 : 0;
    }
    // Every rank holds the merged records.
    EXPECT_EQ(outcomes[2].records.at(i).issue_time_s.samples, merged);
  }
  EXPECT_GT(above_rank0, 0u) << "the merge is rank 0's data";
  EXPECT_TRUE(std::filesystem::exists(report::journal_path_for(dir + "/r0.json")));
  EXPECT_FALSE(std::filesystem::exists(report::journal_path_for(dir + "/r1.json")));
  ASSERT_EQ(outcomes[0].ranks.size(), 3u);
  EXPECT_EQ(outcomes[0].ranks[1]["seed"], sim::rank_seed(1, 1));
  EXPECT_EQ(outcomes[0].launch["num_ranks"], 3);
}

// Rank 1's backend throws at its third point: every rank ends with rank 1's error, the journal keeps two points.
class ThrowingAt : public Backend {
 public:
  ThrowingAt(int rank, std::size_t at) : inner_(sim::make_sim_backend(sim::SimParams{}, rank)), rank_(rank), at_(at) {}
  std::string name() const override { return inner_->name(); }
  nlohmann::json describe() const override { return inner_->describe(); }
  std::optional<std::string> unavailable_reason(const PointSpec& s) const override { return inner_->unavailable_reason(s); }
  PointRecord run(const PointSpec& s) override {
    if (rank_ == 1 && ++runs_ == at_) throw Error(ExitCode::kDeviceFailure, "cuda", "", "illegal address");
    return inner_->run(s);
  }

 private:
  std::unique_ptr<Backend> inner_;
  int rank_;
  std::size_t at_, runs_ = 0;
};

TEST_F(RankSweep, AThrowOnOneRankFailsEveryRankWithItsError) {
  const auto points = sweep();
  std::vector<std::string> errors(2);
  run_thread_ranks(2, [&](RankComm& comm) {
    ThrowingAt backend(comm.rank(), 3);
    try {
      run_sweep(backend, points, {dir + "/f.json", false, false}, comm);
    } catch (const RankAgreedError& e) {
      errors[static_cast<std::size_t>(comm.rank())] = e.what();
    }
    return 0;
  });
  EXPECT_EQ(errors[0], "rank 1: illegal address");
  EXPECT_EQ(errors[1], errors[0]);
  std::ifstream journal(report::journal_path_for(dir + "/f.json"));
  const auto lines = std::count(std::istreambuf_iterator<char>(journal), {}, '\n');
  EXPECT_EQ(lines, 1 + 2) << "the header and the two finished points";
  EXPECT_FALSE(std::filesystem::exists(dir + "/f.json"));
}

}  // namespace
}  // namespace xs::bench
