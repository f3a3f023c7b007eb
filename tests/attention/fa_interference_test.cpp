// Tests for attention/judge/fa_interference_prediction (issue 28): a two-wave case worked out by hand, the
// not-calibrated path, and the frozen-input rule (every measured field of the judged launches mutated, the
// prediction does not move; the FA-only variant mutated, it does).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "xs/attention/model/fa_frozen_prediction.hpp"
#include "xs/attention/model/fa_interference_prediction.hpp"
#include "xs/attention/judge/fa_judgement.hpp"

namespace xs::attention::judge {
namespace {

using nlohmann::json;
constexpr double kUs = 1e-6;

xs::model::SlowdownSource linear_term() {  // s = 1 + offered / R
  xs::model::SlowdownSource t;
  t.status = xs::model::InterferenceStatus::kIdentified;
  t.label = "hand-made";
  t.slowdown = [](const xs::model::LoadState& l) {
    const double x = 1.0 + l.offered_rate_bps / l.drain_rate_bps;
    return xs::model::SlowdownBracket{x, x, x};
  };
  return t;
}

FaCalibration calibration(const char* q_rows) {
  return fa_calibration_from_model(
      json::parse(std::string(R"({"R_Bps": 32768e6, "R_ci95": [32768e6, 32768e6], "tiss0": [], "Q": )") + q_rows + "}"),
      "hand");
}

// One head, M = 256: 2 output tiles on 1 CTA, 2 waves; T_FA = 10 us -> L = 5 us; sigma 2 us -> G = 2 KV tiles x
// 2 us = 4 us; 32768 B per tile; R = 32768 B/us. Wave 2 runs beside wave 1's 32768 B: offered 32768 B / 5 us =
// 0.2 R -> s = 1.2, extra = 4 x 0.2 = 0.8 us; the wave lasts 5.8 us and drains the queue. The last wave's 32768 B:
// completion E_res = 0.8 + 1.0 = 1.8 us; sender side with Q not limiting: 0.8 us.
// With Q = 16384 B: wave 1's issue waits (32768 - 16384) / R = 0.5 us; the last issue leaves 32768 - 16384 B
// beyond Q: sender = 0.8 + 0.5 + 0.5 = 1.8 us, completion = 0.8 + 0.5 + 1.0 = 2.3 us.
FaFrozenInputs two_waves(const FaCalibration& cal) {
  FaPointConfig c;
  c.seq_len = 256;
  c.num_heads = 1;
  c.num_ctas = 1;
  c.head_dim = 128;
  c.remote_bytes = 65536;
  FaComputeOnly f;
  f.sigma_s_per_kv_tile = 2 * kUs;
  f.t_fa_s = 10 * kUs;
  return frozen_inputs(c, f, cal);
}

// Eq. 10 over the box where R's bracket is unbounded above and T_iss^0's reaches 0: at the corner (T_iss^0 = 0,
// R = +inf) q_peak = [V - R T_iss^0]+ is infinity x 0, known only to lie in [0, V]. With V <= Q at every point
// the capacity bound holds there, so the design test is decided ("piggyback"; before: "undecided" at every such
// box); with V > Q it stays open.
TEST(FaInterference, AnUnboundedRateCornerKeepsADecidableDesignTest) {
  FaFrozenInputs in = two_waves(calibration("[]"));
  in.drain_rate.point = NAN;
  in.drain_rate.range = {32768e6, INFINITY};
  in.drain_rate.why = "R is a lower bound";
  in.tiss0.point = NAN;
  in.tiss0.range = {0, 1 * kUs};
  in.tiss0.why = "bracket";
  in.capacity.point = NAN;
  in.capacity.range = {65536, 131072};  // V = K B_t = 32768 B below both ends
  in.capacity.why = "bracket";
  const FaFrozenPrediction p = predict_frozen(in);
  ASSERT_LE(p.burst_bytes, 65536);
  EXPECT_EQ(p.design, "piggyback");
  in.capacity.range = {1024, 131072};  // Q may be below V: the bound is open at the unbounded corner
  EXPECT_EQ(predict_frozen(in).design, "undecided");
}

TEST(FaInterference, TwoWavesByHand) {
  const FaReplay x = replay_fa_waves(two_waves(calibration("[]")), linear_term(), 32768e6, INFINITY, 1);
  EXPECT_NEAR(x.extra_compute_s, 0.8 * kUs, 1e-15);
  EXPECT_NEAR(x.completion_s(32768e6), 1.8 * kUs, 1e-15);
  EXPECT_NEAR(x.sender_s(32768e6, INFINITY), 0.8 * kUs, 1e-15);
  const FaReplay y = replay_fa_waves(two_waves(calibration("[]")), linear_term(), 32768e6, 16384, 1);
  EXPECT_NEAR(y.capacity_wait_s, 0.5 * kUs, 1e-15);
  EXPECT_NEAR(y.sender_s(32768e6, 16384), 1.8 * kUs, 1e-15);
  EXPECT_NEAR(y.completion_s(32768e6), 2.3 * kUs, 1e-15);
  // Through the prediction: Q identified at K = 1 gives the sender-side point.
  const FaCalibration with_q = calibration(R"([{"K": 1, "bytes": 16384, "ci95": [16384, 16384], "bound": "fit"}])");
  const FaInterferencePrediction p = predict_with_interference(two_waves(with_q), linear_term());
  ASSERT_TRUE(p.computed) << p.why_not;
  EXPECT_NEAR(p.sender_point_s, 1.8 * kUs, 1e-15);
  EXPECT_NEAR(p.completion_point_s, 2.3 * kUs, 1e-15);
  // Q not identified: no sender-side point, a bracket instead; the completion point stays.
  const FaInterferencePrediction b = predict_with_interference(
      two_waves(calibration(R"([{"K": 1, "bytes": null, "bound": "not_identified"}])")), linear_term());
  ASSERT_TRUE(b.computed);
  // Q not identified: no point at either boundary (Q sets the waits and the full share), a bracket instead that
  // holds the Q = +inf values worked out above.
  EXPECT_TRUE(std::isnan(b.sender_point_s));
  EXPECT_TRUE(std::isnan(b.completion_point_s));
  EXPECT_FALSE(b.why_no_point.empty());
  EXPECT_LE(b.sender.lo, 0.8 * kUs + 1e-15);
  EXPECT_LE(b.completion.lo, 1.8 * kUs + 1e-15);
  EXPECT_GE(b.completion.hi, 1.8 * kUs - 1e-15);
}

TEST(FaInterference, AnUncalibratedTermPredictsNothingAndSaysSo) {
  xs::model::SlowdownSource none;
  none.why = "no remote_store.loaded block";
  const FaInterferencePrediction p = predict_with_interference(two_waves(calibration("[]")), none);
  EXPECT_FALSE(p.computed);
  EXPECT_NE(p.why_not.find("interference not calibrated"), std::string::npos);
  EXPECT_EQ(to_json(p)["computed"], false);
}

// A term used where its calibration did not reach (issue 27 item 4): the replay still runs, but no point is given
// and the reason is named; inside the range the same term gives its points.
TEST(FaInterference, ATermUsedOutsideItsCalibrationGivesNoPoint) {
  const FaCalibration with_q = calibration(R"([{"K": 1, "bytes": 16384, "ci95": [16384, 16384], "bound": "fit"}])");
  xs::model::SlowdownSource t = linear_term();
  t.outside = [](const xs::model::LoadState& l) {
    return l.burst_bytes_per_sm > 16384 ? std::string("32768 B stored per tile is outside the calibrated 0-16384 B")
                                        : std::string();
  };
  const FaInterferencePrediction p = predict_with_interference(two_waves(with_q), t);
  ASSERT_TRUE(p.computed) << p.why_not;
  EXPECT_TRUE(std::isnan(p.sender_point_s));
  EXPECT_TRUE(std::isnan(p.completion_point_s));
  EXPECT_NE(p.why_no_point.find("outside its calibration"), std::string::npos) << p.why_no_point;
  EXPECT_NE(p.term_outside_calibration.find("32768 B stored per tile"), std::string::npos);
  EXPECT_TRUE(to_json(p)["term_outside_calibration"].is_string());
  t.outside = [](const xs::model::LoadState&) { return std::string(); };
  const FaInterferencePrediction q = predict_with_interference(two_waves(with_q), t);
  EXPECT_NEAR(q.sender_point_s, 1.8 * kUs, 1e-15);
  EXPECT_TRUE(q.term_outside_calibration.empty());
}

TEST(FaInterference, NoMeasuredFieldOfTheJudgedLaunchesMovesThePrediction) {
  FaA2aPointResult base;
  base.num_ctas = 132;
  base.num_tiles = 512;
  base.remote_bytes = 8.0 * 8192 * 128 * 2;
  base.t_fa = summarize({411e-6, 412e-6, 410e-6, 413e-6, 411e-6});
  base.sender_fa = summarize({405e-6, 406e-6, 404e-6, 407e-6, 405e-6});
  base.t_fused = summarize({618e-6, 620e-6, 617e-6, 619e-6, 618e-6});
  base.sender_fused = summarize({610e-6, 611e-6, 609e-6, 612e-6, 610e-6});
  base.e_res_paired = summarize({207e-6, 208e-6, 207e-6, 206e-6, 207e-6});
  base.e_res_sender_paired = summarize({205e-6, 205e-6, 204e-6, 205e-6, 206e-6});
  base.clock_fa_hz = summarize({1.71e9, 1.71e9, 1.71e9, 1.71e9, 1.71e9});
  base.clock_fused_hz = summarize({1.70e9, 1.70e9, 1.70e9, 1.70e9, 1.70e9});
  base.sigma_rounds_fa_cycles = summarize({2616, 2610, 2620, 2616, 2618});
  base.sigma_rounds_fused_cycles = summarize({3569, 3560, 3570, 3569, 3580});
  base.sigma_s_per_kv_tile = 2.1e-6;
  base.sigma_fa_s_per_kv_tile = 1.5e-6;
  base.sm_clock_hz = 1.69e9;
  base.qloop_fused = summarize({138e-6, 139e-6, 137e-6, 138e-6, 140e-6});
  base.store_phase_spread_median_s = 85e-6;
  base.peak_concurrent_storers = 49;
  FaA2aPointSpec spec;
  spec.seq_len = 8192;
  spec.num_heads = 8;
  spec.target = "host";
  const FaCalibration cal = fa_calibration_from_model(json::parse(R"({"R_Bps": 52e9, "R_ci95": [50e9, 54e9],
      "tiss0": [], "Q": [{"K": 132, "bytes": 3.5e6, "ci95": [3.45e6, 3.55e6], "bound": "fit"}]})"), "identified");
  const auto predict = [&](const FaA2aPointResult& r) {
    return to_json(predict_with_interference(frozen_inputs(point_config(spec, r), compute_only_of(r), cal), linear_term()));
  };
  const json before = predict(base);
  ASSERT_TRUE(before["computed"].get<bool>()) << before.dump();
  const auto scale = [](Summary& t, double f) {
    t.median *= f;
    t.p10 *= f;
    t.p90 *= f;
    for (double& x : t.samples) x *= f;
  };
  const std::vector<std::pair<const char*, std::function<void(FaA2aPointResult&)>>> judged = {
      {"t_fused", [&](auto& r) { scale(r.t_fused, 3); }},
      {"sender_fused", [&](auto& r) { scale(r.sender_fused, 3); }},
      {"e_res_paired", [&](auto& r) { scale(r.e_res_paired, 3); }},
      {"e_res_sender_paired", [&](auto& r) { scale(r.e_res_sender_paired, 3); }},
      {"sigma under load", [&](auto& r) { r.sigma_s_per_kv_tile *= 3; }},
      {"sigma_rounds_fused_cycles", [&](auto& r) { scale(r.sigma_rounds_fused_cycles, 3); }},
      {"clock_fused_hz", [&](auto& r) { scale(r.clock_fused_hz, 0.5); }},
      {"sm_clock_hz", [&](auto& r) { r.sm_clock_hz *= 0.5; }},
      {"qloop_fused", [&](auto& r) { scale(r.qloop_fused, 3); }},
      {"alignment", [&](auto& r) { r.store_phase_spread_median_s = 0; r.peak_concurrent_storers = 132; }},
  };
  for (const auto& [name, mutate] : judged) {
    FaA2aPointResult r = base;
    mutate(r);
    EXPECT_EQ(predict(r), before) << "the prediction moved with " << name;
  }
  FaA2aPointResult slower = base;
  scale(slower.sender_fa, 2);
  EXPECT_NE(predict(slower), before);
}

}  // namespace
}  // namespace xs::attention::judge

namespace xs::attention::judge {
namespace {

// A Q row the fitter marked unconstrained (bound "fit", constrained false: a soft knee, a drifting R) is not a
// measurement of Q: the FA judge's Q term is then no point and its range is the bracket, which leaves such rows out
// (found by the adversarial review of 2026-12-07: the unconstrained and constrained rows gave identical verdicts).
TEST(FaCalibrationTerms, AnUnconstrainedQRowIsNoPoint) {
  const char* rows = R"({"R_Bps": 52e9, "R_ci95": [50e9, 54e9], "tiss0": [],
      "Q": [{"K": 132, "bytes": 3.5e6, "ci95": [3.45e6, 3.55e6], "bound": "fit", "constrained": CONSTRAINED}]})";
  auto cal = [&](const char* c) {
    std::string text = rows;
    text.replace(text.find("CONSTRAINED"), 11, c);
    return fa_calibration_from_model(json::parse(text), c);
  };
  const Term pinned = xs::attention::model::capacity_term(cal("true"), 132, INFINITY);
  EXPECT_DOUBLE_EQ(pinned.point, 3.5e6);
  const Term loose = xs::attention::model::capacity_term(cal("false"), 132, INFINITY);
  EXPECT_TRUE(std::isnan(loose.point)) << loose.source;
  EXPECT_EQ(loose.source, "bracket");
  EXPECT_FALSE(loose.range.lo >= 3.45e6 && loose.range.hi <= 3.55e6) << "the row's ci95 is not a measurement";
}

}  // namespace
}  // namespace xs::attention::judge
