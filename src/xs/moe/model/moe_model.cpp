// xstage moe host layer: MegaMoE model predictions and the fluid whole-kernel estimate (see moe_model.hpp).
#include "xs/moe/model/moe_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "xs/common/error.hpp"
#include "xs/model/burst_gap.hpp"

namespace xs::moe {
namespace {

namespace m = xs::model;

double positive_part(double x) { return x > 0 ? x : 0; }

void require_positive_int(int value, const char* field, const char* what) {
  if (value < 1) throw input_error(field, std::string(what) + " must be an integer >= 1, got " + std::to_string(value));
}
void require_positive(double value, const char* field, const char* what) {
  if (!(std::isfinite(value) && value > 0))
    throw input_error(field, std::string(what) + " must be a finite number > 0");
}

}  // namespace

const char* bound_verdict_name(BoundVerdict verdict) {
  switch (verdict) {
    case BoundVerdict::kMet: return "met";
    case BoundVerdict::kViolated: return "violated";
    case BoundVerdict::kNotDecided: return "not decided";
  }
  return "?";
}

MoePrediction predict_megamoe(const MoeModelInputs& in) {
  require_positive_int(in.hidden, "hidden", "h");
  require_positive_int(in.intermediate, "intermediate", "I");
  require_positive_int(in.num_ranks, "num_ranks", "P");
  require_positive_int(in.num_sms, "num_sms", "K_SM");
  require_positive_int(in.device_sms, "device_sms", "the device SM count");
  require_positive_int(in.block_m, "block_m", "b_m");
  require_positive_int(in.block_n, "block_n", "b_n");
  require_positive_int(in.elem_bytes, "elem_bytes", "the Combine element size");
  require_positive(in.tensor_flops_per_s, "tensor_flops_per_s", "F (FLOP/s)");
  require_positive(in.drain_rate_bps, "drain_rate", "R (bytes/s)");
  if (!(std::isfinite(in.tiss0_s) && in.tiss0_s >= 0)) throw input_error("tiss0", "T_iss^0 must be a finite time >= 0");
  if (in.capacity_bytes) require_positive(*in.capacity_bytes, "capacity", "Q (bytes), when given,");

  MoePrediction p;
  const double bm = in.block_m, bn = in.block_n, h = in.hidden, inter = in.intermediate, r = in.drain_rate_bps;
  p.flops_per_sm_per_s = in.tensor_flops_per_s / in.device_sms;
  p.l1_mainloop_s = 2 * bm * bn * h / p.flops_per_sm_per_s;      // [b_m x h] x [h x b_n], 2 FLOP per MAC
  p.l2_mainloop_s = 2 * bm * bn * inter / p.flops_per_sm_per_s;  // [b_m x I] x [I x b_n]
  p.l1_per_l2_tiles = 2 * inter / h;                             // (2I/b_n) / (h/b_n) per row block
  p.tile_combine_bytes = bm * bn * in.elem_bytes;
  p.burst_bytes = in.num_sms * p.tile_combine_bytes * (in.num_ranks - 1) / in.num_ranks;
  p.drain_time_s = m::drain_period_s(p.burst_bytes, r);

  // n1, n2 per row block; only their ratio matters below.
  const double n1 = 2 * inter / bn, n2 = h / bn;
  p.wave_gap_s = p.l2_mainloop_s;
  p.wave_issue_overhead_s = m::issue_overhead_s(in.tiss0_s, p.burst_bytes, r, p.wave_gap_s);
  // In the wave's steady state the storers issue back to back (their own gap ~ 0), so the store span is
  // T_RS = max(T_iss^0, V/R) (eq. 3 at G = 0); the cover is the next L2 mainloop (two staging buffers).
  p.wave_stall_per_l2_tile_s =
      m::critical_path_stall_s(std::max(in.tiss0_s, p.drain_time_s), p.l2_mainloop_s);
  p.interleaved_gap_s = m::interleaved_gap_s(p.l2_mainloop_s, n1, n2, p.l1_mainloop_s);
  p.interleaved_issue_overhead_s = m::interleaved_issue_overhead_s(p.wave_issue_overhead_s, n1, n2, p.l1_mainloop_s);
  p.interleaved_stall_per_l2_tile_s = positive_part(p.drain_time_s - p.interleaved_gap_s);
  p.interleaved_injection_rate_bps =
      m::interleaved_injection_rate_bps(p.burst_bytes, in.tiss0_s, p.l2_mainloop_s, p.l1_mainloop_s, n1, n2);
  p.rate_bound_ok = p.interleaved_injection_rate_bps <= r;
  p.peak_outstanding_bytes = m::peak_outstanding_bytes(in.tiss0_s, p.burst_bytes, r);
  if (in.capacity_bytes)
    p.capacity_bound = p.peak_outstanding_bytes <= *in.capacity_bytes ? BoundVerdict::kMet : BoundVerdict::kViolated;
  // Either bound failing decides "violated" (without Q too); otherwise the capacity bound's state decides.
  const bool violated = !p.rate_bound_ok || p.capacity_bound == BoundVerdict::kViolated;
  p.interleaving_sufficient = violated ? BoundVerdict::kViolated : p.capacity_bound;
  p.lead_knee_rows = m::lead_knee_rows(bn, in.num_sms, inter);
  return p;
}

FluidEstimate fluid_kernel_estimate(const std::vector<WaveWork>& waves, int num_sms, double l1_mainloop_s,
                                    double l2_mainloop_s, double drain_rate_bps, double capacity_bytes) {
  require_positive_int(num_sms, "num_sms", "K_SM");
  require_positive(drain_rate_bps, "drain_rate", "R (bytes/s)");
  if (!(l1_mainloop_s >= 0 && l2_mainloop_s >= 0 && std::isfinite(l1_mainloop_s) && std::isfinite(l2_mainloop_s)))
    throw input_error("mainloop", "T_L1 and T_L2 must be finite times >= 0");
  if (!(capacity_bytes >= 0)) throw input_error("capacity", "Q must be >= 0 bytes (+infinity: no limit)");
  FluidEstimate est;
  double queue_bytes = 0, total_bytes = 0;
  for (std::size_t w = 0; w < waves.size(); ++w) {
    const WaveWork& work = waves[w];
    if (!(work.num_l1_tiles >= 0 && work.num_l2_tiles >= 0 && work.remote_bytes >= 0))
      throw input_error("waves[" + std::to_string(w) + "]", "tile counts and bytes must be >= 0");
    const double c1 = work.num_l1_tiles * l1_mainloop_s / num_sms;
    const double c2 = work.num_l2_tiles * l2_mainloop_s / num_sms;
    est.compute_s += c1 + c2;
    total_bytes += work.remote_bytes;
    // L1 phase: nothing injected, the queue drains.
    queue_bytes = positive_part(queue_bytes - drain_rate_bps * c1);
    // L2 phase: V_w injected while R drains; past Q the phase lasts until the excess has drained.
    const double unconstrained = queue_bytes + work.remote_bytes - drain_rate_bps * c2;
    double phase_s = c2;
    if (unconstrained > capacity_bytes) {
      phase_s = (queue_bytes + work.remote_bytes - capacity_bytes) / drain_rate_bps;
      queue_bytes = capacity_bytes;
    } else {
      queue_bytes = positive_part(unconstrained);
    }
    est.wave_schedule_s += c1 + phase_s;
  }
  est.wave_schedule_s += queue_bytes / drain_rate_bps;  // the final fence waits for the last bytes
  est.drain_s = total_bytes / drain_rate_bps;
  est.interleaved_s = std::max(est.compute_s, est.drain_s);
  return est;
}

std::vector<WaveWork> expert_waves(const MoeProblem& problem, int block_n, int experts_per_wave, int elem_bytes) {
  require_positive_int(experts_per_wave, "experts_per_wave", "experts per wave");
  require_positive_int(elem_bytes, "elem_bytes", "the Combine element size");
  const auto tiles = problem.tile_space(block_n);
  std::vector<WaveWork> waves;
  for (int first = 0; first < problem.num_local_experts; first += experts_per_wave) {
    const int end = std::min(first + experts_per_wave, problem.num_local_experts);
    WaveWork w;
    const std::uint32_t first_block = problem.expert_first_block[first], end_block = problem.expert_first_block[end];
    const double blocks = end_block - first_block;
    w.num_l1_tiles = blocks * tiles.l1_tiles_per_row;
    w.num_l2_tiles = blocks * tiles.l2_tiles_per_row;
    std::uint64_t remote_rows = 0;
    for (std::uint64_t row = std::uint64_t{first_block} * kPoolBlockRows;
         row < std::uint64_t{end_block} * kPoolBlockRows; ++row)
      remote_rows += problem.pool_arrival[row] >= 0 && problem.pool_dst_rank[row] != problem.emulated_rank;
    w.remote_bytes = static_cast<double>(remote_rows) * problem.hidden * elem_bytes;
    waves.push_back(w);
  }
  return waves;
}

}  // namespace xs::moe
