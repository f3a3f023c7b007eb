// xstage attention host layer: FlashAttention-A2A predictions (see fa_model.hpp).
#include "attention/fa_model.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "attention/config.hpp"
#include "common/error.hpp"

namespace xs::attention {

using xs::kernels::attention::TileShape;

FaA2aPrediction predict_fa_a2a(const FaA2aModelInputs& in) {
  if (in.seq_len <= 0 || in.num_heads <= 0) throw input_error("seq_len", "M and num_heads must be positive");
  if (in.drain_rate_bps <= 0) throw input_error("drain_rate", "R must be positive");
  if (in.sigma_s_per_kv_tile <= 0) throw input_error("sigma", "sigma (Q-loop time per KV tile) must be positive");
  FaA2aPrediction p;
  const double tiles = static_cast<double>(in.num_heads) * (in.seq_len / TileShape::kBlockM);
  p.num_producers = static_cast<int>(std::min<double>(in.num_ctas, tiles));
  if (in.head_dim < 0) throw input_error("head_dim", "d must be positive (0: the kernel's tile shape)");
  if (in.sigma_compute_only_s_per_kv_tile < 0) throw input_error("sigma_fa", "must be >= 0 (0: not measured)");
  const int head_dim = in.head_dim > 0 ? in.head_dim : TileShape::kHeadDim;
  p.tile_bytes = xs::model::fa_tile_bytes(TileShape::kBlockM, head_dim, TileShape::kElemBytes);
  p.burst_bytes = p.num_producers * p.tile_bytes;
  p.num_bursts = std::ceil(tiles / std::max(p.num_producers, 1));
  p.qloop_gap_s = xs::model::qloop_gap_s(in.seq_len, TileShape::kBlockN, in.sigma_s_per_kv_tile);
  p.recovery_gap_s = xs::model::recovery_gap_s(in.tiss0_s, p.burst_bytes, in.drain_rate_bps);
  p.seq_len_bound_tokens =
      xs::model::sequence_length_bound_tokens(TileShape::kBlockN, p.recovery_gap_s, in.sigma_s_per_kv_tile);
  p.drain_stall_s = xs::model::fa_drain_stall_s(p.burst_bytes, in.drain_rate_bps, p.qloop_gap_s, in.tiss0_s);
  const double cover_s = in.cover_s >= 0 ? in.cover_s : in.sigma_s_per_kv_tile / 2;
  p.critical_stall_s = xs::model::fa_critical_stall_s(p.drain_stall_s, cover_s);
  p.e_drain_s = xs::model::total_exposure_s(p.num_bursts, p.critical_stall_s);
  p.dt_cc_s = xs::model::completion_coupled_exposure_s(p.burst_bytes, in.drain_rate_bps, in.completion_latency_s,
                                                       cover_s);
  p.e_cc_s = xs::model::total_exposure_s(p.num_bursts, p.dt_cc_s);
  p.design = xs::model::design_test(in.tiss0_s, p.burst_bytes, in.drain_rate_bps,
                                    in.capacity_bytes > 0 && !in.capacity_bracketed ? in.capacity_bytes : INFINITY,
                                    p.qloop_gap_s);
  p.verdict = xs::model::action_name(p.design.action);

  p.num_kv_tiles = (in.seq_len + TileShape::kBlockN - 1) / TileShape::kBlockN;
  p.e_issue_s = p.num_bursts * in.tiss0_s;
  p.e_issue_phase_aware_s = p.num_bursts * (in.tiss0_cluster_s >= 0 ? in.tiss0_cluster_s : in.tiss0_s);
  if (in.sigma_compute_only_s_per_kv_tile > 0)  // signed: a faster fused Q-loop predicts a negative term
    p.e_load_s = p.num_bursts * p.num_kv_tiles * (in.sigma_s_per_kv_tile - in.sigma_compute_only_s_per_kv_tile);
  const bool rate_ok = p.design.rate_bound_ok;
  // [lower, upper) of Q: a known Q is both ends; a lower bound alone (or Q unknown: 0) leaves upper at +inf
  // unless a bracket gave one.
  auto bracket = [](double bytes, bool is_lower_bound, double upper_bytes) {
    const double lower = bytes > 0 ? bytes : 0;
    const double upper = bytes > 0 && !is_lower_bound ? bytes : std::max(lower, upper_bytes);
    return std::pair{lower, upper};
  };
  const auto [q_lo, q_hi] = bracket(in.capacity_bytes, in.capacity_is_lower_bound, in.capacity_upper_bytes);
  const auto [qc_lo, qc_hi] =
      in.phase_capacity_bytes < 0
          ? std::pair{q_lo, q_hi}
          : bracket(in.phase_capacity_bytes, in.phase_capacity_is_lower_bound, in.phase_capacity_upper_bytes);
  p.aligned = burst_verdict_bracketed(
      aligned_wave_outstanding(p.num_producers, p.tile_bytes, in.drain_rate_bps, in.tiss0_s), q_lo, q_hi,
      in.drain_rate_bps, p.num_bursts, rate_ok);
  p.phase_aware = burst_verdict_bracketed(
      phase_aware_wave_outstanding(p.num_producers, p.tile_bytes, in.drain_rate_bps, in.tiss0_s, in.alignment,
                                   in.tiss0_cluster_s),
      qc_lo, qc_hi, in.drain_rate_bps, p.num_bursts, rate_ok);
  auto e_res = [&](const BurstVerdict& v, double e_issue_s, double e_cap_s) {
    if (!v.capacity_decided) return std::nan("");
    return e_issue_s + p.e_load_s + std::max(p.e_drain_s, e_cap_s);
  };
  p.e_res_capacity_met_s = p.e_issue_s + p.e_load_s + p.e_drain_s;
  p.e_res_capacity_met_phase_aware_s = p.e_issue_phase_aware_s + p.e_load_s + p.e_drain_s;
  p.e_res_aligned_s = e_res(p.aligned, p.e_issue_s, p.aligned.e_cap_s);
  p.e_res_phase_aware_s = e_res(p.phase_aware, p.e_issue_phase_aware_s, p.phase_aware.e_cap_s);
  p.e_res_aligned_min_s = e_res(p.aligned, p.e_issue_s, p.aligned.e_cap_min_s);
  p.e_res_phase_aware_min_s = e_res(p.phase_aware, p.e_issue_phase_aware_s, p.phase_aware.e_cap_min_s);
  return p;
}

SigmaChoice choose_sigma(double sigma_fa_s, double sigma_fused_s, double qloop_median_s, double qloop_p10_s,
                         double qloop_p90_s) {
  SigmaChoice c;
  c.compute_only_s = std::max(0.0, sigma_fa_s);
  c.under_load_s = std::max(0.0, sigma_fused_s);
  if (qloop_median_s > 0 && qloop_p90_s >= qloop_p10_s)
    c.relative_spread = (qloop_p90_s - qloop_p10_s) / (2 * qloop_median_s);
  if (c.compute_only_s > 0 && c.under_load_s > 0) {
    c.ratio = c.under_load_s / c.compute_only_s;
    const bool differs = std::abs(c.ratio - 1) > c.relative_spread;
    c.applied = differs ? "under_load" : "compute_only";
    c.applied_s = differs ? c.under_load_s : c.compute_only_s;
    c.why = fmt::format("sigma_fused / sigma_FA = {:.3f}, {} the fused Q-loop's relative spread {:.3f}", c.ratio,
                        differs ? "outside" : "within", c.relative_spread);
  } else if (c.under_load_s > 0) {
    c.applied = "under_load";
    c.applied_s = c.under_load_s;
    c.why = "only the fused launch's sigma was measured";
  } else if (c.compute_only_s > 0) {
    c.applied = "compute_only";
    c.applied_s = c.compute_only_s;
    c.why = "only the FA-only sigma was measured";
  } else {
    c.applied = "none";
    c.why = "no sigma measured";
  }
  return c;
}

}  // namespace xs::attention
