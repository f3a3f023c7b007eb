// xstage attention host layer: the Burst-Gap model's predictions for one FlashAttention-A2A point
// (paper section 4.3): burst volume, Q-loop gap, G*, M_ub*, dt(M) (eq. 18), E_drain, dt_cc / E_cc (eq. 17)
// and the design-test verdict (eq. 10); with issue 13 the aligned and the phase-aware burst (fa_verdict.hpp),
// the Q-loop slowdown under store load and the predicted E_res of each. Reads the kernel's TileShape so
// predictions match what runs. Plain C++ (xs_attention_host).
#pragma once
#include <cmath>
#include <string>

#include "attention/fa_verdict.hpp"
#include "model/burst_gap.hpp"

namespace xs::attention {

struct FaA2aModelInputs {
  int seq_len = 0;                     // M
  int num_heads = 0;                   // heads this rank computes
  int num_ctas = 132;                  // persistent CTAs = aligned producers K (at most the tile count)
  double drain_rate_bps = 0;           // R
  double tiss0_s = 0;                  // T_iss^0(K, V), backpressure-free issue time of the aligned burst
  double capacity_bytes = 0;           // Q(K); <= 0: unknown (design/verdict count it met; aligned and
                                       // phase_aware leave it undecided unless q = 0)
  double sigma_s_per_kv_tile = 0;      // sigma: measured Q-loop time per KV tile
  double completion_latency_s = 0;     // T_lat of eq. 17 (fixed completion latency)
  double cover_s = -1;                 // T_cover of eq. 17 (<= one QK^T tile mainloop); < 0: sigma / 2
  int head_dim = 0;                    // d of B_t; 0: the kernel's TileShape::kHeadDim
  // sigma of the compute alone (FA-only launch). Where sigma above is the fused launch's (under store load)
  // and this is > 0, the Q-loop slowdown E_load = N_t ceil(M/b_n) (sigma - sigma_compute_only) is predicted.
  double sigma_compute_only_s_per_kv_tile = 0;
  BurstAlignment alignment;            // the fused launch's measured alignment; zeros: the aligned case
  double tiss0_cluster_s = -1;         // T_iss^0(K_c, K_c B_t) of the phase-aware cluster; < 0: tiss0_s
  // Q for the phase-aware case, Q(K_c) of the K_c CTAs storing at once (fa_verdict.hpp); < 0: capacity_bytes,
  // <= 0 otherwise: unknown.
  double phase_capacity_bytes = -1;
  bool capacity_is_lower_bound = false;        // Q(K) is only a lower bound (no knee in the sweep)
  bool phase_capacity_is_lower_bound = false;  // the same for Q(K_c)
  // Where a lower bound above comes with an upper one (model::CapacityBracket of a Q the fitter did not
  // identify): Q(K) in [capacity_bytes, capacity_upper_bytes), likewise for K_c. +inf: no upper bound.
  // capacity_bracketed keeps the bracket out of the design test (eq. 10 counts an unknown Q as met).
  double capacity_upper_bytes = INFINITY;
  double phase_capacity_upper_bytes = INFINITY;
  bool capacity_bracketed = false;
};

struct FaA2aPrediction {
  int num_producers = 0;               // K = min(num_ctas, tiles)
  double tile_bytes = 0;               // B_t = b_m d s_out per CTA tile boundary
  double burst_bytes = 0;              // V = K B_t (conservative aligned case)
  double num_bursts = 0;               // N_t = ceil(tiles / K) output-burst waves
  double qloop_gap_s = 0;              // G_Qloop(M) >= sigma M / b_n
  double recovery_gap_s = 0;           // G* = [V/R - T_iss^0]+ (eq. 5)
  double seq_len_bound_tokens = 0;     // M_ub* = b_n G*/sigma (eq. 20)
  double drain_stall_s = 0;            // dt(M) (eq. 18)
  double critical_stall_s = 0;         // dt'(M) = [dt - G_QK]+ (eq. 19), G_QK = cover
  double e_drain_s = 0;                // N_t dt'(M)
  double dt_cc_s = 0;                  // eq. 17
  double e_cc_s = 0;                   // N_t dt_cc
  xs::model::DesignTest design;        // eq. 10 bounds at G = G_Qloop(M)
  std::string verdict;                 // "piggyback" or "reshape" (an unknown Q counted as met)
  // Issue 13. Predicted E_res = E_issue + E_load + max(E_drain, E_cap): a wave waits for the tighter of the
  // rate (eq. 18-19) and capacity (eq. 7) bounds, not for both.
  int num_kv_tiles = 0;                // ceil(M / b_n): KV tiles per Q-loop
  double e_issue_s = 0;                // N_t T_iss^0(K, K B_t): the aligned wave's backpressure-free issue
  // N_t T_iss^0(K_c, K_c B_t): the phase-aware case's, where each CTA issues beside the K_c of its cluster
  // only (tiss0_cluster_s; < 0 there: = e_issue_s). A CTA's own issue time is that of the burst it joins.
  double e_issue_phase_aware_s = 0;
  double e_load_s = 0;                 // N_t ceil(M/b_n) (sigma - sigma_compute_only); 0 without the latter
  BurstVerdict aligned;                // the paper's aligned case (V = K B_t); verdict "undecided" if Q unknown
  BurstVerdict phase_aware;            // the burst the CTAs form (fa_verdict.hpp)
  double e_res_aligned_s = 0;          // NaN where the capacity bound is undecided (Q bracketed: the most)
  double e_res_phase_aware_s = 0;
  double e_res_aligned_min_s = 0;      // the least, at the bracket's upper Q (= the above where Q is known)
  double e_res_phase_aware_min_s = 0;
  double e_res_capacity_met_s = 0;     // E_issue + E_load + E_drain: the aligned case where its capacity bound holds
  double e_res_capacity_met_phase_aware_s = 0;  // the same with the phase-aware E_issue
};

// Throws input_error for non-positive M, heads, R or sigma.
FaA2aPrediction predict_fa_a2a(const FaA2aModelInputs& in);

// Which sigma predicts the fused launch (issue 13 item 4). The fused launch's sigma applies where it
// differs from the FA-only sigma by more than the fused Q-loop's own relative spread (p90 - p10) /
// (2 median) across tiles; otherwise the compute-only sigma, as the paper's prior predictions use. Where
// only one was measured, that one. applied_s = 0: neither measured.
struct SigmaChoice {
  double compute_only_s = 0;  // sigma_FA, FA-only launch
  double under_load_s = 0;    // sigma_fused, fused launch
  double ratio = 0;           // sigma_fused / sigma_FA; 0: not both measured
  double relative_spread = 0; // of the fused Q-loop per tile; 0: not measured
  double applied_s = 0;
  std::string applied;        // "under_load" | "compute_only" | "none"
  std::string why;
};
SigmaChoice choose_sigma(double sigma_fa_s, double sigma_fused_s, double qloop_median_s, double qloop_p10_s,
                         double qloop_p90_s);

}  // namespace xs::attention
