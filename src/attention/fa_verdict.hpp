// xstage attention host layer: the phase-aware output burst of FlashAttention-A2A (issue 13 item 5) and the
// check of a design-test verdict against a measured residual and its noise band (item 4). Plain C++
// (xs_attention_host); fa_model.cpp predicts with it, fa_report.cpp writes what it returns.
#pragma once
#include <string>

namespace xs::attention {

// ---- The burst the CTAs form ----------------------------------------------------------------------
// The paper's conservative case (section 4.3) aligns all K tile boundaries: V = K B_t issued in T_iss^0,
// peak outstanding q_peak = [V - R T_iss^0]+ (eq. 6) checked against Q (eq. 10, second inequality), and
// where q_peak > Q each wave's issue takes T_iss^iso = max(T_iss^0, (V - Q)/R) (eq. 7), an exposure of
// T_iss^iso - T_iss^0 = [(V - Q)/R - T_iss^0]+ = [q_peak - Q]+ / R per wave.
//
// Persistent CTAs are phase-shifted. The fused launch's store records give, per output-tile wave (the n-th
// store of every CTA), the phase spread s = max - min of the store starts (median over waves), and over the
// launch the peak number n_peak of CTAs with a store in flight at one instant. With eq. 1's work-conserving
// drain at R from an empty path at the wave's first store (the rate bound, G_Qloop >= G*, is what empties
// it), one wave's peak outstanding volume is the larger of
//   (a) cluster: the K_c = min(K, n_peak) CTAs storing at once, at worst aligned among themselves (eq. 6
//       with K -> K_c):                       q_c = [K_c B_t - R T_iss^0]+
//   (b) wave: all K B_t bytes enter within W = s + T_iss^0 (the last CTA starts s after the first and
//       issues its tile in T_iss^0) while R W drain:   q_w = [K B_t - R W]+
//   q_phase = max(q_c, q_w); capacity bound q_phase <= Q(K_c); per-wave exposure [q_phase - Q(K_c)]+ / R
//   (eq. 7 as above); E_cap = N_t [q_phase - Q(K_c)]+ / R. Q(K) is the capacity of K producers (Table 1);
//   at no instant do more than K_c CTAs store, and Q grows with K (the knee of section 3.5 is per
//   producer), so Q(K_c) is the conservative capacity for both terms. Term (a) uses the cluster's own
//   T_iss^0(K_c, K_c B_t), term (b) the aligned wave's T_iss^0(K, K B_t).
// Aligned reduction: s = 0 and n_peak = K give K_c = K and W = T_iss^0, so q_c = q_w = q_peak of eq. 6,
// Q(K_c) = Q(K) and E_cap is the aligned case's N_t (T_iss^iso - T_iss^0).
// A field not measured (0) falls back to the aligned value (n_peak -> K, s -> 0): never less conservative
// than what was measured. n_peak comes from measured spans, which backpressure lengthens, so a
// backpressured launch reports more overlap: the cluster term errs towards "reshape".
// Assumptions, and where they fail: (b) takes the wave's injection as uniform over W, so I(t) - R t is
// linear and peaks at an end of the window; starts bunched early in the window without n_peak storing at
// once (many short stores) can peak higher than max(q_c, q_w). The check: with uniform starts the mean
// concurrency would be K tau / (s + tau) (tau = measured store span), reported beside the measured n_mean
// (mean_storers_if_uniform). n_mean is not used in q itself: a window derived from it (K tau / n_mean)
// lengthens with backpressure-stretched spans, which would make q_w optimistic exactly where backpressure
// occurs. s is a median over waves; the first wave (all CTAs start together) can be more aligned than the
// median says. The exact quantity, max over t of (bytes whose stores started by t) - R t per wave, needs
// the per-wave start times, which the result does not carry.
struct BurstAlignment {
  double phase_spread_s = 0;            // s (median over waves); 0: not measured
  double peak_concurrent_storers = 0;   // n_peak; 0: not measured
  double mean_concurrent_storers = 0;   // n_mean, reported beside (not used in q_phase)
};

// K tau / (s + tau): the mean concurrency uniform store starts over s would give; 0 where s or tau is 0.
double mean_storers_if_uniform(int num_producers, double phase_spread_s, double store_span_s);

struct WaveOutstanding {
  bool alignment_measured = false;  // false: the aligned case (both fields fell back)
  int cluster_producers = 0;        // K_c
  double window_s = 0;              // W
  double cluster_bytes = 0;         // q_c
  double wave_bytes = 0;            // q_w
  double peak_bytes = 0;            // max(q_c, q_w)
};

// The aligned case (eq. 6): K_c = K, W = T_iss^0.
WaveOutstanding aligned_wave_outstanding(int num_producers, double tile_bytes, double drain_rate_bps,
                                         double tiss0_s);
// The phase-aware case above. tiss0_cluster_s: T_iss^0(K_c, K_c B_t) of the cluster term (a); < 0: tiss0_s,
// the aligned wave's (a platform whose T_iss^0 grows with V, e.g. the 2026-12-02 host calibration with
// 29 us at 4.3 MB, would otherwise drain the cluster's bytes during the whole wave's issue time).
// Throws input_error for a negative spread or concurrency.
WaveOutstanding phase_aware_wave_outstanding(int num_producers, double tile_bytes, double drain_rate_bps,
                                             double tiss0_s, const BurstAlignment& alignment,
                                             double tiss0_cluster_s = -1);

// The design test (eq. 10) for one burst shape. The rate bound is phase-independent: every wave still
// injects K B_t per Q-loop period. The capacity bound is decided where Q is known, or where q = 0 (met
// for any Q); a Q that is only a lower bound (no knee in the sweep) decides q <= Q (met), not q > Q.
struct BurstVerdict {
  WaveOutstanding wave;
  bool capacity_decided = false;
  bool capacity_bound_ok = false;   // meaningful only if capacity_decided
  double e_cap_s = 0;               // N_t [q - Q]+ / R; meaningful only if capacity_decided (Q bracketed:
                                    // at the bracket's lower end, the most exposure)
  double e_cap_min_s = 0;           // the same at the bracket's upper end (= e_cap_s where Q is known)
  std::string verdict;              // "piggyback" | "reshape" | "undecided"
};
// capacity_bytes <= 0: Q unknown.
BurstVerdict burst_verdict(const WaveOutstanding& wave, double capacity_bytes, double drain_rate_bps,
                           double num_bursts, bool rate_bound_ok, bool capacity_is_lower_bound = false);
// Q known only to lie in [capacity_lower_bytes, capacity_upper_bytes) (model::CapacityBracket; a known Q is
// lower = upper = Q, a lower bound has upper = +inf): the capacity bound is met where q <= lower, violated
// where q >= upper, undecided in between.
BurstVerdict burst_verdict_bracketed(const WaveOutstanding& wave, double capacity_lower_bytes,
                                     double capacity_upper_bytes, double drain_rate_bps, double num_bursts,
                                     bool rate_bound_ok);

// ---- A verdict against the measurement ------------------------------------------------------------
// The measured residual E_res of one boundary: median and the p10..p90 of the same-round (paired)
// differences, which is the noise band: round-to-round variation of the same comparison, not a fixed
// threshold. `unhidden_s` = T_serial - T_FA at that boundary: the exposure if nothing were hidden.
struct ResidualBand {
  bool measured = false;
  double median_s = 0, p10_s = 0, p90_s = 0;
  double unhidden_s = 0;
};
// "exposed" (p10 > 0: the band lies above zero), "negative" (p90 < 0), "within_noise" (the band holds
// zero), "not_measured".
std::string measured_state(const ResidualBand& band);
// x lies within the band widened by its own width on each side: [p10 - w, p90 + w], w = p90 - p10.
// Used to say whether a predicted exposure accounts for a measured one.
bool consistent_with_band(double x_s, const ResidualBand& band);

struct VerdictCheck {
  std::string result;  // "agrees" | "disagrees" | "not decided"
  std::string state;   // measured_state of the band
  std::string reason;  // why, with the numbers
};
// piggyback predicts no exposure from the stores, reshape an exposure of `predicted_exposure_s`
// (the model's E_res; <= 0 or NaN: unknown, the unhidden cost stands in as the effect to resolve):
//   measured exposed:  piggyback disagrees, reshape agrees;
//   measured negative: piggyback agrees, reshape disagrees;
//   within noise: "not decided" where the band also reaches the effect that would tell the verdicts apart
//     (piggyback: p90 >= T_serial - T_FA; reshape: p90 >= the predicted exposure), else piggyback agrees
//     and reshape disagrees;
//   verdict "undecided" or no band: "not decided".
VerdictCheck check_verdict(const std::string& verdict, double predicted_exposure_s, const ResidualBand& band);

}  // namespace xs::attention
