// xstage moe unit tests: the `xstage-predict moe` advisor: hand-computed per-tile numbers for a small shape,
// every recommendation branch, Q not identified -> "not decided", the fluid estimate's identities on the
// emulated rank, the measured-mainloop model, and the choice of the --from-run point.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "xs/common/error.hpp"
#include "xs/moe/io/advice_json.hpp"
#include "xs/moe/advisor/frozen_prediction.hpp"
#include "xs/moe/advisor/moe_advisor.hpp"
#include "xs/moe/point/moe_run_point.hpp"
#include "xs/moe/point/problem.hpp"
#include "xs/moe/point/routing.hpp"

namespace xs::moe {
namespace {

using nlohmann::json;

// h 256, I 128, E 8, top-2, P 2, T 64, K_SM 4, b_n 128. With F = 132 TFLOP/s, F_SM = 1 TFLOP/s:
// T_L1 = 2*128*128*256 / 1e12 = 8.388608 us, T_L2 = 4.194304 us, n1/n2 = 2I/h = 1.
// V_t = 32 KiB, V = 4 * 32768 * 1/2 = 65536 B; R = V / 10 us, so V/R = 10 us; T_iss^0 = 1 us.
constexpr double kTl1 = 8.388608e-6, kTl2 = 4.194304e-6, kV = 65536, kTiss0 = 1e-6;

AdvisorConfig small_config() {
  AdvisorConfig c;
  c.shape.name = "tiny";
  c.shape.hidden = 256;
  c.shape.intermediate = 128;
  c.shape.num_experts = 8;
  c.shape.top_k = 2;
  c.num_ranks = 2;
  c.tokens_per_rank = 64;
  c.num_sms = 4;
  c.block_n = 128;
  c.target = "host";
  return c;
}

AdvisorPlatform platform_with_drain_time(double drain_time_s) {
  AdvisorPlatform p;
  p.drain_rate_bps = kV / drain_time_s;
  p.tiss0_s = kTiss0;
  p.capacity_unavailable = "Q(K) not identified by this calibration";
  p.calibration_target = "host";
  return p;
}

AdvisorThroughput flops() {
  AdvisorThroughput t;
  t.tensor_flops_per_s = 132e12;
  return t;
}

std::map<std::string, AdvisorRow> by_key(const Advice& a) {
  std::map<std::string, AdvisorRow> rows;
  for (const auto& row : a.rows) EXPECT_TRUE(rows.emplace(row.key, row).second) << "duplicate key " << row.key;
  return rows;
}

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

TEST(MoeAdvisor, HandComputedPerTileNumbers) {
  const Advice a = advise(small_config(), platform_with_drain_time(10e-6), flops());
  const MoePrediction& p = a.tile;
  EXPECT_DOUBLE_EQ(p.l1_mainloop_s, kTl1);
  EXPECT_DOUBLE_EQ(p.l2_mainloop_s, kTl2);
  EXPECT_DOUBLE_EQ(p.burst_bytes, kV);
  EXPECT_NEAR(p.drain_time_s, 10e-6, 1e-15);
  EXPECT_NEAR(p.wave_issue_overhead_s, 10e-6 - kTl2 - kTiss0, 1e-15);      // eq. 9: 4.805696 us
  EXPECT_NEAR(p.wave_stall_per_l2_tile_s, 10e-6 - kTl2, 1e-15);            // eq. 15: 5.805696 us
  EXPECT_NEAR(p.interleaved_gap_s, kTl2 + kTl1, 1e-15);                    // 12.582912 us
  EXPECT_EQ(p.interleaved_stall_per_l2_tile_s, 0.0);                       // V/R < G_int
  EXPECT_NEAR(p.interleaved_injection_rate_bps, kV / (kTiss0 + kTl2 + kTl1), 1);  // 4.825 GB/s <= 6.55 GB/s
  EXPECT_TRUE(p.rate_bound_ok);
  EXPECT_NEAR(p.peak_outstanding_bytes, kV - kV / 10e-6 * kTiss0, 1e-6);   // 58982.4 B
  EXPECT_DOUBLE_EQ(p.lead_knee_rows, 2.0);                                 // 128 * 4 / (2 * 128)
  EXPECT_EQ(a.lead_rows, 2);
  const auto rows = by_key(a);
  EXPECT_DOUBLE_EQ(rows.at("tiss0_V_bytes").value, 4 * 32768.0);  // T_iss^0 looked up at K_SM V_t
  EXPECT_DOUBLE_EQ(rows.at("wave_span_s").value, p.drain_time_s);
  EXPECT_FALSE(rows.at("wave_rate_bound_ok").flag);                   // V / (T_iss^0 + T_L2) > R
  EXPECT_EQ(rows.at("recommended_D").value, 2);
}

TEST(MoeAdvisor, QNotIdentifiedIsNotDecidedNeverANumber) {
  const Advice a = advise(small_config(), platform_with_drain_time(10e-6), flops());
  EXPECT_EQ(a.tile.capacity_bound, BoundVerdict::kNotDecided);
  EXPECT_EQ(a.tile.interleaving_sufficient, BoundVerdict::kNotDecided);
  const auto rows = by_key(a);
  EXPECT_EQ(rows.count("Q_bytes"), 0u);
  EXPECT_EQ(rows.at("capacity_bound").text, "not decided");
  EXPECT_EQ(rows.at("capacity_bound").note, "Q(K) not identified by this calibration");
  EXPECT_EQ(rows.at("interleaving_sufficient").text, "not decided");
  EXPECT_EQ(rows.count("t_wave_fluid_s"), 0u);  // only the bracket over Q
  EXPECT_EQ(rows.count("t_wave_fluid_min_s"), 1u);
  EXPECT_EQ(a.schedule, "interleaved");
  EXPECT_TRUE(contains(a.reason, "eq. 14 holds")) << a.reason;
  EXPECT_TRUE(contains(a.reason, "capacity bound is not decided")) << a.reason;
}

TEST(MoeAdvisor, EveryRecommendationBranch) {
  // Coarse experts: V/R = 2 us < T_L2 -> no wave stall.
  Advice a = advise(small_config(), platform_with_drain_time(2e-6), flops());
  EXPECT_EQ(a.tile.wave_stall_per_l2_tile_s, 0.0);
  EXPECT_EQ(a.schedule, "either");
  EXPECT_TRUE(contains(a.reason, "no drain-bound wave stall")) << a.reason;

  // V/R = 30 us: V / (T_iss^0 + G_int) = 4.8 GB/s > R = 2.2 GB/s -> eq. 14 fails.
  a = advise(small_config(), platform_with_drain_time(30e-6), flops());
  EXPECT_FALSE(a.tile.rate_bound_ok);
  EXPECT_EQ(a.tile.interleaving_sufficient, BoundVerdict::kViolated);
  EXPECT_EQ(a.schedule, "interleaved");
  EXPECT_TRUE(contains(a.reason, "eq. 14 fails")) << a.reason;
  EXPECT_TRUE(contains(a.reason, "reduce the aggregate burst")) << a.reason;

  // eq. 14 holds, Q = 10000 B < q_peak = 58982 B -> the capacity bound fails.
  AdvisorPlatform p = platform_with_drain_time(10e-6);
  p.capacity_bytes = 10000;
  a = advise(small_config(), p, flops());
  EXPECT_EQ(a.tile.capacity_bound, BoundVerdict::kViolated);
  EXPECT_TRUE(contains(a.reason, "capacity bound fails")) << a.reason;
  EXPECT_TRUE(a.fluid_at_capacity.has_value());

  // Both hold.
  p.capacity_bytes = 1 << 20;
  a = advise(small_config(), p, flops());
  EXPECT_EQ(a.tile.interleaving_sufficient, BoundVerdict::kMet);
  EXPECT_EQ(a.schedule, "interleaved");
  EXPECT_TRUE(contains(a.reason, "interleaving removes the modelled wave stall")) << a.reason;
  EXPECT_TRUE(contains(a.reason, "D = 2")) << a.reason;
  EXPECT_EQ(by_key(a).count("t_wave_fluid_s"), 1u);
}

TEST(MoeAdvisor, LowerBoundQDecidesOnlyBelowIt) {
  AdvisorPlatform p = platform_with_drain_time(10e-6);
  p.capacity_bytes = 1 << 20;
  p.capacity_is_lower_bound = true;
  Advice a = advise(small_config(), p, flops());
  EXPECT_EQ(a.tile.capacity_bound, BoundVerdict::kMet);  // q_peak 58982 B <= Q's lower bound
  EXPECT_FALSE(a.fluid_at_capacity.has_value());         // a lower bound is no Q for the fluid estimate
  p.capacity_bytes = 1000;                               // q_peak above a lower bound: not decided
  a = advise(small_config(), p, flops());
  EXPECT_EQ(a.tile.capacity_bound, BoundVerdict::kNotDecided);
}

TEST(MoeAdvisor, FluidEstimateOnTheEmulatedRank) {
  AdvisorPlatform platform = platform_with_drain_time(10e-6);
  const Advice a = advise(small_config(), platform, flops());
  // The same routing, built here: compute = blocks * (2 T_L1 + 2 T_L2) / K_SM (2I/b_n = h/b_n = 2 tiles per
  // row block), drain = remote pairs * h * 2 B / R.
  RoutingParams rp;
  rp.num_ranks = 2;
  rp.tokens_per_rank = 64;
  rp.num_experts = 8;
  rp.top_k = 2;
  rp.zipf_alpha = 0.5;
  const MoeProblem problem = build_problem(generate_routing(rp), 256, 128);
  ASSERT_GT(problem.num_remote_pairs, 0u);
  EXPECT_NEAR(a.fluid_no_limit.compute_s, problem.num_row_blocks * (2 * kTl1 + 2 * kTl2) / 4, 1e-12);
  EXPECT_NEAR(a.fluid_no_limit.drain_s, problem.num_remote_pairs * 256.0 * 2 / platform.drain_rate_bps, 1e-12);
  EXPECT_DOUBLE_EQ(a.fluid_no_limit.interleaved_s, std::max(a.fluid_no_limit.compute_s, a.fluid_no_limit.drain_s));
  // Q unknown: the wave schedule's fluid time is bracketed by Q = infinity and Q = 0, and any Q lies inside.
  EXPECT_LE(a.fluid_no_limit.wave_schedule_s, a.fluid_worst.wave_schedule_s);
  EXPECT_GE(a.fluid_no_limit.wave_schedule_s, a.fluid_no_limit.interleaved_s);
  platform.capacity_bytes = 20000;
  const Advice at_q = advise(small_config(), platform, flops());
  ASSERT_TRUE(at_q.fluid_at_capacity.has_value());
  EXPECT_GE(at_q.fluid_at_capacity->wave_schedule_s, a.fluid_no_limit.wave_schedule_s);
  EXPECT_LE(at_q.fluid_at_capacity->wave_schedule_s, a.fluid_worst.wave_schedule_s);
  const auto rows = by_key(a);
  EXPECT_EQ(rows.at("received_pairs").value, double(problem.num_received_pairs));
  EXPECT_EQ(rows.at("emulated_rank").value, problem.emulated_rank);
}

// The advisor reports the wave schedule's fluid time as a bracket [Q = inf, Q = 0] when Q is unknown: that
// needs the time to fall as Q grows. Checked on random wave mixes.
TEST(MoeAdvisor, FluidWaveTimeFallsAsCapacityGrows) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> tiles(0, 50), bytes(0, 4e6);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<WaveWork> waves(1 + trial % 7);
    for (auto& w : waves) w = {tiles(rng), tiles(rng), bytes(rng)};
    double previous = std::numeric_limits<double>::infinity();
    for (double q : {0.0, 1e4, 1e5, 5e5, 1e6, 4e6, 1e8, std::numeric_limits<double>::infinity()}) {
      const double t = fluid_kernel_estimate(waves, 4, 3e-6, 2e-6, 50e9, q).wave_schedule_s;
      EXPECT_LE(t, previous * (1 + 1e-12)) << "trial " << trial << " Q " << q;
      previous = t;
    }
  }
}

TEST(MoeAdvisor, MeasuredMainloopsReplaceTheDerivedOnes) {
  MoeModelInputs in;
  in.hidden = 4096;
  in.intermediate = 2048;
  in.num_sms = 66;
  in.tensor_flops_per_s = 600e12;
  in.drain_rate_bps = 52.5e9;
  in.tiss0_s = 1.9e-6;
  const MoePrediction derived = predict_megamoe(in);
  const MoePrediction same = predict_with_mainloops(in, derived.l1_mainloop_s, derived.l2_mainloop_s);
  EXPECT_NEAR(same.l2_mainloop_s, derived.l2_mainloop_s, 1e-15);
  EXPECT_NEAR(same.wave_stall_per_l2_tile_s, derived.wave_stall_per_l2_tile_s, 1e-15);
  EXPECT_NEAR(same.interleaved_gap_s, derived.interleaved_gap_s, 1e-15);
  EXPECT_NEAR(same.interleaved_injection_rate_bps, derived.interleaved_injection_rate_bps, 1e-3);
  EXPECT_EQ(same.rate_bound_ok, derived.rate_bound_ok);
  // The committed DSv4-Flash run's expert_wave medians: T_L1 25.05 us, T_L2 32.28 us (not 1:2 as one F gives).
  const MoePrediction measured = predict_with_mainloops(in, 25.05e-6, 32.28e-6);
  EXPECT_DOUBLE_EQ(measured.l1_mainloop_s, 25.05e-6);
  EXPECT_NEAR(measured.l2_mainloop_s, 32.28e-6, 1e-15);
  EXPECT_NEAR(measured.interleaved_gap_s, 32.28e-6 + 1.0 * 25.05e-6, 1e-15);  // n1/n2 = 2I/h = 1
  EXPECT_NEAR(measured.wave_stall_per_l2_tile_s, measured.drain_time_s - 32.28e-6, 1e-15);
  EXPECT_THROW(predict_with_mainloops(in, 0, 1e-6), Error);
}

TEST(MoeAdvisor, TargetMismatchSaysThePredictionIsForTheCalibrationsPath) {
  AdvisorConfig c = small_config();
  c.target = "peer:1";
  const Advice a = advise(c, platform_with_drain_time(10e-6), flops());
  EXPECT_TRUE(contains(a.reason, "the prediction is for the calibration's path")) << a.reason;
  EXPECT_FALSE(by_key(a).at("target_matches").flag);
  AdvisorPlatform no_file = platform_with_drain_time(10e-6);
  no_file.calibration_target.clear();  // --R/--tiss0: the target is not known, nothing to compare
  const Advice b = advise(c, no_file, flops());
  EXPECT_FALSE(contains(b.reason, "calibration's path")) << b.reason;
  EXPECT_EQ(by_key(b).count("target_matches"), 0u);
}

TEST(MoeAdvisor, BadConfigurationsNameTheField) {
  const auto field_of = [](AdvisorConfig c, AdvisorThroughput t) {
    try {
      advise(c, platform_with_drain_time(10e-6), t);
    } catch (const Error& e) {
      return e.field();
    }
    return std::string("no error");
  };
  AdvisorConfig c = small_config();
  c.block_n = 64;
  EXPECT_EQ(field_of(c, flops()), "block_n");
  c = small_config();
  c.precision = "fp4";
  EXPECT_EQ(field_of(c, flops()), "precision");
  c = small_config();
  c.shape.hidden = 192;  // not a multiple of b_n = 128
  EXPECT_EQ(field_of(c, flops()), "hidden");
  EXPECT_EQ(field_of(small_config(), AdvisorThroughput{}), "throughput");
}

// ---- --from-run point selection -------------------------------------------------------------------------
json point(const std::string& status, const std::string& target, int tokens, double l2_s) {
  return {{"status", status},
          {"suite", "megamoe"},
          {"axes",
           {{"shape", "tiny"}, {"precision", "bf16"}, {"K_SM", 4}, {"block_n", 128}, {"target", target}, {"T", tokens},
            {"P", 8}, {"routing", "skewed"}, {"zipf_alpha", 0.5}, {"gain", 1.0}, {"routing_seed", 1}}},
          {"variants", {{"expert_wave", {{"median", 2e-3}}}, {"interleaved", {{"median", 1e-3}}}}},
          {"extra",
           {{"received_pairs", 10},
            {"remote_pairs", 7},
            {"variants", {{"expert_wave", {{"tiles", {{"l1_mainloop_median_s", 1e-6}, {"l2_mainloop_median_s", l2_s}}}}}}}}}};
}

RunPointQuery tiny_query() {
  RunPointQuery q;
  q.shape.name = "tiny";
  q.num_sms = 4;
  return q;
}

// The bench builds the problem once for the advisor and the runner: the overload must give the same advice,
// and refuse a problem built from another configuration.
TEST(MoeAdvisor, PrebuiltProblemGivesTheSameAdvice) {
  const AdvisorConfig c = small_config();
  const AdvisorPlatform p = platform_with_drain_time(10e-6);
  const MoeProblem problem =
      build_problem(generate_routing(routing_params_of(c)), c.shape.hidden, c.shape.intermediate);
  const Advice fresh = advise(c, p, flops());
  const Advice given = advise(c, p, flops(), problem);
  ASSERT_EQ(fresh.rows.size(), given.rows.size());
  for (std::size_t i = 0; i < fresh.rows.size(); ++i) {
    EXPECT_EQ(fresh.rows[i].key, given.rows[i].key);
    EXPECT_EQ(fresh.rows[i].value, given.rows[i].value) << fresh.rows[i].key;
    EXPECT_EQ(fresh.rows[i].text, given.rows[i].text) << fresh.rows[i].key;
  }
  AdvisorConfig other = c;
  other.tokens_per_rank = 128;
  EXPECT_THROW(advise(other, p, flops(), problem), Error);
}

// advice_json: the summary matches the report rows it was built from; Q not identified gives a bracket
// whose ends are the fluid times at Q = inf and Q = 0, never a single number.
// moe::advice_differs_at_bracket_ends, the one home of "advise at the bracket ends" for xstage-predict moe and
// moe-score's frozen predictions (issue 27 item 4): nothing flagged, a flagged bracket that keeps the answer, one
// whose end changes it (R x 10: V/R and T_iss^0 fall below T_L2, no wave stall, "either"), an unbounded end.
TEST(MoeAdvisor, AdviceAtTheBracketEnds) {
  const AdvisorConfig c = small_config();
  const MoeProblem problem =
      build_problem(generate_routing(routing_params_of(c)), c.shape.hidden, c.shape.intermediate);
  const AdvisorThroughput t = flops();
  CalibrationInputs cal;
  cal.platform = platform_with_drain_time(10e-6);
  const double r = cal.platform.drain_rate_bps;
  cal.drain_rate_bps = {r, r, r, "", "test"};
  cal.tiss0_s = {kTiss0, kTiss0, kTiss0, "", "test"};
  const Advice a = advise(c, cal.platform, t, problem);
  ASSERT_EQ(a.schedule, "interleaved");
  EXPECT_FALSE(has_flag(cal));
  EXPECT_EQ(advice_differs_at_bracket_ends(c, cal, t, problem, a), "");

  cal.tiss0_s = {kTiss0, 0.9 * kTiss0, 1.1 * kTiss0, "unconstrained row", "test"};
  EXPECT_TRUE(has_flag(cal));
  EXPECT_EQ(advice_differs_at_bracket_ends(c, cal, t, problem, a), "");

  cal.drain_rate_bps = {r, r, 10 * r, "R is a lower bound", "test"};
  const std::string differs = advice_differs_at_bracket_ends(c, cal, t, problem, a);
  EXPECT_TRUE(contains(differs, "the advisor says either")) << differs;

  cal.drain_rate_bps = {r, r, r, "", "test"};
  cal.tiss0_s.high = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(contains(advice_differs_at_bracket_ends(c, cal, t, problem, a), "unbounded"));
}

TEST(MoeAdvisor, AdviceJsonSummaryMatchesTheRows) {
  const Advice a = advise(small_config(), platform_with_drain_time(10e-6), flops());
  const json j = advice_json(a);
  const auto rows = by_key(a);
  EXPECT_EQ(j.at("schedule"), rows.at("recommended_schedule").text);
  EXPECT_EQ(j.at("D").get<int>(), static_cast<int>(rows.at("recommended_D").value));
  EXPECT_DOUBLE_EQ(j.at("fluid_interleaved_s").get<double>(), rows.at("t_interleaved_fluid_s").value);
  EXPECT_DOUBLE_EQ(j.at("fluid_wave_s").get<double>(), rows.at("t_wave_fluid_min_s").value);
  EXPECT_DOUBLE_EQ(j.at("fluid_wave_worst_s").get<double>(), rows.at("t_wave_fluid_max_s").value);
  EXPECT_DOUBLE_EQ(j.at("predicted_speedup_low").get<double>(), rows.at("fluid_speedup_min").value);
  EXPECT_DOUBLE_EQ(j.at("predicted_speedup_high").get<double>(), rows.at("fluid_speedup_max").value);
  EXPECT_LT(j.at("predicted_speedup_low").get<double>(), j.at("predicted_speedup_high").get<double>());
  EXPECT_EQ(j.at("report").at("capacity_bound"), "not decided");
  EXPECT_TRUE(j.at("report").at("eq14_rate_bound_ok").is_boolean());
  AdvisorPlatform with_q = platform_with_drain_time(10e-6);
  with_q.capacity_bytes = 1e6;
  with_q.capacity_unavailable.clear();
  const json jq = advice_json(advise(small_config(), with_q, flops()));
  EXPECT_DOUBLE_EQ(jq.at("predicted_speedup_low").get<double>(), jq.at("predicted_speedup_high").get<double>());
}

TEST(MoeRunPoint, PrefersTheExactPointAndSaysWhichWasUsed) {
  const json file = {{"points",
                      {point("failed", "host", 6976, 9e-6), point("ok", "local", 6976, 8e-6),
                       point("ok", "host", 2048, 7e-6), point("ok", "host", 6976, 6e-6)}}};
  RunPoint r = select_run_point(file, "f.json", tiny_query());
  EXPECT_EQ(r.source, "f.json points[3]");
  EXPECT_DOUBLE_EQ(r.l2_mainloop_s, 6e-6);
  EXPECT_TRUE(r.differences.empty());
  EXPECT_TRUE(r.same_routing);
  EXPECT_DOUBLE_EQ(*r.wave_median_s, 2e-3);
  EXPECT_DOUBLE_EQ(*r.remote_pairs, 7);
  // Without the exact one, the point with another T is used, and the difference is named.
  const json other_t = {{"points", {point("ok", "host", 2048, 7e-6)}}};
  r = select_run_point(other_t, "f.json", tiny_query());
  EXPECT_DOUBLE_EQ(r.l2_mainloop_s, 7e-6);
  ASSERT_EQ(r.differences.size(), 1u);
  EXPECT_TRUE(contains(r.differences[0], "T=2048")) << r.differences[0];
  EXPECT_FALSE(r.same_routing);
}

TEST(MoeRunPoint, NoMatchListsWhatTheFileHolds) {
  const json file = {{"points", {point("ok", "local", 6976, 8e-6), point("failed", "host", 6976, 8e-6)}}};
  try {
    select_run_point(file, "f.json", tiny_query());
    FAIL() << "expected an input error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "--from-run");
    EXPECT_TRUE(contains(e.what(), "target=local")) << e.what();
    EXPECT_TRUE(contains(e.what(), "(failed)")) << e.what();
  }
  const json no_tiles = {{"points", {point("ok", "host", 6976, 0)}}};
  EXPECT_THROW(select_run_point(no_tiles, "f.json", tiny_query()), Error);
  EXPECT_THROW(select_run_point(json::object(), "f.json", tiny_query()), Error);
}

TEST(MoeRunPoint, CommittedDsv4FlashRun) {
  const std::string path = std::string(XS_TEST_DATA_DIR) + "/../../results/h200/megamoe/megamoe-dsv4_flash-bn128.json";
  RunPointQuery q;
  q.shape.name = "dsv4_flash";
  q.precision = "fp8";
  q.num_sms = 132;
  const RunPoint r = load_run_point(path, q);
  EXPECT_TRUE(contains(r.source, "points[3]")) << r.source;
  EXPECT_TRUE(contains(r.description, "fp8")) << r.description;
  EXPECT_GT(r.l1_mainloop_s, 0);
  EXPECT_GT(r.l2_mainloop_s, 0);
  EXPECT_TRUE(r.same_routing);
  q.target = "local";
  EXPECT_TRUE(contains(load_run_point(path, q).description, "target=local"));
}

// dit_moe at K_SM 66 (P1 = 88 Linear-1 tiles per row > K_SM, T_L2 = 4 T_L1): eq. 16 gives D = 1, where the
// replay finds the CTAs waiting on one another; the advisor moves D up and says why. A shape whose eq. 16
// lead replays well keeps it.
TEST(MoeAdvisor, ScheduleReplayMovesDOffEq16OnlyWhereItsLeadIsSlow) {
  AdvisorConfig c = small_config();
  c.shape = MoeShape{"dit_moe", "DiT-MoE", "test", 1408, 5632, 16, 2, false};
  c.num_ranks = 8;
  c.tokens_per_rank = 2048;
  c.num_sms = 66;
  c.routing = "skewed";
  c.zipf_alpha = 0.5;
  AdvisorPlatform platform = platform_with_drain_time(10e-6);
  AdvisorThroughput t;
  t.tensor_flops_per_s = 708e12;
  const Advice dit = advise(c, platform, t);
  EXPECT_EQ(dit.knee_lead_rows, 1);
  EXPECT_GT(dit.lead_rows, 1);
  EXPECT_GT(dit.replay_interleaved_knee_s, 1.02 * dit.replay_leads.makespan_s);
  EXPECT_TRUE(contains(dit.reason, "schedule replay")) << dit.reason;
  const auto rows = by_key(dit);
  EXPECT_EQ(rows.at("recommended_D").value, dit.lead_rows);
  EXPECT_EQ(rows.at("D_knee_lead").value, 1);
  EXPECT_GT(rows.at("replay_interleaved_at_D_knee_s").value, rows.at("replay_interleaved_s").value);

  const Advice tiny = advise(small_config(), platform, flops());
  EXPECT_EQ(tiny.lead_rows, tiny.knee_lead_rows);
}

// Every key the advisor reports is documented in docs/predict-moe.md's key table.
TEST(MoeAdvisor, EveryReportedKeyIsDocumented) {
  std::ifstream in(std::string(XS_TEST_DATA_DIR) + "/../../docs/predict-moe.md");
  ASSERT_TRUE(in.good());
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& row : advise(small_config(), platform_with_drain_time(10e-6), flops()).rows)
    EXPECT_TRUE(contains(doc, "`" + row.key + "`")) << row.key << " is not in docs/predict-moe.md";
}

}  // namespace
}  // namespace xs::moe
