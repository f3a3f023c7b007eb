// xstage model layer: the Burst-Gap equations of the paper's sections 3-4 (see burst_gap.hpp).
// Plain arithmetic in SI units; callers validate inputs (the CLI and the fitter), so these never throw.
#include "xs/model/burst_gap.hpp"

#include <algorithm>
#include <cmath>

namespace xs::model {
namespace {

double positive_part(double x) { return std::max(x, 0.0); }  // [x]+

}  // namespace

// ---- Section 3 ---------------------------------------------------------------------------------------

double drain_period_s(double volume_bytes, double drain_rate_bps) { return volume_bytes / drain_rate_bps; }

double issue_time_s(double tiss0_s, double volume_bytes, double drain_rate_bps, double gap_s) {
  // Eq. 3: the previous burst's leftovers delay issue by V/R - G; issue is never faster than T_iss^0.
  return std::max(tiss0_s, drain_period_s(volume_bytes, drain_rate_bps) - gap_s);
}

double issue_overhead_s(double tiss0_s, double volume_bytes, double drain_rate_bps, double gap_s) {
  return positive_part(drain_period_s(volume_bytes, drain_rate_bps) - gap_s - tiss0_s);  // eq. 4
}

double period_s(double tiss0_s, double volume_bytes, double drain_rate_bps, double gap_s) {
  // Eq. 2 with eq. 3 gives the max law T_period = max(T_iss^0 + G, V/R): the gap overlaps draining.
  return issue_time_s(tiss0_s, volume_bytes, drain_rate_bps, gap_s) + gap_s;
}

double completion_coupled_period_s(double volume_bytes, double drain_rate_bps, double gap_s) {
  return gap_s + drain_period_s(volume_bytes, drain_rate_bps);  // T_period^cc = G + V/R (section 3.4)
}

double recovery_gap_s(double tiss0_s, double volume_bytes, double drain_rate_bps) {
  return positive_part(drain_period_s(volume_bytes, drain_rate_bps) - tiss0_s);  // eq. 5
}

double peak_outstanding_bytes(double tiss0_s, double volume_bytes, double drain_rate_bps) {
  // Eq. 6: V bytes injected during T_iss^0 while R T_iss^0 bytes drain.
  return positive_part(volume_bytes - drain_rate_bps * tiss0_s);
}

double isolated_issue_time_s(double tiss0_s, double volume_bytes, double drain_rate_bps,
                             double capacity_bytes) {
  // Eq. 7: bytes beyond Q wait for the drain.
  return std::max(tiss0_s, (volume_bytes - capacity_bytes) / drain_rate_bps);
}

double capacity_from_knee_bytes(double knee_volume_bytes, double tiss0_s, double drain_rate_bps) {
  // At the knee q_peak = Q exactly (eq. 6 equal to the capacity).
  return peak_outstanding_bytes(tiss0_s, knee_volume_bytes, drain_rate_bps);
}

// ---- Section 4.1 -------------------------------------------------------------------------------------

const char* action_name(Action action) { return action == Action::kPiggyback ? "piggyback" : "reshape"; }

DesignTest design_test(double tiss0_s, double volume_bytes, double drain_rate_bps, double capacity_bytes,
                       double gap_s) {
  DesignTest t;
  t.injection_rate_bps = volume_bytes / (tiss0_s + gap_s);  // eq. 10, left bound: V / (T_iss^0 + G)
  t.peak_outstanding_bytes = peak_outstanding_bytes(tiss0_s, volume_bytes, drain_rate_bps);
  t.rate_bound_ok = t.injection_rate_bps <= drain_rate_bps;
  t.capacity_bound_ok = t.peak_outstanding_bytes <= capacity_bytes;
  t.action = (t.rate_bound_ok && t.capacity_bound_ok) ? Action::kPiggyback : Action::kReshape;
  return t;
}

// ---- Section 4.2 -------------------------------------------------------------------------------------

double interleaved_issue_overhead_s(double wave_overhead_s, double n1, double n2, double t_l1_mma_s) {
  // Eq. 13: each unit of inserted Linear-1 work removes one unit of issue stall, down to zero.
  return positive_part(wave_overhead_s - (n1 / n2) * t_l1_mma_s);
}

double interleaved_gap_s(double t_l2_mma_s, double n1, double n2, double t_l1_mma_s) {
  return t_l2_mma_s + (n1 / n2) * t_l1_mma_s;  // eq. 12 plus the inserted Linear-1 share (eq. 14)
}

double interleaved_injection_rate_bps(double volume_bytes, double tiss0_s, double t_l2_mma_s,
                                      double t_l1_mma_s, double n1, double n2) {
  // Eq. 14: one cycle issues n2 bursts of V over n2 (T_iss^0 + T_L2) + n1 T_L1.
  return n2 * volume_bytes / (n2 * tiss0_s + n2 * t_l2_mma_s + n1 * t_l1_mma_s);
}

bool interleaving_sufficient(double volume_bytes, double tiss0_s, double drain_rate_bps, double t_l2_mma_s,
                             double t_l1_mma_s, double n1, double n2) {
  return interleaved_injection_rate_bps(volume_bytes, tiss0_s, t_l2_mma_s, t_l1_mma_s, n1, n2) <=
         drain_rate_bps;
}

double critical_path_stall_s(double span_s, double cover_s) { return positive_part(span_s - cover_s); }

double lead_knee_rows(double tile_n, double num_sms, double intermediate_dim) {
  return tile_n * num_sms / (2.0 * intermediate_dim);  // eq. 16
}

int knee_lead_rows(double lead_knee_rows) {
  return std::max(1, static_cast<int>(std::ceil(lead_knee_rows)));
}

// ---- Section 4.3 -------------------------------------------------------------------------------------

double fa_tile_bytes(int tile_m, int head_dim, int elem_bytes) {
  return static_cast<double>(tile_m) * head_dim * elem_bytes;  // B_t = b_m d s_out
}

double completion_coupled_exposure_s(double volume_bytes, double drain_rate_bps, double latency_s,
                                     double cover_s) {
  return positive_part(drain_period_s(volume_bytes, drain_rate_bps) + latency_s - cover_s);  // eq. 17
}

double qloop_gap_s(double seq_len, int tile_n, double sigma_s_per_kv_tile) {
  // Lower bound sigma M / b_n: the positive fixed component of the Q-loop is dropped (conservative).
  return sigma_s_per_kv_tile * seq_len / tile_n;
}

double fa_drain_stall_s(double volume_bytes, double drain_rate_bps, double qloop_gap_s, double tiss0_s) {
  return issue_overhead_s(tiss0_s, volume_bytes, drain_rate_bps, qloop_gap_s);  // eq. 18 is eq. 4 at G_Qloop
}

double fa_critical_stall_s(double drain_stall_s, double qk_cover_s) {
  return positive_part(drain_stall_s - qk_cover_s);  // eq. 19
}

double total_exposure_s(double num_bursts, double per_burst_s) { return num_bursts * per_burst_s; }

double sequence_length_bound_tokens(int tile_n, double recovery_gap_s, double sigma_s_per_kv_tile) {
  // Eq. 20 counts KV tiles: G*/sigma tiles, rounded up so M_ub* is a whole number of b_n-token tiles.
  // The 1e-9 slack keeps an exact multiple (from rounded inputs) from gaining a spurious tile.
  const double tiles = std::ceil(recovery_gap_s / sigma_s_per_kv_tile - 1e-9);
  return std::max(tiles, 0.0) * tile_n;
}

// ---- Section 5.3 -------------------------------------------------------------------------------------

double hiding_ratio(double t_fused_s, double t_fa_s, double t_serial_s) {
  // Eq. 21: share of the serial communication time (T_serial - T_FA) the fused kernel hides. Not clamped:
  // a fused run faster than FA alone gives H > 1, which the paper prints as "~100%".
  return 1.0 - (t_fused_s - t_fa_s) / (t_serial_s - t_fa_s);
}

double speedup(double t_baseline_s, double t_candidate_s) { return t_baseline_s / t_candidate_s; }

double residual_exposure_s(double t_fused_s, double t_fa_s) { return t_fused_s - t_fa_s; }

}  // namespace xs::model
