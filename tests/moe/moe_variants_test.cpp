// xstage moe unit tests: the megamoe variant plans (moe_variants.hpp): expert-wave widths swept as variants,
// the renamed serial_then_copy, the rotating verification order, the overlapped pipeline's waves, the best width.
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "xs/common/error.hpp"
#include "xs/moe/point/moe_point.hpp"
#include "xs/moe/run/moe_variants.hpp"

namespace xs::moe {
namespace {

TEST(MoeVariants, WidthsAreClippedDedupedAndSorted) {
  EXPECT_EQ(expert_wave_widths({8, 1, 4, 2}, 32), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(expert_wave_widths({1, 2, 4, 8}, 3), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(expert_wave_widths({}, 32), (std::vector<int>{1}));
  EXPECT_THROW(expert_wave_widths({0}, 32), Error);
}

TEST(MoeVariants, EveryFamilyPlansAndTheWaveSweepsItsWidths) {
  const auto plans = plan_variants({}, {1, 4}, 3);
  std::vector<std::string> names;
  for (const auto& p : plans) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"expert_wave_w1", "expert_wave_w4", "interleaved", "serial",
                                             "expert_wave_cc", "interleaved_cc", "serial_then_copy",
                                             "unfused_overlapped", "phase_l1", "phase_l2"}));
  EXPECT_EQ(plans[1].experts_per_wave, 4);
  EXPECT_EQ(plans[1].family, "expert_wave");
  EXPECT_EQ(plans[2].lead_rows, 3);
  EXPECT_EQ(plans[4].experts_per_wave, 1);  // the cc twin runs the smallest width
  EXPECT_TRUE(plans[4].completion_coupled);
  EXPECT_EQ(plans[6].schedule, "serial");
  EXPECT_EQ(plans[6].pipeline, "serial_then_copy");
  EXPECT_EQ(plans[7].pipeline, "unfused_overlapped");
  EXPECT_EQ(plans[8].phases, "linear1");
  EXPECT_EQ(plans[9].phases, "linear2");
  for (const auto& p : plans) EXPECT_FALSE(p.fault_skip_l2_wait);
  // One width: the variant keeps its plain name.
  const auto one = plan_variants({"expert_wave", "interleaved"}, {2}, 1, "interleaved");
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[0].name, "expert_wave");
  EXPECT_EQ(one[0].experts_per_wave, 2);
  EXPECT_TRUE(one[1].fault_skip_l2_wait);
  EXPECT_FALSE(one[0].fault_skip_l2_wait);
}

TEST(MoeVariants, UnknownAndRenamedFamiliesAreRefused) {
  try {
    check_variant_families({"unfused"});
    FAIL() << "accepted unfused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("serial_then_copy"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_variant_families({"wave"}), Error);
  EXPECT_NO_THROW(check_variant_families(moe_variant_names()));
}

TEST(MoeVariants, VerificationOrderRotates) {
  EXPECT_EQ(verification_order(4, 0), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(verification_order(4, 5), (std::vector<std::size_t>{1, 2, 3, 0}));
  std::set<std::size_t> firsts;
  for (std::size_t p = 0; p < 4; ++p) firsts.insert(verification_order(4, p).front());
  EXPECT_EQ(firsts.size(), 4u);  // over consecutive points every variant verifies first once
}

TEST(MoeVariants, PipelineWavesCoverEveryRowBlockOnce) {
  // 6 experts with 3, 0, 5, 1, 0, 7 row blocks (16 in all); 4 waves of >= 4 blocks each but the last.
  const std::vector<std::uint32_t> first = {0, 3, 3, 8, 9, 9, 16};
  const auto waves = pipeline_waves(first, 4);
  ASSERT_FALSE(waves.empty());
  EXPECT_LE(waves.size(), 4u);
  EXPECT_EQ(waves.front().first_block, 0u);
  EXPECT_EQ(waves.front().first_expert, 0);
  EXPECT_EQ(waves.back().end_block, 16u);
  EXPECT_EQ(waves.back().end_expert, 6);
  for (std::size_t i = 1; i < waves.size(); ++i) {
    EXPECT_EQ(waves[i].first_block, waves[i - 1].end_block);
    EXPECT_EQ(waves[i].first_expert, waves[i - 1].end_expert);
    EXPECT_GT(waves[i].end_block, waves[i].first_block);
  }
  for (const auto& w : waves) {
    EXPECT_EQ(w.first_block, first[w.first_expert]);
    EXPECT_EQ(w.end_block, first[w.end_expert]);
  }
  EXPECT_EQ(pipeline_waves(first, 1).size(), 1u);
  EXPECT_THROW(pipeline_waves(first, 0), Error);
}

TEST(MoeVariants, BestWidthIsTheFastestExpertWavePlan) {
  const auto plans = plan_variants({"expert_wave", "interleaved"}, {1, 2, 4}, 1);
  EXPECT_EQ(best_wave_plan(plans, {3e-3, 2e-3, 2.5e-3, 1e-3}), 1);  // interleaved's 1e-3 does not count
  EXPECT_EQ(best_wave_plan(plans, {0, 0, 0, 1e-3}), -1);
}

}  // namespace
}  // namespace xs::moe
