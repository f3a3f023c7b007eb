// Tests for bench/rank_merge merge_rank_points: one application point per rank -> the result file's point
// (status, variants per trial max then median, recomputed paired differences, verification, refusals).
#include <gtest/gtest.h>

#include "xs/bench/rank_merge.hpp"
#include "xs/common/error.hpp"

namespace xs::bench {
namespace {

report::AppPoint point(std::vector<double> fa_s, std::vector<double> fused_s) {
  report::AppPoint p;
  p.id = "fa_a2a.nccl";
  p.suite = "fa_a2a";
  p.axes = {{"M", 8192}};
  std::vector<double> d(fa_s.size());
  for (std::size_t t = 0; t < d.size(); ++t) d[t] = fused_s[t] - fa_s[t];
  p.variants["fa"] = summarize(std::move(fa_s));
  p.variants["fused"] = summarize(std::move(fused_s));
  p.paired["fused_minus_fa"] = summarize(std::move(d));
  p.verification.checked = true;
  p.verification.passed = true;
  p.prediction = {{"E_drain_s", 1e-6}};
  return p;
}

TEST(MergeRankPoints, OneRankIsReturnedAsItIs) {
  const report::AppPoint p = point({1, 2, 3}, {2, 3, 4});
  const report::AppPoint m = merge_rank_points({p});
  EXPECT_EQ(report::to_json(m), report::to_json(p));
}

TEST(MergeRankPoints, VariantsTakeTheSlowestRankPerTrialThenTheMedian) {
  // fa per trial: max(1,4)=4, max(5,2)=5, max(3,3)=3 -> {4,5,3}, median 4 (rank medians are 3 and 3).
  // fused per trial: max(2,6)=6, max(9,3)=9, max(4,5)=5 -> {6,9,5}; paired {6-4, 9-5, 5-3} = {2,4,2}.
  const report::AppPoint m = merge_rank_points({point({1, 5, 3}, {2, 9, 4}), point({4, 2, 3}, {6, 3, 5})});
  EXPECT_EQ(m.status, "ok");
  EXPECT_EQ(m.variants.at("fa").samples, (std::vector<double>{4, 5, 3}));
  EXPECT_DOUBLE_EQ(m.variants.at("fa").median, 4);
  EXPECT_EQ(m.variants.at("fused").samples, (std::vector<double>{6, 9, 5}));
  EXPECT_EQ(m.paired.at("fused_minus_fa").samples, (std::vector<double>{2, 4, 2}));
  EXPECT_EQ(m.prediction, (nlohmann::json{{"E_drain_s", 1e-6}}));
  EXPECT_EQ(m.extra["ranks"]["num_ranks"], 2);
  EXPECT_DOUBLE_EQ(m.extra["ranks"]["by_rank"][1]["variants_median_s"]["fa"].get<double>(), 3);
}

TEST(MergeRankPoints, PairedIsTheDifferenceOfTheMergedTrialsNotAMaxOfDifferences) {
  // Trial 0: rank 0 fa 10 fused 11 (d 1); rank 1 fa 1 fused 8 (d 7). Merged: fused 11 - fa 10 = 1, not 7.
  const report::AppPoint m = merge_rank_points({point({10}, {11}), point({1}, {8})});
  EXPECT_EQ(m.paired.at("fused_minus_fa").samples, (std::vector<double>{1}));
}

TEST(MergeRankPoints, WorstStatusWinsAndDropsTimes) {
  report::AppPoint skipped = point({1}, {2});
  skipped.status = "skipped";
  skipped.reason = "unavailable: peer access 1->0";
  report::AppPoint failed = point({1}, {2});
  failed.status = "failed";
  failed.reason = "NCCL error";
  const report::AppPoint s = merge_rank_points({point({1}, {2}), skipped});
  EXPECT_EQ(s.status, "skipped");
  EXPECT_EQ(s.reason, "rank 1: unavailable: peer access 1->0");
  EXPECT_TRUE(s.variants.empty());
  const report::AppPoint f = merge_rank_points({skipped, point({1}, {2}), failed});
  EXPECT_EQ(f.status, "failed");
  EXPECT_EQ(f.reason, "rank 2: NCCL error");
}

TEST(MergeRankPoints, VerificationPassesOnlyWhenEveryRankPassed) {
  report::AppPoint wrong = point({1}, {2});
  wrong.verification.passed = false;
  wrong.verification.detail = "worst |err| 0.5 at row 3";
  wrong.verification.values = {{"num_wrong", 7}};
  const report::AppPoint m = merge_rank_points({point({1}, {2}), wrong, point({1}, {2})});
  EXPECT_TRUE(m.verification.checked);
  EXPECT_FALSE(m.verification.passed);
  EXPECT_EQ(m.verification.detail, "rank 1: worst |err| 0.5 at row 3");
  ASSERT_EQ(m.verification.values["by_rank"].size(), 3u);
  EXPECT_EQ(m.verification.values["by_rank"][1]["num_wrong"], 7);
  EXPECT_TRUE(report::failed_verification(m));
  report::AppPoint unchecked = point({1}, {2});
  unchecked.verification.checked = false;
  unchecked.verification.passed = false;
  const report::AppPoint u = merge_rank_points({point({1}, {2}), unchecked});
  EXPECT_FALSE(u.verification.checked);
  EXPECT_FALSE(report::failed_verification(u)) << "an unchecked rank makes the point unchecked, not failed";
}

TEST(MergeRankPoints, RefusesAnotherPointMissingVariantsAndRaggedTrials) {
  report::AppPoint other = point({1}, {2});
  other.axes["M"] = 4096;
  EXPECT_THROW(merge_rank_points({point({1}, {2}), other}), Error);
  report::AppPoint missing = point({1}, {2});
  missing.variants.erase("fused");
  try {
    merge_rank_points({point({1}, {2}), missing});
    FAIL() << "missing variant accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(merge_rank_points({point({1, 2}, {2, 3}), point({1}, {2})}), Error);
  EXPECT_THROW(merge_rank_points({}), Error);
}

TEST(MergeRankPoints, APairedKeyNotNamingTwoVariantsIsDroppedAndListed) {
  report::AppPoint a = point({1}, {2}), b = point({1}, {2});
  a.paired["residual"] = summarize({1.0});
  b.paired["residual"] = summarize({1.0});
  const report::AppPoint m = merge_rank_points({a, b});
  EXPECT_EQ(m.paired.count("residual"), 0u);
  EXPECT_EQ(m.extra["ranks"]["dropped_paired"], (nlohmann::json{"residual"}));
}

}  // namespace
}  // namespace xs::bench
