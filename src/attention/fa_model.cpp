// xstage attention host layer: FlashAttention-A2A predictions (see fa_model.hpp).
#include "attention/fa_model.hpp"

#include <algorithm>
#include <cmath>

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
  p.tile_bytes = xs::model::fa_tile_bytes(TileShape::kBlockM, TileShape::kHeadDim, TileShape::kElemBytes);
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
                                    in.capacity_bytes > 0 ? in.capacity_bytes : INFINITY, p.qloop_gap_s);
  p.verdict = xs::model::action_name(p.design.action);
  return p;
}

}  // namespace xs::attention
