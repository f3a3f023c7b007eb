// xstage attention judge layer: E_res(M) with the interference term (see fa_interference_prediction.hpp).
#include "xs/attention/model/fa_interference_prediction.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "xs/kernels/attention/config.hpp"
#include "xs/model/burst_gap.hpp"

namespace xs::attention::model {
namespace {

using nlohmann::json;
using xs::kernels::attention::TileShape;

json number(double x) { return std::isfinite(x) ? json(x) : json(); }

double side_of(const xs::model::SlowdownBracket& s, int side) { return side == 0 ? s.lo : side == 2 ? s.hi : s.mid; }

}  // namespace

FaReplay replay_fa_waves(const FaFrozenInputs& in, const xs::model::SlowdownSource& term, double r_bps, double q_bytes,
                         int side, double l2_bytes) {
  const FaPointConfig& c = in.config;
  const int head_dim = c.head_dim > 0 ? c.head_dim : TileShape::kHeadDim;
  const double tiles = static_cast<double>(c.num_heads) * (c.seq_len / TileShape::kBlockM);
  const int k = static_cast<int>(std::min<double>(c.num_ctas, std::max(tiles, 1.0)));
  const double waves = std::ceil(tiles / k);
  const double tile_bytes = xs::model::fa_tile_bytes(TileShape::kBlockM, head_dim, TileShape::kElemBytes);
  // Bytes of one tile through the target (host: every slice; the configuration's remote bytes over the tiles).
  const double remote_tile_bytes = c.remote_bytes > 0 ? c.remote_bytes / tiles : tile_bytes;
  const double wave_s = in.compute_only.t_fa_s / waves;                               // L
  const double qloop_s = std::min(wave_s, xs::model::qloop_gap_s(c.seq_len, TileShape::kBlockN,
                                                             in.compute_only.sigma_s_per_kv_tile));  // G
  const double kv_bytes = 2.0 * c.num_heads * c.seq_len * head_dim * TileShape::kElemBytes;
  FaReplay out;
  xs::model::OutsideCalibration outside;
  double q = 0, sum_s = 0;
  int beside = 0;
  double left = tiles;
  double previous_bytes = 0;  // the previous wave's stores, issued as this wave starts
  for (int w = 0; w < static_cast<int>(waves); ++w) {
    const double k_w = std::min<double>(k, left);
    left -= k_w;
    // Issue the previous wave's stores; past Q the issuers wait for room.
    if (previous_bytes > 0) {
      q += previous_bytes;
      if (std::isfinite(q_bytes) && q > q_bytes) {
        const double wait = (q - q_bytes) / r_bps;
        out.capacity_wait_s += wait;
        q = q_bytes;
      }
    }
    double s = 1;
    if (previous_bytes > 0) {
      xs::model::LoadState load;
      load.offered_rate_bps = previous_bytes / wave_s;
      load.outstanding_bytes = q;
      load.drain_rate_bps = r_bps;
      load.capacity_bytes = std::isfinite(q_bytes) ? q_bytes : 0.0;
      load.num_sms = k;
      load.operands_in_l2 = kv_bytes <= 0.5 * l2_bytes;
      // The tile the wait is added to: one output tile's Q-loop, which loads a K and a V tile (2 x d/64
      // 64-wide blocks) per KV tile.
      load.tile_time_s = qloop_s;
      load.k_blocks_per_tile = static_cast<int>(2 * (head_dim / 64) * std::ceil(double(c.seq_len) / TileShape::kBlockN));
      load.burst_bytes_per_sm = remote_tile_bytes;
      // u, the share of the wave the path is full: the burst arrives at the wave's start, the queue drains at R
      // and stays above Q for (q - Q) / R. Without a finite Q the term derives u from the offered rate.
      if (std::isfinite(q_bytes)) load.full_fraction = std::min(1.0, std::max(0.0, q - q_bytes) / r_bps / wave_s);
      outside.add(term, load, qloop_s);
      s = side_of(term.slowdown(load), side);
      sum_s += s;
      ++beside;
    }
    const double dur = wave_s + qloop_s * (s - 1);
    out.extra_compute_s += qloop_s * (s - 1);
    q = std::max(0.0, q - r_bps * dur);
    previous_bytes = k_w * remote_tile_bytes;
  }
  out.queue_end_bytes = q + previous_bytes;  // the last wave's stores, issued after its compute
  out.mean_slowdown = beside ? sum_s / beside : 1.0;
  out.term_outside_calibration = outside.sentence();
  out.below_loads = outside.below;
  out.below_extra_s = outside.below_extra_s;
  return out;
}

FaInterferencePrediction predict_with_interference(const FaFrozenInputs& in, const xs::model::SlowdownSource& term,
                                                   double l2_bytes) {
  FaInterferencePrediction p;
  const FaPointConfig& c = in.config;
  const double tiles = static_cast<double>(c.num_heads) * (c.seq_len / TileShape::kBlockM);
  p.num_producers = static_cast<int>(std::min<double>(c.num_ctas, std::max(tiles, 1.0)));
  p.num_waves = std::ceil(tiles / p.num_producers);
  p.wave_s = in.compute_only.t_fa_s / p.num_waves;
  if (!term.usable()) {
    p.why_not = term.reason_not_usable();
    return p;
  }
  if (!(in.compute_only.sigma_s_per_kv_tile > 0) || !(in.compute_only.t_fa_s > 0)) {
    p.why_not = "no FA-only sigma or T_FA measured: the Q-loop and the wave time are unknown";
    return p;
  }
  p.qloop_s = std::min(p.wave_s, xs::model::qloop_gap_s(c.seq_len, TileShape::kBlockN, in.compute_only.sigma_s_per_kv_tile));
  const Interval r = in.drain_rate.range, q = in.capacity.range;
  if (!(r.lo > 0) || !std::isfinite(r.hi)) {
    p.why_not = "R is not bounded by the calibration: " + in.drain_rate.why;
    return p;
  }
  p.computed = true;
  // Corners: R's range x Q's range x the term's side. E_res is nonincreasing in R and Q; the term's side
  // orders s; every corner is evaluated anyway.
  double slo = INFINITY, shi = 0, clo = INFINITY, chi = 0;
  for (double rv : {r.lo, r.hi})
    for (double qv : {q.lo, q.hi})
      for (int side : {0, 2}) {
        const double q_eff = qv > 0 ? qv : 0.0;
        const FaReplay x = replay_fa_waves(in, term, rv, std::isfinite(q_eff) ? q_eff : INFINITY, side, l2_bytes);
        if (p.term_outside_calibration.empty()) p.term_outside_calibration = x.term_outside_calibration;
        // Below the calibrated range the term is a bracket: a point only where it cannot add over 1% of T_FA.
        if (p.term_outside_calibration.empty() && x.below_extra_s > 0.01 * in.compute_only.t_fa_s)
          p.term_outside_calibration = fmt::format(
              "the interference term is used below its calibrated range at {} waves, where it is only the bracket "
              "[1, its high end at the calibrated minimum]: they may add up to {:.4g} s, over 1% of T_FA (no point)",
              x.below_loads, x.below_extra_s);
        const double sv = x.sender_s(rv, std::isfinite(q_eff) ? q_eff : INFINITY);
        const double cv = x.completion_s(rv);
        slo = std::min(slo, sv);
        shi = std::max(shi, sv);
        clo = std::min(clo, cv);
        chi = std::max(chi, cv);
      }
  p.sender = {slo, shi};
  p.completion = {clo, chi};
  if (in.drain_rate.has_point()) {
    const double rv = in.drain_rate.point;
    // Completion: Q enters only through the capacity waits; at Q's point where there is one, else at +inf
    // (no waits) with the bracket carrying the rest.
    // Q sets the capacity waits and the share of time the path is full (u): a point only where Q has one.
    const double qv = in.capacity.has_point() ? in.capacity.point : NAN;
    if (std::isnan(qv)) {
      p.why_no_point = "Q(K) has no point (" + in.capacity.why + "): it sets the capacity waits and the share of "
                       "time the path is full, so E_res is the interval only";
    } else {
      const FaReplay x = replay_fa_waves(in, term, rv, qv, 1, l2_bytes);
      p.extra_compute_s = x.extra_compute_s;
      p.mean_slowdown = x.mean_slowdown;
      p.completion_point_s = x.completion_s(rv);
      p.sender_point_s = x.sender_s(rv, qv);
    }
  } else {
    p.why_no_point = "R has no point: " + in.drain_rate.why;
  }
  if (!p.term_outside_calibration.empty()) {  // an extrapolation of the term is no point prediction (issue 27 item 4)
    p.extra_compute_s = p.sender_point_s = p.completion_point_s = NAN;
    p.why_no_point = p.term_outside_calibration;
  }
  return p;
}

json to_json(const FaInterferencePrediction& p) {
  if (!p.computed) return {{"computed", false}, {"why_not", p.why_not}};
  return {{"computed", true},
          {"model", "wave replay: E_res = sum_w G (s_w - 1) + capacity waits + tail (sender: [q_end - Q]+ / R; "
                    "completion: q_end / R)"},
          {"K", p.num_producers}, {"N_t", p.num_waves}, {"L_wave_s", p.wave_s}, {"G_qloop_s", p.qloop_s},
          {"mean_slowdown", p.mean_slowdown}, {"extra_compute_point_s", number(p.extra_compute_s)},
          {"sender_side", {{"point_s", number(p.sender_point_s)}, {"interval_s", {number(p.sender.lo), number(p.sender.hi)}}}},
          {"completion", {{"point_s", number(p.completion_point_s)},
                          {"interval_s", {number(p.completion.lo), number(p.completion.hi)}}}},
          {"why_no_point", p.why_no_point.empty() ? json() : json(p.why_no_point)},
          {"term_outside_calibration", p.term_outside_calibration.empty() ? json() : json(p.term_outside_calibration)}};
}

}  // namespace xs::attention::model
