// Tests for attention/fa_report: measured quantities (eq. 21), hiding at both boundaries (issue 13 items 2-3),
// predictions only for the calibrated target (the judgement itself: fa_judge_test.cpp).
#include "xs/attention/io/fa_report.hpp"
#include "fa_test_stats.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

namespace xs::attention {
namespace {

using test_stats::band;
using test_stats::has;

// A point at the completion boundary with a tight E_res band (+-1 us) around T_fused - T_FA.
FaA2aPointResult measured(double t_fa_s, double t_fused_s, double t_serial_s) {
  FaA2aPointResult r;
  r.num_ctas = 132;
  r.num_tiles = 512;
  r.t_fa.median = t_fa_s;
  r.t_fused.median = t_fused_s;
  r.t_serial.median = t_serial_s;
  r.t_a2a.median = 325e-6;
  r.t_cc.median = t_fused_s * 1.1;
  r.sigma_s_per_kv_tile = 0.79e-6;
  const double e = t_fused_s - t_fa_s;
  r.e_res_paired = band(e, e - 1e-6, e + 1e-6);
  r.e_cc_paired.median = r.t_cc.median - t_fa_s;
  r.fa_only_layout = "ulysses";
  r.verified = true;
  return r;
}

FaA2aPointSpec spec_for(const std::string& target) {
  FaA2aPointSpec s;
  s.seq_len = 8192;
  s.target = target;
  return s;
}


TEST(FaReport, MeasuredQuantitiesFollowEq21) {
  const auto j = fa_point_json(spec_for("host"), measured(85.4e-6, 99.4e-6, 140.9e-6), nullptr, "");
  EXPECT_NEAR(j["measured"]["H"].get<double>(), 0.748, 0.001);  // the paper's FA4 M=8192 column
  EXPECT_NEAR(j["measured"]["speedup"].get<double>(), 1.417, 0.001);
  EXPECT_NEAR(j["measured"]["E_res_s"].get<double>(), 14.0e-6, 1e-9);
  EXPECT_FALSE(j.contains("prediction"));
}

TEST(FaReport, HidingAgainstTheA2AAtTheCompletionBoundaryWhenSenderSideIsNotMeasured) {
  const auto j = fa_point_json(spec_for("host"), measured(85.4e-6, 99.4e-6, 140.9e-6), nullptr, "");
  const auto& h = j["measured"]["hiding"];
  EXPECT_EQ(h["boundary"], "remote_visible_completion");
  EXPECT_TRUE(h["sender_side"].is_null());
  EXPECT_NEAR(h["completion"]["E_res_over_T_A2A"].get<double>(), 14.0 / 325.0, 1e-9);
  EXPECT_NEAR(h["completion"]["E_res_over_T_FA"].get<double>(), 14.0 / 85.4, 1e-9);
  EXPECT_NEAR(h["completion"]["H"].get<double>(), 1 - 14.0 / 55.5, 1e-9);
  EXPECT_FALSE(j["measured"].contains("sender_side"));
}

TEST(FaReport, SenderSideBoundaryIsJudgedWhereMeasuredWithCompletionBeside) {
  FaA2aPointResult r = measured(85.4e-6, 99.4e-6, 140.9e-6);
  r.sender_fa.median = 85.0e-6;
  r.sender_fused.median = 87.0e-6;
  r.sender_serial.median = 135.0e-6;
  r.e_res_sender_paired = band(2.0e-6, 1.0e-6, 3.0e-6);
  const auto j = fa_point_json(spec_for("host"), r, nullptr, "");
  const auto& h = j["measured"]["hiding"];
  EXPECT_EQ(h["boundary"], "sender_side");
  EXPECT_NEAR(h["sender_side"]["E_res_s"].get<double>(), 2.0e-6, 1e-12);
  EXPECT_NEAR(h["sender_side"]["E_res_over_T_A2A"].get<double>(), 2.0 / 325.0, 1e-9);
  EXPECT_NEAR(h["sender_side"]["H"].get<double>(), 1 - 2.0 / 50.0, 1e-9);
  EXPECT_NEAR(h["completion"]["E_res_s"].get<double>(), 14.0e-6, 1e-12);  // beside, not replaced
  EXPECT_TRUE(j["measured"].contains("sender_side"));
}

TEST(FaReport, PredictsOnlyForTheCalibratedTarget) {
  const auto cal = model::constant_fa_calibration(717e9, 0.76e-6, 4.25 * 1048576);
  FaA2aPointResult r = measured(85.4e-6, 85.5e-6, 140.9e-6);
  r.sigma_fa_s_per_kv_tile = 0.78e-6;  // the FA-only variant: the frozen prediction's compute input
  const auto host = fa_point_json(spec_for("host"), r, &cal, "host");
  ASSERT_TRUE(host.contains("prediction"));
  ASSERT_TRUE(host.contains("judgement"));
  ASSERT_TRUE(host.contains("diagnostics"));
  EXPECT_EQ(host["prediction"]["design_test"], "piggyback");
  const auto local = fa_point_json(spec_for("local"), measured(85.4e-6, 85.5e-6, 140.9e-6), &cal, "host");
  EXPECT_FALSE(local.contains("prediction"));
  EXPECT_TRUE(local.contains("prediction_note"));
}

}  // namespace
}  // namespace xs::attention
