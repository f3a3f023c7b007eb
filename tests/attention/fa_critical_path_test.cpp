// Tests for the critical-path explanation of a verdict check (attention/fa_prediction_json.cpp): where the median
// CTA's Q-loop slowdown under store load falls short of a measured exposure, the slowdown on the launch's critical
// path takes its place beside the model's X-Stage terms; the round differences it comes from
// (fa_timeline.hpp critical_path_round_differences); and its round trip through the result file.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "attention/fa_app_point.hpp"
#include "attention/fa_report.hpp"
#include "fa_test_stats.hpp"
#include "attention/fa_result_reader.hpp"
#include "attention/fa_timeline.hpp"
#include "report/app_point.hpp"

namespace xs::attention {
namespace {

using test_stats::band;
using test_stats::has;


// The 2026-12-02 host shape at 8K (fa_report_test's): T_iss^0 29 us for the aligned 4.3 MB wave, 0.5 us for the
// 26 CTAs storing at once, Q = 8 MiB holds both (piggyback in both cases). sigma 1.5 -> 2.0 us per KV tile: the
// median CTA's E_load = 4 x 64 x 0.5 us = 128 us, phase-aware E_res 130 us. Measured: 200 us (190..210).
FaA2aPointResult host_8k() {
  FaA2aPointResult r;
  r.num_ctas = 132;
  r.num_tiles = 512;
  r.t_fa.median_s = 400e-6;
  r.t_fused.median_s = 600e-6;
  r.t_serial.median_s = 720e-6;
  r.t_a2a.median_s = 325e-6;
  r.t_cc.median_s = 640e-6;
  r.e_res_paired = band(200e-6, 190e-6, 210e-6);
  r.sigma_fa_s_per_kv_tile = 1.5e-6;
  r.sigma_s_per_kv_tile = 2.0e-6;
  r.qloop_fused = band(128e-6, 0.98 * 128e-6, 1.02 * 128e-6);
  r.store_phase_spread_median_s = 85e-6;
  r.peak_concurrent_storers = 26;
  r.mean_concurrent_storers = 10;
  r.fa_only_layout = "ulysses";
  r.verified = true;
  return r;
}

model::PlatformModel host_platform() {
  return model::PlatformModel::from_json(nlohmann::json::parse(R"({"R_Bps": 52e9,
      "tiss0": [{"K": 26, "V_bytes": 851968, "s": 5e-7}, {"K": 132, "V_bytes": 4325376, "s": 2.9e-5}],
      "Q": [{"K": 26, "bytes": 8388608, "bound": "fit"}, {"K": 132, "bytes": 8388608, "bound": "fit"}]})"));
}

FaA2aPointSpec host_spec() {
  FaA2aPointSpec s;
  s.seq_len = 8192;
  s.target = "host";
  return s;
}

TEST(FaCriticalPath, TheSlowdownWhereItSetsTheLaunchLengthExplainsWhatTheMedianCtasDoesNot) {
  FaA2aPointResult r = host_8k();
  // Without a critical path: 130 us predicted against 190..210 (widened: 170..230): unexplained.
  const auto before = fa_point_json(host_spec(), r, host_platform(), "host")["prediction"]["phase_aware"]["check"];
  ASSERT_EQ(before["result"], "disagrees");
  ASSERT_FALSE(before["explained"].get<bool>()) << before["explanation"];
  // The critical warpgroup's Q-loops grew by 196 us, its epilogues by 3 us: 2 us (E_issue) + 196 = 198 us.
  r.critical_qloop_paired = band(196e-6, 185e-6, 205e-6);
  r.critical_epilogue_paired = band(3e-6, 2e-6, 4e-6);
  r.critical_other_paired = band(1e-6, 0, 2e-6);
  const auto j = fa_point_json(host_spec(), r, host_platform(), "host");
  const auto& check = j["prediction"]["phase_aware"]["check"];
  EXPECT_TRUE(check["explained"].get<bool>()) << check["explanation"];
  EXPECT_EQ(check["explained_by"], nlohmann::json::array({"critical_path_decomposition"}));
  EXPECT_TRUE(has(check["explanation"], "Q-loops (compute and K/V loads) +196.0 us")) << check["explanation"];
  EXPECT_TRUE(has(check["explanation"], "E_issue 2.0 us + stalls 0.0 us = 2.0 us, which the epilogue growth does not "
                                        "exceed")) << check["explanation"];
  EXPECT_TRUE(has(check["explanation"], "that cost = 198.0 us against the clock-normalized E_res 200.0 us"))
      << check["explanation"];
  // The Q-loops holding only 150 us (the rest in gaps between tiles: +45 us): not within the band's width of 200.
  r.critical_qloop_paired = band(150e-6, 140e-6, 160e-6);
  r.critical_other_paired = band(45e-6, 40e-6, 50e-6);
  const auto gaps = fa_point_json(host_spec(), r, host_platform(), "host")["prediction"]["phase_aware"]["check"];
  EXPECT_FALSE(gaps["explained"].get<bool>()) << gaps["explanation"];
  EXPECT_TRUE(has(gaps["explanation"], "the Q-loops do not hold the exposure")) << gaps["explanation"];
}

TEST(FaCriticalPath, ItDoesNotExplainWhatTheXStageTermsGetWrong) {
  // The critical path's Q-loops grew by only 110 us and its epilogues (the stores' issue) by 88 us: the exposure
  // is store stalls the model did not predict (X-Stage stalls 0 with Q = 8 MiB): 2 + 110 = 112 us, unexplained.
  FaA2aPointResult r = host_8k();
  r.critical_qloop_paired = band(110e-6, 100e-6, 120e-6);
  r.critical_epilogue_paired = band(88e-6, 80e-6, 95e-6);
  r.critical_other_paired = band(2e-6, 0, 4e-6);
  const auto check = fa_point_json(host_spec(), r, host_platform(), "host")["prediction"]["phase_aware"]["check"];
  EXPECT_FALSE(check["explained"].get<bool>()) << check["explanation"];
  EXPECT_TRUE(has(check["explanation"], "epilogues (stores issued, any X-Stage stall included) +88.0 us"))
      << check["explanation"];
  EXPECT_TRUE(has(check["explanation"], "which the epilogue growth exceeds")) << check["explanation"];
  // Stalls the model missed are not explained even where the sum lands in the band: 110 + 88 = 198 us would, but
  // the X-Stage part is 88 us against the 2 us predicted.
  r.critical_qloop_paired = band(190e-6, 180e-6, 200e-6);
  const auto stalled = fa_point_json(host_spec(), r, host_platform(), "host")["prediction"]["phase_aware"]["check"];
  EXPECT_FALSE(stalled["explained"].get<bool>()) << stalled["explanation"];
}

TEST(FaCriticalPath, TheAlignedCaseTakesTheIssueTimeOfTheCtasThatStoreTogether) {
  // At most 26 of 132 CTAs store at once (measured): the aligned case's X-Stage cost is theirs, 4 x 0.5 us, not
  // the aligned 4 x 29 us = 116 us (which with 196 us of Q-loop growth would give 312 us).
  FaA2aPointResult r = host_8k();
  r.critical_qloop_paired = band(196e-6, 185e-6, 205e-6);
  r.critical_epilogue_paired = band(3e-6, 2e-6, 4e-6);
  r.critical_other_paired = band(1e-6, 0, 2e-6);
  auto aligned = fa_point_json(host_spec(), r, host_platform(), "host")["prediction"]["aligned"]["check"];
  EXPECT_EQ(aligned["result"], "disagrees");
  EXPECT_EQ(aligned["explained_by"], nlohmann::json::array({"critical_path_decomposition", "measured_alignment"}))
      << aligned["explanation"];
  EXPECT_TRUE(has(aligned["explanation"], "predicted of the 26 CTAs storing at once: E_issue 2.0 us"))
      << aligned["explanation"];
  // Aligned CTAs (no alignment measured): the aligned E_issue stands, 312 us: not explained.
  r.store_phase_spread_median_s = 0;
  r.peak_concurrent_storers = 0;
  r.mean_concurrent_storers = 0;
  aligned = fa_point_json(host_spec(), r, host_platform(), "host")["prediction"]["aligned"]["check"];
  EXPECT_TRUE(aligned["explained_by"].empty()) << aligned["explanation"];
  EXPECT_TRUE(has(aligned["explanation"], "that cost = 312.0 us against")) << aligned["explanation"];
}

TEST(FaCriticalPath, AnUndecidedCapacityBoundIsJudgedAtItsCapacityMetCost) {
  // The 26 CTAs' Q(26) bracket contradicts itself: their capacity bound is undecided. The X-Stage cost is the
  // capacity-met one, E_issue 2 us + E_drain 0; the epilogue growth (3 us, spread 2 us) does not exceed it by more
  // than its spread, and 196 + 2 = 198 us is within the band's width of 200 us.
  const auto contradictory = model::PlatformModel::from_json(nlohmann::json::parse(R"({"R_Bps": 52e9,
      "tiss0": [{"K": 26, "V_bytes": 851968, "s": 5e-7}, {"K": 132, "V_bytes": 4325376, "s": 2.9e-5}],
      "Q": [{"K": 26, "bytes": null, "bound": "not_identified"}, {"K": 132, "bytes": 8388608, "bound": "fit"}],
      "fit": {"Q": [{"K": 22, "floor_lower_bound_bytes": 1242423},
                    {"K": 26, "drain_start_V_bytes": 1260000}]}})"));
  FaA2aPointResult r = host_8k();
  r.critical_qloop_paired = band(196e-6, 185e-6, 205e-6);
  r.critical_epilogue_paired = band(3e-6, 2e-6, 4e-6);
  r.critical_other_paired = band(1e-6, 0, 2e-6);
  auto p = fa_point_json(host_spec(), r, contradictory, "host")["prediction"];
  ASSERT_EQ(p["verdict_phase_aware"], "undecided");
  EXPECT_EQ(p["phase_aware"]["check"]["result"], "not decided");
  auto aligned = p["aligned"]["check"];
  EXPECT_TRUE(aligned["explained"].get<bool>()) << aligned["explanation"];
  EXPECT_TRUE(has(aligned["explanation"], "E_drain (capacity bound undecided: were it met) 0.0 us"))
      << aligned["explanation"];
  EXPECT_TRUE(has(aligned["explanation"], "that cost = 198.0 us")) << aligned["explanation"];
  // An epilogue that grew by 40 us (more than E_issue 2 us + its 10 us spread) is a stall the undecided bound
  // may hide.
  r.critical_epilogue_paired = band(40e-6, 35e-6, 45e-6);
  r.critical_qloop_paired = band(160e-6, 150e-6, 170e-6);
  aligned = fa_point_json(host_spec(), r, contradictory, "host")["prediction"]["aligned"]["check"];
  EXPECT_FALSE(aligned["explained"].get<bool>()) << aligned["explanation"];
}

TEST(FaCriticalPath, AReshapeNotMeasuredIsExplainedWhereTheUnalignedBurstsDidNotStallTheirIssuer) {
  // Q(132) = 2 MiB: the aligned 4.1 MiB wave is backpressured (reshape); 26 CTAs store at once and their Q(26)
  // bracket contradicts itself (undecided). Measured at 32K: E_res 5 us (-20..30 us): not exposed.
  const auto platform = model::PlatformModel::from_json(nlohmann::json::parse(R"({"R_Bps": 52e9,
      "tiss0": [{"K": 26, "V_bytes": 851968, "s": 5e-7}, {"K": 132, "V_bytes": 4325376, "s": 2.9e-5}],
      "Q": [{"K": 26, "bytes": null, "bound": "not_identified"}, {"K": 132, "bytes": 2097152, "bound": "fit"}],
      "fit": {"Q": [{"K": 22, "floor_lower_bound_bytes": 1242423},
                    {"K": 26, "drain_start_V_bytes": 1260000}]}})"));
  FaA2aPointSpec spec = host_spec();
  spec.seq_len = 32768;
  FaA2aPointResult r = host_8k();
  r.num_tiles = 2048;
  r.sigma_s_per_kv_tile = 1.52e-6;
  r.sigma_fa_s_per_kv_tile = 1.52e-6;
  r.qloop_fused = band(389e-6, 0.98 * 389e-6, 1.02 * 389e-6);
  r.t_fa.median_s = 7000e-6;
  r.t_fused.median_s = 7005e-6;
  r.t_serial.median_s = 8300e-6;
  r.e_res_paired = band(5e-6, -20e-6, 30e-6);
  // The critical path's epilogues grew by 5 us in all (E_issue of the 26: 16 x 0.5 us = 8 us; the aligned case
  // predicts 16 x 42.6 us of stalls).
  r.critical_qloop_paired = band(2e-6, -10e-6, 12e-6);
  r.critical_epilogue_paired = band(5e-6, 3e-6, 7e-6);
  r.critical_other_paired = band(-2e-6, -5e-6, 1e-6);
  auto p = fa_point_json(spec, r, platform, "host")["prediction"];
  ASSERT_EQ(p["verdict"], "reshape");
  ASSERT_EQ(p["verdict_phase_aware"], "undecided");
  auto aligned = p["aligned"]["check"];
  EXPECT_EQ(aligned["result"], "disagrees");
  EXPECT_EQ(aligned["explained_by"], nlohmann::json::array({"measured_alignment", "critical_path_epilogue"}))
      << aligned["explanation"];
  EXPECT_TRUE(has(aligned["explanation"], "the stores did not stall their issuer")) << aligned["explanation"];
  // Epilogues that grew by 80 us (the Q-loops 75 us shorter, the same 5 us in all): more than E_issue 8 us + the
  // epilogue's 20 us spread: not explained.
  r.critical_epilogue_paired = band(80e-6, 70e-6, 90e-6);
  r.critical_qloop_paired = band(-75e-6, -85e-6, -65e-6);
  aligned = fa_point_json(spec, r, platform, "host")["prediction"]["aligned"]["check"];
  EXPECT_FALSE(aligned["explained"].get<bool>()) << aligned["explanation"];
  // No critical path in the file (every one before): nothing said, as before.
  r.critical_qloop_paired = r.critical_epilogue_paired = r.critical_other_paired = TimeStats{};
  aligned = fa_point_json(spec, r, platform, "host")["prediction"]["aligned"]["check"];
  EXPECT_FALSE(aligned["explained"].get<bool>()) << aligned["explanation"];
}

TEST(FaCriticalPath, RoundDifferencesAreMeansOverEachRoundsLaunches) {
  // 2 rounds of 2 launches at 2 GHz: FA-only parts {1000, 100, 10} cycles each; fused {1400, 120, 12} and
  // {1600, 140, 14} in round 0, {1200, 100, 10} twice in round 1.
  std::vector<std::array<double, 3>> parts[2];
  parts[0] = {{1000, 100, 10}, {1000, 100, 10}, {1000, 100, 10}, {1000, 100, 10}};
  parts[1] = {{1400, 120, 12}, {1600, 140, 14}, {1200, 100, 10}, {1200, 100, 10}};
  const auto d = critical_path_round_differences(parts, 2, 2, 2e9);
  ASSERT_EQ(d[0].size(), 2u);
  EXPECT_NEAR(d[0][0], 500 / 2e9, 1e-15);
  EXPECT_NEAR(d[0][1], 200 / 2e9, 1e-15);
  EXPECT_NEAR(d[1][0], 30 / 2e9, 1e-15);
  EXPECT_NEAR(d[2][0], 3 / 2e9, 1e-15);
  EXPECT_NEAR(d[2][1], 0, 1e-15);
  EXPECT_TRUE(critical_path_round_differences(parts, 2, 3, 2e9)[0].empty());  // 3 rounds need 6 launches each
  EXPECT_TRUE(critical_path_round_differences(parts, 2, 2, 0)[0].empty());
}

TEST(FaCriticalPath, TheResultFileKeepsItAndTheReaderReadsItBack) {
  FaA2aPointResult r = host_8k();
  r.sender_fa = band(400e-6, 398e-6, 402e-6);
  r.sender_fused = band(600e-6, 590e-6, 610e-6);
  r.sender_serial = band(720e-6, 715e-6, 725e-6);
  r.sender_cc = band(640e-6, 630e-6, 650e-6);
  r.e_res_sender_paired = band(200e-6, 190e-6, 210e-6);
  r.critical_qloop_paired = band(196e-6, 185e-6, 205e-6);
  r.critical_epilogue_paired = band(3e-6, 2e-6, 4e-6);
  r.critical_other_paired = band(1e-6, 0, 2e-6);
  const FaA2aPointSpec spec = host_spec();
  // The points[] entry xstage-bench fa_a2a writes (fa_bench.cpp), read back.
  const nlohmann::json point =
      report::to_json(fa_app_point(spec, r, fa_point_json(spec, r, host_platform(), "host")));
  const auto& cp = point["extra"]["measured"]["sender_side"]["critical_path"];
  ASSERT_FALSE(cp.is_null()) << point["extra"]["measured"]["sender_side"];
  EXPECT_EQ(cp["epilogue_paired_s"]["p90"].get<double>(), 4e-6);
  const FaA2aPointResult back = fa_point_result_from_json(point);
  EXPECT_EQ(back.critical_qloop_paired.median_s, 196e-6);
  EXPECT_EQ(back.critical_epilogue_paired.p10_s, 2e-6);
  EXPECT_EQ(back.critical_other_paired.p90_s, 2e-6);
  EXPECT_EQ(point["prediction"]["phase_aware"]["check"]["explained_by"],
            nlohmann::json::array({"critical_path_decomposition"}));
  // Judged again from the file, the check reads the same clock-normalized band as the bench did.
  r.e_res_sender_cycles_paired = band(197e-6, 188e-6, 206e-6);
  const nlohmann::json cn_point =
      report::to_json(fa_app_point(spec, r, fa_point_json(spec, r, host_platform(), "host")));
  const FaA2aPointResult cn_back = fa_point_result_from_json(cn_point);
  EXPECT_EQ(cn_back.e_res_sender_cycles_paired.median_s, 197e-6);
  const auto again = fa_point_json(fa_point_spec_from_json(cn_point), cn_back, host_platform(), "host");
  EXPECT_EQ(again["prediction"]["phase_aware"]["check"], cn_point["prediction"]["phase_aware"]["check"]);
  EXPECT_TRUE(has(cn_point["prediction"]["phase_aware"]["check"]["explanation"], "clock-normalized E_res 197.0 us"))
      << cn_point["prediction"]["phase_aware"]["check"]["explanation"];
  // A file without it (every one before) reads as not measured: the explanation leaves it out.
  nlohmann::json older = point;
  older["extra"]["measured"]["sender_side"].erase("critical_path");
  EXPECT_EQ(fa_point_result_from_json(older).critical_qloop_paired.median_s, 0.0);
}

}  // namespace
}  // namespace xs::attention
