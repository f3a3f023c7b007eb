// Tests for attention/fa_verdict and the issue-13 parts of attention/fa_model: the phase-aware burst against
// hand-computed values (its aligned reduction, partial overlap, either term dominating), the capacity
// verdict with an unknown Q, sigma under load, E_load / E_issue, and the verdict-vs-band rules.
#include <gtest/gtest.h>

#include <cmath>

#include "attention/fa_model.hpp"
#include "attention/fa_verdict.hpp"
#include "common/error.hpp"

namespace xs::attention {
namespace {

// The H200 host-like platform of the README: K = 132 CTAs, 32 KiB tiles, R = 52 GB/s, T_iss^0 = 0.2 us.
constexpr int kK = 132;
constexpr double kTile = 32768, kR = 52e9, kTiss0 = 0.2e-6, kQ = 2.0 * 1048576;
constexpr double kAlignedQ = kK * kTile - kR * kTiss0;  // eq. 6: 4325376 - 10400 = 4314976 bytes

TEST(FaBurstModel, PhaseAwareReducesToTheAlignedCase) {
  const WaveOutstanding aligned = aligned_wave_outstanding(kK, kTile, kR, kTiss0);
  EXPECT_DOUBLE_EQ(aligned.peak_bytes, 4314976.0);
  // spread 0 and all K overlapping, or more storers counted than CTAs, or nothing measured: eq. 6 again.
  for (const BurstAlignment a : {BurstAlignment{0, 132, 0}, BurstAlignment{0, 200, 90}, BurstAlignment{}}) {
    const WaveOutstanding w = phase_aware_wave_outstanding(kK, kTile, kR, kTiss0, a);
    EXPECT_EQ(w.cluster_producers, kK);
    EXPECT_DOUBLE_EQ(w.window_s, kTiss0);
    EXPECT_DOUBLE_EQ(w.peak_bytes, aligned.peak_bytes);
    EXPECT_DOUBLE_EQ(w.cluster_bytes, w.wave_bytes);
  }
  EXPECT_FALSE(phase_aware_wave_outstanding(kK, kTile, kR, kTiss0, {}).alignment_measured);
  // The same capacity verdict and exposure: N_t [q - Q]+ / R = N_t (T_iss^iso - T_iss^0) of eq. 7.
  const BurstVerdict v = burst_verdict(aligned, kQ, kR, 4, true);
  EXPECT_EQ(v.verdict, "reshape");
  EXPECT_NEAR(v.e_cap_s, 4 * ((kK * kTile - kQ) / kR - kTiss0), 1e-12);
}

TEST(FaBurstModel, PartialOverlapSpreadsTheWave) {
  // 50 us spread, at most 40 CTAs storing at once.
  const WaveOutstanding w = phase_aware_wave_outstanding(kK, kTile, kR, kTiss0, {50e-6, 40, 20});
  EXPECT_TRUE(w.alignment_measured);
  EXPECT_EQ(w.cluster_producers, 40);
  EXPECT_DOUBLE_EQ(w.cluster_bytes, 40 * 32768.0 - 10400);         // 1300320
  EXPECT_NEAR(w.window_s, 50.2e-6, 1e-15);
  EXPECT_NEAR(w.wave_bytes, 4325376.0 - 52e9 * 50.2e-6, 1e-3);     // 1714976: the wave term dominates
  EXPECT_DOUBLE_EQ(w.peak_bytes, w.wave_bytes);
  const BurstVerdict phase = burst_verdict(w, kQ, kR, 4, true);
  EXPECT_TRUE(phase.capacity_bound_ok);
  EXPECT_EQ(phase.e_cap_s, 0.0);
  EXPECT_EQ(phase.verdict, "piggyback");
  EXPECT_EQ(burst_verdict(aligned_wave_outstanding(kK, kTile, kR, kTiss0), kQ, kR, 4, true).verdict, "reshape");
}

TEST(FaBurstModel, ADenseClusterDominatesAWideSpread) {
  // 200 us spread drains the whole wave (R W = 10.4 MB > 4.3 MB), but 100 CTAs store at once.
  const WaveOutstanding w = phase_aware_wave_outstanding(kK, kTile, kR, kTiss0, {200e-6, 100, 40});
  EXPECT_EQ(w.wave_bytes, 0.0);
  EXPECT_DOUBLE_EQ(w.peak_bytes, 100 * 32768.0 - 10400);  // 3266400 > Q
  const BurstVerdict v = burst_verdict(w, kQ, kR, 16, true);
  EXPECT_EQ(v.verdict, "reshape");
  EXPECT_NEAR(v.e_cap_s, 16 * (3266400.0 - kQ) / kR, 1e-12);
}

TEST(FaBurstModel, AnUnknownQDecidesOnlyAFullyDrainedBurst) {
  // R T_iss^0 = 717e9 x 0.76e-6 = 544920 B: 16 tiles (524288 B) drain while issuing; a 10 us spread drains a wave.
  const WaveOutstanding drained = phase_aware_wave_outstanding(kK, kTile, 717e9, 0.76e-6, {10e-6, 16, 8});
  EXPECT_EQ(drained.peak_bytes, 0.0);
  EXPECT_EQ(burst_verdict(drained, 0, 717e9, 4, true).verdict, "piggyback");
  const BurstVerdict aligned = burst_verdict(aligned_wave_outstanding(kK, kTile, 717e9, 0.76e-6), 0, 717e9, 4, true);
  EXPECT_FALSE(aligned.capacity_decided);
  EXPECT_EQ(aligned.verdict, "undecided");
  EXPECT_EQ(burst_verdict(drained, 0, 717e9, 4, false).verdict, "reshape");  // rate bound fails: reshape anyway
}

TEST(FaBurstModel, ALowerBoundQDecidesOnlyABurstBelowIt) {
  // No knee in the sweep: Q >= 2 MiB. 1714976 B fits under it; 3266400 B may or may not.
  const WaveOutstanding fits = phase_aware_wave_outstanding(kK, kTile, kR, kTiss0, {50e-6, 40, 20});
  const WaveOutstanding above = phase_aware_wave_outstanding(kK, kTile, kR, kTiss0, {200e-6, 100, 40});
  EXPECT_EQ(burst_verdict(fits, kQ, kR, 4, true, true).verdict, "piggyback");
  EXPECT_EQ(burst_verdict(above, kQ, kR, 4, true, true).verdict, "undecided");
  EXPECT_EQ(burst_verdict(above, kQ, kR, 4, true, false).verdict, "reshape");
}

TEST(FaBurstModel, UniformStartsGiveTheMeanConcurrencyKTauOverSpreadPlusTau) {
  EXPECT_DOUBLE_EQ(mean_storers_if_uniform(132, 50e-6, 10e-6), 132 * 10.0 / 60.0);  // 22 storers
  EXPECT_EQ(mean_storers_if_uniform(132, 0, 10e-6), 0.0);
  EXPECT_EQ(mean_storers_if_uniform(132, 50e-6, 0), 0.0);
}

TEST(FaBurstModel, RefusesNegativeAlignment) {
  EXPECT_THROW(phase_aware_wave_outstanding(kK, kTile, kR, kTiss0, {-1e-6, 10, 5}), xs::Error);
  EXPECT_THROW(phase_aware_wave_outstanding(kK, kTile, kR, kTiss0, {1e-6, -10, 5}), xs::Error);
}

FaA2aModelInputs host_8k() {
  FaA2aModelInputs in;
  in.seq_len = 8192;  // 8 heads x 64 row tiles = 512 tiles, N_t = ceil(512 / 132) = 4, 64 KV tiles
  in.num_heads = 8;
  in.num_ctas = kK;
  in.drain_rate_bps = kR;
  in.tiss0_s = kTiss0;
  in.capacity_bytes = 8.0 * 1048576;
  return in;
}

TEST(FaBurstModel, QloopSlowdownUnderLoadIsPredictedPerWave) {
  // Issue 13's host 8K figures: sigma 1.54 us (FA-only) -> 2.48 us (fused).
  FaA2aModelInputs in = host_8k();
  in.sigma_s_per_kv_tile = 2.48e-6;
  in.sigma_compute_only_s_per_kv_tile = 1.54e-6;
  const FaA2aPrediction p = predict_fa_a2a(in);
  EXPECT_EQ(p.num_bursts, 4.0);
  EXPECT_EQ(p.num_kv_tiles, 64);
  EXPECT_NEAR(p.e_load_s, 4 * 64 * 0.94e-6, 1e-12);  // 240.64 us
  EXPECT_NEAR(p.e_issue_s, 4 * 0.2e-6, 1e-15);
  EXPECT_EQ(p.e_drain_s, 0.0);  // G_Qloop = 158.7 us > G* = 83.0 us
  EXPECT_NEAR(p.e_res_aligned_s, 0.8e-6 + 240.64e-6, 1e-12);
  // Without the compute-only sigma there is no load term.
  in.sigma_compute_only_s_per_kv_tile = 0;
  EXPECT_EQ(predict_fa_a2a(in).e_load_s, 0.0);
}

TEST(FaBurstModel, PhaseAwareIssueCostIsTheClustersOwn) {
  // A CTA issues beside the K_c of its cluster, not the aligned wave: the 2026-12-02 small-K host calibration
  // had T_iss^0 = 29 us for the 4.3 MB aligned wave and 0.5 us for 15 CTAs, N_t = 4 at 8K.
  FaA2aModelInputs in = host_8k();
  in.sigma_s_per_kv_tile = 1.54e-6;
  in.tiss0_s = 29e-6;
  in.tiss0_cluster_s = 0.5e-6;
  in.alignment = {300e-6, 15, 6};
  const FaA2aPrediction p = predict_fa_a2a(in);
  EXPECT_NEAR(p.e_issue_s, 4 * 29e-6, 1e-15);
  EXPECT_NEAR(p.e_issue_phase_aware_s, 4 * 0.5e-6, 1e-15);
  EXPECT_NEAR(p.e_res_capacity_met_phase_aware_s, 4 * 0.5e-6 + p.e_drain_s, 1e-15);
  ASSERT_EQ(p.phase_aware.verdict, "piggyback");  // q_c = 15 x 32 KiB - R 0.5 us < Q = 8 MiB
  EXPECT_NEAR(p.e_res_phase_aware_s, 4 * 0.5e-6 + p.e_drain_s, 1e-15);
  // Without a cluster T_iss^0 the aligned one stands in.
  in.tiss0_cluster_s = -1;
  EXPECT_NEAR(predict_fa_a2a(in).e_issue_phase_aware_s, 4 * 29e-6, 1e-15);
}

TEST(FaBurstModel, ResidualPredictionTakesTheTighterBoundNotBoth) {
  // Rate bound fails at sigma = 1.2 us (G = 76.8 us < G* = 82.98 us) and Q = 2 MiB is exceeded.
  FaA2aModelInputs in = host_8k();
  in.capacity_bytes = kQ;
  in.sigma_s_per_kv_tile = 1.2e-6;
  const FaA2aPrediction p = predict_fa_a2a(in);
  const double e_drain = 4 * (4325376.0 / kR - 76.8e-6 - kTiss0 - 0.6e-6);  // eq. 18-19, cover sigma/2
  EXPECT_NEAR(p.e_drain_s, e_drain, 1e-12);
  const double e_cap = 4 * (kAlignedQ - kQ) / kR;
  EXPECT_NEAR(p.aligned.e_cap_s, e_cap, 1e-12);
  EXPECT_NEAR(p.e_res_aligned_s, 0.8e-6 + std::max(e_drain, e_cap), 1e-12);
  EXPECT_EQ(p.aligned.verdict, "reshape");
}

TEST(FaBurstModel, SigmaUnderLoadAppliesWhereItDiffersBeyondTheQloopSpread) {
  const SigmaChoice load = choose_sigma(1.54e-6, 2.48e-6, 158e-6, 150e-6, 166e-6);
  EXPECT_EQ(load.applied, "under_load");
  EXPECT_EQ(load.applied_s, 2.48e-6);
  EXPECT_NEAR(load.ratio, 2.48 / 1.54, 1e-12);
  EXPECT_NEAR(load.relative_spread, 16.0 / 316.0, 1e-12);
  const SigmaChoice same = choose_sigma(1.54e-6, 1.57e-6, 100e-6, 95e-6, 105e-6);  // 1.019 within 0.05
  EXPECT_EQ(same.applied, "compute_only");
  EXPECT_EQ(same.applied_s, 1.54e-6);
  EXPECT_EQ(choose_sigma(0, 2.48e-6, 0, 0, 0).applied, "under_load");
  EXPECT_EQ(choose_sigma(0, 2.48e-6, 0, 0, 0).ratio, 0.0);
  EXPECT_EQ(choose_sigma(1.54e-6, 0, 0, 0, 0).applied, "compute_only");
  EXPECT_EQ(choose_sigma(0, 0, 0, 0, 0).applied, "none");
  EXPECT_EQ(choose_sigma(0, 0, 0, 0, 0).applied_s, 0.0);
}

ResidualBand band(double median_s, double p10_s, double p90_s, double unhidden_s) {
  return {true, median_s, p10_s, p90_s, unhidden_s};
}

TEST(FaVerdictCheck, ExposedAndNegativeBands) {
  const ResidualBand exposed = band(250e-6, 247e-6, 255e-6, 343e-6);
  EXPECT_EQ(measured_state(exposed), "exposed");
  EXPECT_EQ(check_verdict("piggyback", 1e-6, exposed).result, "disagrees");
  EXPECT_EQ(check_verdict("reshape", 655e-6, exposed).result, "agrees");
  const ResidualBand negative = band(-10e-6, -15e-6, -5e-6, 343e-6);
  EXPECT_EQ(measured_state(negative), "negative");
  EXPECT_EQ(check_verdict("piggyback", 1e-6, negative).result, "agrees");
  EXPECT_EQ(check_verdict("reshape", 655e-6, negative).result, "disagrees");
}

TEST(FaVerdictCheck, NoiseLargerThanTheEffectIsNotDecided) {
  // README host 32K: E_res 118 us, p10..p90 = -22..706 us; T_serial - T_FA = 1290 us.
  const ResidualBand wide = band(118e-6, -22e-6, 706e-6, 1290e-6);
  EXPECT_EQ(measured_state(wide), "within_noise");
  EXPECT_EQ(check_verdict("reshape", 655e-6, wide).result, "not decided");  // band reaches 655 us
  EXPECT_EQ(check_verdict("reshape", 800e-6, wide).result, "disagrees");    // band stays below 800 us
  EXPECT_EQ(check_verdict("piggyback", 3e-6, wide).result, "agrees");       // and below 1290 us
  EXPECT_EQ(check_verdict("piggyback", 3e-6, band(118e-6, -22e-6, 706e-6, 500e-6)).result, "not decided");
  // An unknown predicted exposure: T_serial - T_FA is the effect to resolve.
  EXPECT_EQ(check_verdict("reshape", std::nan(""), wide).result, "disagrees");
  EXPECT_EQ(check_verdict("reshape", std::nan(""), band(118e-6, -22e-6, 1300e-6, 1290e-6)).result, "not decided");
}

TEST(FaVerdictCheck, NoVerdictOrNoBandIsNotDecided) {
  const ResidualBand exposed = band(250e-6, 247e-6, 255e-6, 343e-6);
  EXPECT_EQ(check_verdict("undecided", std::nan(""), exposed).result, "not decided");
  const VerdictCheck none = check_verdict("piggyback", 1e-6, ResidualBand{});
  EXPECT_EQ(none.result, "not decided");
  EXPECT_EQ(none.state, "not_measured");
}

TEST(FaVerdictCheck, ConsistencyWidensTheBandByItsWidth) {
  const ResidualBand b = band(250e-6, 247e-6, 255e-6, 343e-6);  // width 8 us: [239, 263] us
  EXPECT_TRUE(consistent_with_band(241.44e-6, b));
  EXPECT_TRUE(consistent_with_band(262.9e-6, b));
  EXPECT_FALSE(consistent_with_band(238.9e-6, b));
  EXPECT_FALSE(consistent_with_band(263.1e-6, b));
  EXPECT_FALSE(consistent_with_band(std::nan(""), b));
  EXPECT_FALSE(consistent_with_band(250e-6, ResidualBand{}));
}

}  // namespace
}  // namespace xs::attention

namespace xs::attention {
namespace {

// A Q the fitter did not identify, bracketed by the isolated bursts (model::CapacityBracket): decided outside
// the bracket, undecided inside; exposure between the bracket's two ends.
TEST(BurstVerdictBracketed, DecidesOutsideTheBracketAndGivesTheExposureRange) {
  const double R = 50e9, t0 = 0.2e-6, tile = 32768;
  const WaveOutstanding w = aligned_wave_outstanding(132, tile, R, t0);  // q ~ 4.31 MB
  const BurstVerdict below = burst_verdict_bracketed(w, 5e6, 8e6, R, 4, true);
  EXPECT_EQ(below.verdict, "piggyback");
  EXPECT_EQ(below.e_cap_s, 0.0);
  const BurstVerdict inside = burst_verdict_bracketed(w, 2e6, 5e6, R, 4, true);
  EXPECT_EQ(inside.verdict, "undecided");
  const BurstVerdict above = burst_verdict_bracketed(w, 2e6, w.peak_bytes, R, 4, true);  // q == upper: drained
  EXPECT_EQ(above.verdict, "reshape");
  EXPECT_NEAR(above.e_cap_s, 4 * (w.peak_bytes - 2e6) / R, 1e-12);
  EXPECT_NEAR(above.e_cap_min_s, 0.0, 1e-15);
  // A known Q (lower = upper) reproduces burst_verdict.
  const BurstVerdict known = burst_verdict_bracketed(w, 3e6, 3e6, R, 4, true);
  const BurstVerdict plain = burst_verdict(w, 3e6, R, 4, true);
  EXPECT_EQ(known.verdict, plain.verdict);
  EXPECT_DOUBLE_EQ(known.e_cap_s, plain.e_cap_s);
  EXPECT_DOUBLE_EQ(known.e_cap_min_s, known.e_cap_s);
  EXPECT_THROW(burst_verdict_bracketed(w, 5e6, 4e6, R, 4, true), Error);
}

// The cluster term drains only during the cluster's own issue time T_iss^0(K_c, K_c B_t), not the whole
// aligned wave's (which grows with V on some platforms).
TEST(FaBurstModel, ClusterTermUsesTheClustersOwnIssueTime) {
  const double R = 50e9, tile = 32768;
  const BurstAlignment a{100e-6, 20, 3};
  const WaveOutstanding slow_wave = phase_aware_wave_outstanding(132, tile, R, 30e-6, a);  // T0 of the wave
  const WaveOutstanding own = phase_aware_wave_outstanding(132, tile, R, 30e-6, a, 1e-6);
  EXPECT_DOUBLE_EQ(slow_wave.cluster_bytes, 0.0);                  // 20 x 32 KiB - 50e9 x 30 us < 0
  EXPECT_DOUBLE_EQ(own.cluster_bytes, 20 * tile - R * 1e-6);       // 655360 - 50000
  EXPECT_DOUBLE_EQ(own.wave_bytes, slow_wave.wave_bytes);          // the wave term keeps the wave's T0
}

}  // namespace
}  // namespace xs::attention
