// Tests for bench/rank_merge: per-trial max over ranks then the order statistics, by hand; refused inputs;
// verification counts summed.
#include "xs/bench/rank_merge.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "xs/common/error.hpp"

namespace xs::bench {
namespace {

TEST(RankMerge, TwoRanksThreeTrialsByHand) {
  // Per trial max: {max(1,2), max(5,4), max(3,6)} = {2, 5, 6}. Sorted {2,5,6}: median 5;
  // p10 at position 0.2 -> 2 + 0.2*(5-2) = 2.6; p90 at position 1.8 -> 5 + 0.8*(6-5) = 5.8.
  const Summary s = merge_rank_trials({{1e-6, 5e-6, 3e-6}, {2e-6, 4e-6, 6e-6}});
  EXPECT_DOUBLE_EQ(s.median, 5e-6);
  EXPECT_NEAR(s.p10, 2.6e-6, 1e-18);
  EXPECT_NEAR(s.p90, 5.8e-6, 1e-18);
  EXPECT_DOUBLE_EQ(s.min, 2e-6);
  EXPECT_DOUBLE_EQ(s.max, 6e-6);
  ASSERT_EQ(s.samples.size(), 3u);  // in trial order
  EXPECT_DOUBLE_EQ(s.samples[0], 2e-6);
  EXPECT_DOUBLE_EQ(s.samples[1], 5e-6);
  EXPECT_DOUBLE_EQ(s.samples[2], 6e-6);
}

TEST(RankMerge, MaxPerTrialIsNotMedianPerRank) {
  // Each rank's own median is 1, but every trial has one slow rank: the run's trial time is 9.
  const Summary s = merge_rank_trials({{9, 1, 1}, {1, 9, 1}, {1, 1, 9}});
  EXPECT_DOUBLE_EQ(s.median, 9);
  EXPECT_DOUBLE_EQ(s.min, 9);
}

TEST(RankMerge, OneRankIsItsOwnSummary) {
  const Summary s = merge_rank_trials({{3, 1, 2}});
  EXPECT_DOUBLE_EQ(s.median, 2);
  EXPECT_DOUBLE_EQ(s.samples[0], 3);
}

TEST(RankMerge, RaggedEmptyAndNonFiniteAreRefused) {
  try {
    merge_rank_trials({{1, 2, 3}, {1, 2}});
    FAIL() << "ragged input accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_EQ(e.field(), "rank 1");
    EXPECT_NE(std::string(e.what()).find("ragged input: 2 trials, rank 0 has 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(merge_rank_trials({}), Error);
  EXPECT_THROW(merge_rank_trials({{}, {}}), Error);
  EXPECT_THROW(merge_rank_trials({{1, std::numeric_limits<double>::quiet_NaN()}, {1, 2}}), Error);
}

TEST(RankMerge, VerificationSumsCountsAndNeedsEveryRank) {
  const RankVerification merged = merge_rank_verification({{true, 0, 0, 0}, {false, 3, 2, 1}, {false, 1, 0, 4}});
  EXPECT_FALSE(merged.verified);
  EXPECT_EQ(merged.num_wrong, 4u);
  EXPECT_EQ(merged.num_unwritten, 2u);
  EXPECT_EQ(merged.num_unexpected, 5u);
  EXPECT_TRUE(merge_rank_verification({{true, 0, 0, 0}, {true, 0, 0, 0}}).verified);
  EXPECT_THROW(merge_rank_verification({}), Error);
}

}  // namespace
}  // namespace xs::bench
