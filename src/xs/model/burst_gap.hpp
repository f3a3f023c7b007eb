// xstage model layer: every equation of the paper's sections 3-4 (Burst-Gap model of X-Stage) as a named
// function. SI units throughout: bytes, seconds, bytes/s. Equation numbers refer to the paper
// (../shared/paper/xstage-paper.txt). [x]+ = max(x, 0).
#pragma once
#include <cstdint>
#include <string>

namespace xs::model {

// ---- Section 3: the Burst-Gap relation -------------------------------------------------------------
// Eq. 1: drain-dominated steady-state period, T_period = V / R.
double drain_period_s(double volume_bytes, double drain_rate_bps);
// Eq. 3 (= eq. 8): T_iss(G) = max(T_iss^0, V/R - G).
double issue_time_s(double tiss0_s, double volume_bytes, double drain_rate_bps, double gap_s);
// Eq. 4 (= eq. 9): dT_iss(G) = [V/R - G - T_iss^0]+.
double issue_overhead_s(double tiss0_s, double volume_bytes, double drain_rate_bps, double gap_s);
// Eq. 2 with eq. 3: T_period(G) = T_iss(G) + G = max(T_iss^0 + G, V/R).
double period_s(double tiss0_s, double volume_bytes, double drain_rate_bps, double gap_s);
// Completion-coupled counterfactual period, T_period^cc = G + V/R (section 3.4).
double completion_coupled_period_s(double volume_bytes, double drain_rate_bps, double gap_s);
// Eq. 5: minimum recovery gap G* = [V/R - T_iss^0]+.
double recovery_gap_s(double tiss0_s, double volume_bytes, double drain_rate_bps);
// Eq. 6: peak outstanding volume of an isolated burst without a capacity limit, q_peak = [V - R T_iss^0]+.
double peak_outstanding_bytes(double tiss0_s, double volume_bytes, double drain_rate_bps);
// Eq. 7: isolated-burst issue time T_iss^iso = max(T_iss^0, (V - Q)/R).
double isolated_issue_time_s(double tiss0_s, double volume_bytes, double drain_rate_bps, double capacity_bytes);
// Inverse of eq. 6 at the knee: Q = V_knee - R T_iss^0 (section 3.5: 33 KB/producer, K=148 -> 4.25 MiB).
double capacity_from_knee_bytes(double knee_volume_bytes, double tiss0_s, double drain_rate_bps);

// ---- Section 4.1: the design test (eq. 10) ---------------------------------------------------------
enum class Action { kPiggyback, kReshape };
const char* action_name(Action action);  // "piggyback" / "reshape"
struct DesignTest {
  double injection_rate_bps = 0;   // V / (T_iss^0 + G), must be <= R (long-term rate bound)
  double peak_outstanding_bytes = 0;  // [V - R T_iss^0]+, must be <= Q (single-burst capacity bound)
  bool rate_bound_ok = false;
  bool capacity_bound_ok = false;
  Action action = Action::kReshape;  // piggyback iff both bounds hold
};
DesignTest design_test(double tiss0_s, double volume_bytes, double drain_rate_bps, double capacity_bytes,
                       double gap_s);

// ---- Section 4.2: MegaMoE interleaving (eqs. 11-16) ------------------------------------------------
// Eq. 13: dT_iss^int = [dT_iss^wave - (n1/n2) T_L1^mma]+.
double interleaved_issue_overhead_s(double wave_overhead_s, double n1, double n2, double t_l1_mma_s);
// Eq. 12/14: interleaved gap G_int ~ T_L2^mma + (n1/n2) T_L1^mma.
double interleaved_gap_s(double t_l2_mma_s, double n1, double n2, double t_l1_mma_s);
// Eq. 14: sufficiency, n2 V / (n2 T_iss^0 + n2 T_L2 + n1 T_L1) <= R. Returns the left-hand side (bytes/s).
double interleaved_injection_rate_bps(double volume_bytes, double tiss0_s, double t_l2_mma_s,
                                      double t_l1_mma_s, double n1, double n2);
bool interleaving_sufficient(double volume_bytes, double tiss0_s, double drain_rate_bps, double t_l2_mma_s,
                             double t_l1_mma_s, double n1, double n2);
// Eq. 15: critical-path stall dt = [T_RS - T_cover^mma]+.
double critical_path_stall_s(double span_s, double cover_s);
// Eq. 16: anti-starvation lead D_knee = b_n K_SM / (2 h_inter), in scheduler rows.
double lead_knee_rows(double tile_n, double num_sms, double intermediate_dim);
// The whole-row lead a schedule runs at eq. 16's knee: max(1, ceil(D_knee)) ("auto D", D = 0 on the command line).
int knee_lead_rows(double lead_knee_rows);

// ---- Section 4.3: FlashAttention-A2A (eqs. 17-20) --------------------------------------------------
// Per-producer output tile bytes B_t = b_m d s_out; aggregate aligned burst V = K B_t.
double fa_tile_bytes(int tile_m, int head_dim, int elem_bytes);
// Eq. 17: completion-coupled exposure per burst, dt_cc = [V/R + T_lat - T_cover]+.
double completion_coupled_exposure_s(double volume_bytes, double drain_rate_bps, double latency_s,
                                     double cover_s);
// Q-loop gap lower bound G_Qloop(M) >= sigma * M / b_n (section 4.3).
double qloop_gap_s(double seq_len, int tile_n, double sigma_s_per_kv_tile);
// Eq. 18: dt(M) = [V/R - G_Qloop(M) - T_iss^0]+.
double fa_drain_stall_s(double volume_bytes, double drain_rate_bps, double qloop_gap_s, double tiss0_s);
// Eq. 19: dt'(M) = [dt(M) - G_QK]+.
double fa_critical_stall_s(double drain_stall_s, double qk_cover_s);
// E_drain(M) = N_t [dt(M) - G_QK]+ and E_cc(M) = N_t dt_cc.
double total_exposure_s(double num_bursts, double per_burst_s);
// Eq. 20: M_ub* = b_n G*/sigma, rounded up to a whole tile (tile-aligned sufficient sequence length).
double sequence_length_bound_tokens(int tile_n, double recovery_gap_s, double sigma_s_per_kv_tile);

// ---- Section 5.3: eq. 21 ---------------------------------------------------------------------------
// H = 1 - (T_fused - T_FA) / (T_serial - T_FA).
double hiding_ratio(double t_fused_s, double t_fa_s, double t_serial_s);
double speedup(double t_baseline_s, double t_candidate_s);   // T_serial / T_fused
double residual_exposure_s(double t_fused_s, double t_fa_s);  // E_res = T_fused - T_FA

}  // namespace xs::model
