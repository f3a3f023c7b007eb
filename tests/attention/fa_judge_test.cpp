// Tests for attention/judge (issue 27): the frozen prediction reads nothing of the judged launches (every
// measured field of the fused, serial and cc launches mutated, the prediction does not move; an FA-only field
// mutated, it does: the test can fail), calibration terms honour the fitter's flags (an unconstrained row or a
// value beyond the table is a bracket, never a point), the scorer's outcomes and its bootstrap interval, and
// the constant predictors through the same scorer.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "xs/attention/judge/fa_judgement.hpp"
#include "xs/common/stats.hpp"

namespace xs::attention::judge {
namespace {

using nlohmann::json;

Summary rounds_of(std::mt19937& rng, double median_s, double spread, int n = 10) {
  std::uniform_real_distribution<double> u(1 - spread, 1 + spread);
  std::vector<double> s;
  for (int i = 0; i < n; ++i) s.push_back(median_s * u(rng));
  return summarize(s);
}
Summary diff(const Summary& a, const Summary& b) {
  std::vector<double> d;
  for (std::size_t i = 0; i < a.samples.size(); ++i) d.push_back(a.samples[i] - b.samples[i]);
  return summarize(d);
}

// A host point like the committed 8K ones: every field nonzero.
FaA2aPointResult host_point() {
  std::mt19937 rng(7);
  FaA2aPointResult r;
  r.num_ctas = 132;
  r.num_tiles = 512;
  r.volume_bytes = r.remote_bytes = 8.0 * 8192 * 128 * 2;
  r.t_fa = rounds_of(rng, 411e-6, 0.01);
  r.t_fused = rounds_of(rng, 618e-6, 0.01);
  r.t_serial = rounds_of(rng, 745e-6, 0.01);
  r.t_cc = rounds_of(rng, 645e-6, 0.01);
  r.t_a2a = rounds_of(rng, 320e-6, 0.01);
  r.e_res_paired = diff(r.t_fused, r.t_fa);
  r.e_cc_paired = diff(r.t_cc, r.t_fa);
  r.sender_fa = rounds_of(rng, 411e-6, 0.01);
  r.sender_fused = rounds_of(rng, 616e-6, 0.01);
  r.sender_serial = rounds_of(rng, 740e-6, 0.01);
  r.sender_cc = rounds_of(rng, 647e-6, 0.01);
  r.e_res_sender_paired = diff(r.sender_fused, r.sender_fa);
  r.e_cc_sender_paired = diff(r.sender_cc, r.sender_fa);
  r.e_res_sender_cycles_paired = diff(r.sender_fused, r.sender_fa);
  r.clock_fa_hz = rounds_of(rng, 1.71e9, 0.01);
  r.clock_fused_hz = rounds_of(rng, 1.70e9, 0.01);
  r.sigma_rounds_fa_cycles = rounds_of(rng, 2616, 0.01);
  r.sigma_rounds_fused_cycles = rounds_of(rng, 3569, 0.03);
  r.critical_qloop_paired = rounds_of(rng, 180e-6, 0.05);
  r.critical_epilogue_paired = rounds_of(rng, 8e-6, 0.2);
  r.critical_other_paired = rounds_of(rng, 3e-6, 0.5);
  r.sm_clock_hz = 1.697e9;
  r.sm_clock_fa_hz = 1.698e9;
  r.sigma_s_per_kv_tile = 2.165e-6;
  r.sigma_fa_s_per_kv_tile = 1.529e-6;
  r.qloop_fused = rounds_of(rng, 138e-6, 0.15);
  r.store_span_fused = rounds_of(rng, 0.9e-6, 0.2);
  r.store_phase_spread_median_s = 85e-6;
  r.peak_concurrent_storers = 49;
  r.mean_concurrent_storers = 8.5;
  r.fa_only_layout = "ulysses";
  r.verified = true;
  return r;
}

FaA2aPointSpec host_spec(int m = 8192) {
  FaA2aPointSpec s;
  s.seq_len = m;
  s.num_heads = 8;
  s.target = "host";
  return s;
}

// A host-like calibration: constrained floor rows at K = 132 up to 8 KiB per CTA, the 16 KiB row unconstrained
// (the gap sweep stopped short), Q(132) not identified.
FaCalibration host_calibration() {
  return fa_calibration_from_model(json::parse(R"({"R_Bps": 52.3e9, "R_ci95": [50.9e9, 56.5e9],
      "tiss0": [
        {"K": 132, "V_bytes": 540672, "s": 1.08e-7, "ci95": [1.07e-7, 1.13e-7], "constrained": true},
        {"K": 132, "V_bytes": 1081344, "s": 1.27e-7, "ci95": [1.26e-7, 1.30e-7], "constrained": true},
        {"K": 132, "V_bytes": 2162688, "s": 2.9e-5, "ci95": null, "constrained": false, "source": "max_gap"}],
      "Q": [{"K": 132, "bytes": null, "bound": "not_identified"}]})"), "host-like test calibration");
}

json prediction_of(const FaA2aPointResult& r, const FaCalibration& cal) {
  const FaJudgement j = judge_point(host_spec(), r, cal);
  json out = to_json(j.prediction);
  out["inputs"] = to_json(j.inputs);
  return out;
}

TEST(FaJudge, NoMeasuredFieldOfTheJudgedLaunchesMovesThePrediction) {
  const FaCalibration cal = fa_calibration_from_model(json::parse(R"({"R_Bps": 52e9, "R_ci95": [50e9, 54e9],
      "tiss0": [{"K": 132, "V_bytes": 4325376, "s": 0.5e-6, "ci95": [0.45e-6, 0.55e-6], "constrained": true}],
      "Q": [{"K": 132, "bytes": 3.5e6, "ci95": [3.45e6, 3.55e6], "bound": "fit"}]})"), "identified");
  const FaA2aPointResult base = host_point();
  const json before = prediction_of(base, cal);
  ASSERT_TRUE(before["decided"].get<bool>()) << before.dump();
  auto scale = [](Summary& t, double f) {
    t.median *= f; t.p10 *= f; t.p90 *= f;
    for (double& x : t.samples) x *= f;
  };
  // Every field of the fused, serial and completion-coupled launches, and the paired differences.
  const std::vector<std::pair<const char*, std::function<void(FaA2aPointResult&)>>> judged = {
      {"t_fused", [&](auto& r) { scale(r.t_fused, 3); }},
      {"t_serial", [&](auto& r) { scale(r.t_serial, 3); }},
      {"t_cc", [&](auto& r) { scale(r.t_cc, 3); }},
      {"t_a2a", [&](auto& r) { scale(r.t_a2a, 3); }},
      {"e_res_paired", [&](auto& r) { scale(r.e_res_paired, 3); }},
      {"e_res_sender_paired", [&](auto& r) { scale(r.e_res_sender_paired, 3); }},
      {"e_res_sender_cycles_paired", [&](auto& r) { scale(r.e_res_sender_cycles_paired, 3); }},
      {"sender_fused", [&](auto& r) { scale(r.sender_fused, 3); }},
      {"sender_serial", [&](auto& r) { scale(r.sender_serial, 3); }},
      {"sender_cc", [&](auto& r) { scale(r.sender_cc, 3); }},
      {"sigma under load", [&](auto& r) { r.sigma_s_per_kv_tile *= 3; }},
      {"sigma_rounds_fused_cycles", [&](auto& r) { scale(r.sigma_rounds_fused_cycles, 3); }},
      {"clock_fused_hz", [&](auto& r) { scale(r.clock_fused_hz, 0.5); }},
      {"sm_clock_hz (fused)", [&](auto& r) { r.sm_clock_hz *= 0.5; }},
      {"qloop_fused", [&](auto& r) { scale(r.qloop_fused, 3); }},
      {"store spans", [&](auto& r) { scale(r.store_span_fused, 3); scale(r.store_span_cc, 3); }},
      {"alignment", [&](auto& r) { r.store_phase_spread_median_s = 0; r.peak_concurrent_storers = 132; }},
      {"critical path", [&](auto& r) { scale(r.critical_qloop_paired, 3); scale(r.critical_epilogue_paired, 10); }},
      {"verification", [&](auto& r) { r.verified = false; r.rel_error = 1; }},
  };
  for (const auto& [name, mutate] : judged) {
    FaA2aPointResult r = base;
    mutate(r);
    EXPECT_EQ(prediction_of(r, cal), before) << "the prediction moved with " << name;
  }
  // The FA-only variant is the prediction's input: mutating it must move the prediction.
  FaA2aPointResult slower = base;
  scale(slower.sigma_rounds_fa_cycles, 0.25);
  EXPECT_NE(prediction_of(slower, cal)["G_qloop_s"], before["G_qloop_s"]);
}

TEST(FaJudge, AnUnconstrainedRowIsABracketNeverAPoint) {
  const FaCalibration cal = host_calibration();
  // At the unconstrained row's own V: above by the row (a measured issue time), below by the 8 KiB row.
  const Term at_row = tiss0_term(cal, 132, 2162688);
  EXPECT_FALSE(at_row.has_point());
  EXPECT_DOUBLE_EQ(at_row.range.lo, 1.26e-7);
  EXPECT_DOUBLE_EQ(at_row.range.hi, 2.9e-5);
  EXPECT_NE(at_row.why.find("not identified"), std::string::npos) << at_row.why;
  // Beyond the table (FA's V = 132 x 32 KiB): nothing bounds it above; below by the constrained rows.
  const Term beyond = tiss0_term(cal, 132, 4325376);
  EXPECT_FALSE(beyond.has_point());
  EXPECT_TRUE(std::isinf(beyond.range.hi));
  // A measured burst of the calibration at a larger V bounds it above.
  FaCalibration with_burst = cal;
  with_burst.bursts.push_back({132, 4325376, 21e-6, "isolated"});
  EXPECT_DOUBLE_EQ(tiss0_term(with_burst, 132, 4325376).range.hi, 21e-6);
  // Between two constrained rows: interpolated point inside their interval.
  const Term between = tiss0_term(cal, 132, 800000);
  ASSERT_TRUE(between.has_point());
  EXPECT_GT(between.point, 1.08e-7);
  EXPECT_LT(between.point, 1.27e-7);
  // No row at this K at all.
  EXPECT_TRUE(std::isinf(tiss0_term(cal, 66, 1e6).range.hi));
}

TEST(FaJudge, ADrainRateAboveTheCopyEngineIsNotAPoint) {
  FaCalibration cal = fa_calibration_from_model(json::parse(R"({"R_Bps": 87.6e9, "R_ci95": [80e9, 95e9],
      "tiss0": [{"K": 132, "V_bytes": 4325376, "s": 0.5e-6}], "Q": []})"), "absorbing");
  cal.copy_engine_bps = 55.2e9;
  const Term r = drain_rate_term(cal);
  EXPECT_FALSE(r.has_point());
  EXPECT_DOUBLE_EQ(r.range.hi, 55.2e9);
  cal.copy_engine_bps = 100e9;
  EXPECT_TRUE(drain_rate_term(cal).has_point());
}

TEST(FaJudge, TheMagnitudeFollowsTheAlignedCaseByHand) {
  // R 50 GB/s, T_iss^0 1 us, Q 1 MB, sigma_FA 1.5 us/tile, M = 8192 (64 KV tiles), K = 132, B_t = 32 KiB.
  const FaCalibration cal = constant_fa_calibration(50e9, 1e-6, 1e6);
  FaA2aPointResult r = host_point();
  r.sigma_rounds_fa_cycles = summarize({1.5e-6 * 1.71e9});
  r.clock_fa_hz = summarize({1.71e9});
  const FaJudgement j = judge_point(host_spec(), r, cal);
  const double v = 132 * 32768.0, n_t = 4, g = 1.5e-6 * 64;
  const double drain = std::max(0.0, std::max(0.0, v / 50e9 - 1e-6 - g) - 0.75e-6);
  const double cap = std::max(0.0, (v - 50e9 * 1e-6) - 1e6) / 50e9;
  EXPECT_NEAR(j.prediction.e_res_point_s, n_t * 1e-6 + n_t * std::max(drain, cap), 1e-12);
  EXPECT_EQ(j.prediction.design, "reshape");  // q_peak = 4.28 MB > Q
  EXPECT_TRUE(j.prediction.decided);
  EXPECT_EQ(j.prediction.interference, "not calibrated");
}

TEST(FaJudge, NotDecidedOnlyWhereTheModelDecidesNothing) {
  // The host-like calibration leaves T_iss^0 at FA's V unbounded above: the model decides nothing, and says why.
  const FaJudgement j = judge_point(host_spec(), host_point(), host_calibration());
  EXPECT_FALSE(j.prediction.decided);
  EXPECT_EQ(j.model.result, "not decided");
  EXPECT_NE(j.model.reason.find("T_iss^0(K = 132"), std::string::npos) << j.model.reason;
  // The trivial predictors are still decided and scored.
  EXPECT_EQ(j.zero.result, "disagrees");
  EXPECT_FALSE(j.unhidden.result.empty());
}

TEST(FaJudge, TheScorerAgreesDisagreesAndSaysWhichWay) {
  const MeasuredResidual m = measured_residual({200e-6, 205e-6, 210e-6, 198e-6, 207e-6, 203e-6, 201e-6}, "sender_side");
  ASSERT_TRUE(m.measured);
  EXPECT_DOUBLE_EQ(m.median_s, 203e-6);
  EXPECT_LE(m.median_ci95.lo, 203e-6);
  EXPECT_GE(m.median_ci95.hi, 203e-6);
  EXPECT_GE(m.median_ci95.lo, 198e-6);
  EXPECT_LE(m.median_ci95.hi, 210e-6);
  EXPECT_EQ(score({190e-6, 202e-6}, NAN, true, "", m).result, "agrees");
  const Outcome under = score({100e-6, 150e-6}, 120e-6, true, "", m);
  EXPECT_EQ(under.result, "disagrees");
  EXPECT_EQ(under.direction, "under");
  EXPECT_NEAR(under.relative_error, (120.0 - 203.0) / 203.0, 1e-9);
  EXPECT_EQ(score({300e-6, 400e-6}, NAN, true, "", m).direction, "over");
  EXPECT_EQ(score({0, INFINITY}, NAN, false, "T_iss^0 unbounded", m).result, "not decided");
  // Rule fa_frozen_aligned_refutable: a wide (not decided) interval that meets the measurement is not decided...
  const Outcome wide_meets = score({1e-6, 250e-6}, NAN, false, "too wide", m);
  EXPECT_EQ(wide_meets.result, "not decided");
  EXPECT_FALSE(wide_meets.interval_decided);
  // ...one the measurement lies outside is refuted, with the direction (v2 said "not decided" here).
  const Outcome wide_below = score({0.5e-6, 92.8e-6}, NAN, false, "too wide", m);
  EXPECT_EQ(wide_below.result, "disagrees");
  EXPECT_EQ(wide_below.direction, "under");
  EXPECT_FALSE(wide_below.interval_decided);
  EXPECT_NE(wide_below.reason.find("refutes"), std::string::npos) << wide_below.reason;
  EXPECT_EQ(score({300e-6, 30000e-6}, NAN, false, "too wide", m).direction, "over");
  // An interval touching the measured interval's end meets it.
  EXPECT_EQ(score({1e-6, m.median_ci95.lo}, NAN, false, "too wide", m).result, "not decided");
  EXPECT_EQ(score({m.median_ci95.hi, m.median_ci95.hi}, NAN, true, "", m).result, "agrees");
  // No interval at all (NaN) decides nothing and refutes nothing.
  EXPECT_EQ(score({NAN, NAN}, NAN, false, "no interval", m).result, "not decided");
  // The tally counts the disagreements that came from wide intervals apart.
  Tally t;
  t.add(wide_below);
  t.add(under);
  t.add(wide_meets);
  EXPECT_EQ(t.disagrees, 2);
  EXPECT_EQ(t.disagrees_wide, 1);
  EXPECT_EQ(t.not_decided, 1);
  // The constant predictor through the same scorer: zero disagrees with an exposed residual...
  EXPECT_EQ(score({0, 0}, 0, true, "", m).result, "disagrees");
  // ...and agrees with one whose interval holds zero.
  EXPECT_EQ(score({0, 0}, 0, true, "", measured_residual({-2e-6, 1e-6, 3e-6, -1e-6, 0.5e-6}, "x")).result, "agrees");
  // Too few rounds: no outcome at all.
  const MeasuredResidual few = measured_residual({1e-6, 2e-6}, "x");
  EXPECT_FALSE(few.measured);
  EXPECT_TRUE(score({0, 1}, NAN, true, "", few).result.empty());
  // The interval is a fixed-seed bootstrap: the same data, the same interval.
  const MeasuredResidual again = measured_residual({200e-6, 205e-6, 210e-6, 198e-6, 207e-6, 203e-6, 201e-6}, "sender_side");
  EXPECT_EQ(again.median_ci95.lo, m.median_ci95.lo);
  EXPECT_EQ(again.median_ci95.hi, m.median_ci95.hi);
}

TEST(FaJudge, AWideMeasurementIsSaidAndCountedApartButGivesOnlyTheThreeOutcomes) {
  // Rule v6 (v4's precision test kept as a label): rounds scattered 0..400 us around a 200 us median: the
  // median's 95% interval is far wider than 20% of it. With T_FA = 1 ms (1% = 10 us) the measurement is wide.
  MeasuredResidual m = measured_residual({0, 50e-6, 100e-6, 200e-6, 300e-6, 350e-6, 400e-6}, "sender_side");
  ASSERT_TRUE(m.measured);
  set_decisiveness(m, 1e-3);
  EXPECT_FALSE(m.decisive);
  EXPECT_NEAR(m.tolerance_s, 0.2 * m.median_s, 1e-12);
  // A sharp prediction that meets it agrees, and says the measurement was wide.
  const Outcome sharp = score({150e-6, 180e-6}, 165e-6, true, "", m);
  EXPECT_EQ(sharp.result, "agrees");
  EXPECT_TRUE(sharp.on_a_wide_measurement);
  EXPECT_NE(sharp.reason.find("could not have refuted"), std::string::npos) << sharp.reason;
  // The constant zero is judged alike: it agrees where the wide measurement reaches zero, else it is refuted.
  const Outcome zero = score({0, 0}, 0, true, "", m);
  EXPECT_EQ(zero.result, m.median_ci95.lo <= 0 ? "agrees" : "disagrees");
  // A wide prediction that meets it is the model deciding nothing, whatever the measurement.
  EXPECT_EQ(score({1e-6, 1e-3}, NAN, false, "too wide", m).result, "not decided");
  // Disjoint intervals still refute: a refutation needs no precision.
  const Outcome refuted = score({2e-3, 3e-3}, NAN, true, "", m);
  EXPECT_EQ(refuted.result, "disagrees");
  Tally t;
  t.add(sharp);
  t.add(refuted);
  EXPECT_EQ(t.agrees, 1);
  EXPECT_EQ(t.agrees_wide_measurement, 1);
  EXPECT_EQ(t.disagrees, 1);
  const nlohmann::json tj = t.to_json();
  EXPECT_EQ(tj.at("agrees_on_a_wide_measurement"), 1);
  EXPECT_FALSE(tj.contains("measurement_not_decisive"));
  EXPECT_EQ(to_json(sharp).at("on_a_wide_measurement"), true);
  // The same rounds against a long kernel (T_FA = 100 ms: 1% = 1 ms) are decisive: the bar is that coarse.
  MeasuredResidual coarse = measured_residual({0, 50e-6, 100e-6, 200e-6, 300e-6, 350e-6, 400e-6}, "sender_side");
  set_decisiveness(coarse, 100e-3);
  EXPECT_TRUE(coarse.decisive);
  EXPECT_EQ(score({150e-6, 180e-6}, 165e-6, true, "", coarse).result, "agrees");
  // Tight rounds are decisive at any T_FA.
  MeasuredResidual tight = measured_residual({200e-6, 205e-6, 210e-6, 198e-6, 207e-6, 203e-6, 201e-6}, "sender_side");
  set_decisiveness(tight, 1e-3);
  EXPECT_TRUE(tight.decisive);
  EXPECT_EQ(score({190e-6, 202e-6}, NAN, true, "", tight).result, "agrees");
}

TEST(FaJudge, AMeasurementBelowZeroIsJudgedAsAnIntervalOfENonNegative) {
  // Rule v5: the fused kernel faster than FA-only in every resample (tight rounds around -300 us), T_FA 10 ms
  // (tolerance 100 us). E_res >= 0, so the measurement says "E_res in [0, 100 us]": E_res = 0 agrees, an
  // exposure of milliseconds is refuted, a prediction within the tolerance meets it.
  MeasuredResidual m = measured_residual({-300e-6, -305e-6, -298e-6, -310e-6, -302e-6, -299e-6, -301e-6}, "x");
  set_decisiveness(m, 10e-3);
  EXPECT_TRUE(m.below_zero);
  EXPECT_TRUE(m.decisive);
  EXPECT_DOUBLE_EQ(m.e_res_ci95.lo, 0);
  EXPECT_NEAR(m.e_res_ci95.hi, 100e-6, 1e-12);
  EXPECT_EQ(score({0, 0}, 0, true, "", m).result, "agrees");
  const Outcome big = score({3e-3, 10e-3}, NAN, true, "", m);
  EXPECT_EQ(big.result, "disagrees");
  EXPECT_EQ(big.direction, "over");
  EXPECT_NE(big.reason.find("judged as E_res in"), std::string::npos) << big.reason;
  EXPECT_EQ(score({50e-6, 90e-6}, NAN, true, "", m).result, "agrees");
  // No cliff at zero: an interval reaching 4 us above zero from -638 us (T_FA 44 ms: tolerance 440 us) does not
  // refute a prediction of 5 us, and neither does one wholly below zero.
  MeasuredResidual straddle = measured_residual({-640e-6, -600e-6, -300e-6, -150e-6, -100e-6, 0, 4e-6}, "x");
  set_decisiveness(straddle, 44e-3);
  EXPECT_FALSE(straddle.below_zero);
  EXPECT_NE(score({5e-6, 20e-6}, NAN, true, "", straddle).result, "disagrees");
  // The interval score is charged at max(median, 0): E_res = 0 scores 0 against a negative median.
  EXPECT_DOUBLE_EQ(score({0, 0}, 0, true, "", m).interval_score_s, 0.0);
}

TEST(FaJudge, TheIntervalScoreRanksASharpRightIntervalAboveAWideOrAWrongOne) {
  // IS = width + 40 * miss: a constant factor-of-two interval that happens to meet the measurement loses to a
  // sharp one that meets it, and a sharp one that misses by a lot loses to both.
  EXPECT_DOUBLE_EQ(interval_score({100e-6, 120e-6}, 110e-6), 20e-6);
  EXPECT_DOUBLE_EQ(interval_score({110e-6, 220e-6}, 115e-6), 110e-6);
  EXPECT_NEAR(interval_score({0, 0}, 115e-6), 40 * 115e-6, 1e-12);
  EXPECT_NEAR(interval_score({150e-6, 160e-6}, 115e-6), 10e-6 + 40 * 35e-6, 1e-12);
  EXPECT_TRUE(std::isinf(interval_score({10e-6, INFINITY}, 115e-6)));
  EXPECT_TRUE(std::isnan(interval_score({NAN, NAN}, 115e-6)));
  // Through the scorer and the tally: every measured row is ranked, decisive or not, and a predictor with no
  // interval scores inf there (abstaining is not rewarded); inf counts as the worst.
  MeasuredResidual tight = measured_residual({200e-6, 205e-6, 210e-6, 198e-6, 207e-6, 203e-6, 201e-6}, "x");
  set_decisiveness(tight, 1e-3);
  MeasuredResidual wide = measured_residual({0, 50e-6, 100e-6, 200e-6, 300e-6, 350e-6, 400e-6}, "x");
  set_decisiveness(wide, 1e-3);
  Tally t;
  t.add(score({190e-6, 210e-6}, NAN, true, "", tight));
  t.add(score({0, INFINITY}, NAN, false, "unbounded", tight));
  t.add(score({190e-6, 210e-6}, NAN, true, "", tight));
  t.add(score({190e-6, 210e-6}, NAN, true, "", wide));  // a wide measurement: ranked all the same
  t.add(score({NAN, NAN}, NAN, false, "no interval", tight));  // no interval: inf
  ASSERT_EQ(t.interval_scores_s.size(), 5u);
  EXPECT_NEAR(t.median_interval_score_s(), 20e-6, 1e-12);
  EXPECT_EQ(t.to_json().at("interval_score_unbounded_rows"), 2);
  MeasuredResidual none = measured_residual({1e-6}, "x");  // not measured: not ranked
  t.add(score({0, 1e-6}, NAN, true, "", none));
  EXPECT_EQ(t.interval_scores_s.size(), 5u);
}

TEST(FaJudge, AnExposureTheModelDidNotPredictTurnsAnAgreementIntoADisagreement) {
  // A calibration whose prediction matches the measured residual; the residual x3 (as if the Q-loops had
  // grown) must disagree: the outcome can fail.
  const FaCalibration cal = constant_fa_calibration(52e9, 40e-6, 8e6);
  FaA2aPointResult r = host_point();
  const FaJudgement j = judge_point(host_spec(), r, cal);
  ASSERT_TRUE(j.prediction.decided);
  // Measured residual placed inside the predicted interval.
  const double mid = 0.5 * (j.prediction.e_res.lo + j.prediction.e_res.hi);
  std::vector<double> rounds;
  for (int i = 0; i < 10; ++i) rounds.push_back(mid * (1 + 0.002 * (i - 5)));
  r.e_res_sender_paired = summarize(rounds);
  EXPECT_EQ(judge_point(host_spec(), r, cal).model.result, "agrees");
  for (double& x : rounds) x *= 3;
  r.e_res_sender_paired = summarize(rounds);
  const FaJudgement tripled = judge_point(host_spec(), r, cal);
  EXPECT_EQ(tripled.model.result, "disagrees");
  EXPECT_EQ(tripled.model.direction, "under");
}

}  // namespace
}  // namespace xs::attention::judge
