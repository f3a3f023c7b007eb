// xstage attention judge layer: the frozen FA-A2A prediction (see fa_frozen_prediction.hpp).
#include "xs/attention/model/fa_frozen_prediction.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "xs/kernels/attention/config.hpp"
#include "xs/common/error.hpp"
#include "xs/model/burst_gap.hpp"

namespace xs::attention::model {
namespace {

using nlohmann::json;
using xs::kernels::attention::TileShape;

json number(double x) { return std::isfinite(x) ? json(x) : json(); }
json interval_json(const Interval& i) { return json::array({number(i.lo), number(i.hi)}); }
json term_json(const Term& t) {
  return {{"point", number(t.point)}, {"range", interval_json(t.range)}, {"source", t.source},
          {"why_no_point", t.why.empty() ? json() : json(t.why)}};
}
std::string us(double s) { return std::isfinite(s) ? fmt::format("{:.1f} us", s * 1e6) : std::string("inf"); }

struct Parts {
  double issue_s = 0, drain_s = 0, cap_s = 0;
  double total() const { return issue_s + std::max(drain_s, cap_s); }
};
// One evaluation of the aligned case at (T_iss^0, R, Q); Q = +inf: no capacity bound.
Parts evaluate(const FaFrozenPrediction& p, double tiss0_s, double r_bps, double q_bytes) {
  Parts x;
  if (!std::isfinite(tiss0_s)) return {INFINITY, 0, 0};
  x.issue_s = p.num_bursts * tiss0_s;
  const double dt = xs::model::fa_drain_stall_s(p.burst_bytes, r_bps, p.qloop_gap_s, tiss0_s);  // eq. 18
  x.drain_s = xs::model::total_exposure_s(p.num_bursts, xs::model::fa_critical_stall_s(dt, p.cover_s));  // eq. 19
  const double q_peak = xs::model::peak_outstanding_bytes(tiss0_s, p.burst_bytes, r_bps);  // eq. 6
  x.cap_s = std::isfinite(q_bytes) ? p.num_bursts * std::max(0.0, q_peak - q_bytes) / r_bps : 0.0;  // eq. 7
  return x;
}

}  // namespace

FaComputeOnly compute_only_of(const FaA2aPointResult& r) {
  FaComputeOnly c;
  // Sigma in the regime E_res is measured in (the FA-only launches of the sender-side rounds, SM cycles at
  // their own median clock) where measured, else the lone instrumented FA-only launch.
  if (r.sigma_rounds_fa_cycles.median > 0 && r.clock_fa_hz.median > 0) {
    c.sigma_s_per_kv_tile = r.sigma_rounds_fa_cycles.median / r.clock_fa_hz.median;
    c.sigma_source = "fa_only_rounds";
  } else if (r.sigma_fa_s_per_kv_tile > 0) {
    c.sigma_s_per_kv_tile = r.sigma_fa_s_per_kv_tile;
    c.sigma_source = "fa_only_launch";
  }
  const bool sender = r.sender_fa.median > 0;
  c.t_fa_s = sender ? r.sender_fa.median : r.t_fa.median;
  c.t_fa_boundary = sender ? "sender_side" : "remote_visible_completion";
  return c;
}

FaFrozenInputs frozen_inputs(const FaPointConfig& config, const FaComputeOnly& compute_only,
                             const FaCalibration& calibration) {
  if (config.seq_len <= 0 || config.num_heads <= 0 || config.num_ctas <= 0)
    throw input_error("fa_a2a", "M, heads and CTAs must be positive for a prediction");
  FaFrozenInputs in;
  in.config = config;
  in.compute_only = compute_only;
  const int head_dim = config.head_dim > 0 ? config.head_dim : TileShape::kHeadDim;
  in.config.head_dim = head_dim;
  const double tiles = static_cast<double>(config.num_heads) * (config.seq_len / TileShape::kBlockM);
  const int k = static_cast<int>(std::min<double>(config.num_ctas, std::max(tiles, 1.0)));
  const double v = k * xs::model::fa_tile_bytes(TileShape::kBlockM, head_dim, TileShape::kElemBytes);
  in.drain_rate = drain_rate_term(calibration);
  in.tiss0 = tiss0_term(calibration, k, v);
  in.capacity = capacity_term(calibration, k, v);
  in.provenance = {{"calibration_file", calibration.path}, {"calibration_fnv1a64", calibration.fnv1a64},
                   {"calibration_git_sha", calibration.git_sha}, {"calibration_date_utc", calibration.date_utc},
                   {"calibration_target", calibration.target}, {"calibration_backend", calibration.backend},
                   {"compute_only", fmt::format("FA-only variant of the same point: sigma from {}, T_FA at {}",
                                                compute_only.sigma_source.empty() ? "nothing" : compute_only.sigma_source,
                                                compute_only.t_fa_boundary)}};
  return in;
}

FaFrozenPrediction predict_frozen(const FaFrozenInputs& in) {
  FaFrozenPrediction p;
  const FaPointConfig& c = in.config;
  const double tiles = static_cast<double>(c.num_heads) * (c.seq_len / TileShape::kBlockM);
  p.num_producers = static_cast<int>(std::min<double>(c.num_ctas, std::max(tiles, 1.0)));
  p.tile_bytes = xs::model::fa_tile_bytes(TileShape::kBlockM, c.head_dim, TileShape::kElemBytes);
  p.burst_bytes = p.num_producers * p.tile_bytes;
  p.num_bursts = std::ceil(tiles / p.num_producers);
  const double sigma = in.compute_only.sigma_s_per_kv_tile;
  const double bytes = c.remote_bytes > 0 ? c.remote_bytes : tiles * p.tile_bytes;
  const Interval r = in.drain_rate.range;
  p.unhidden_range = {r.hi > 0 ? bytes / r.hi : INFINITY, r.lo > 0 ? bytes / r.lo : INFINITY};
  p.unhidden_s = in.drain_rate.has_point() ? bytes / in.drain_rate.point : NAN;
  if (!(sigma > 0)) {
    p.e_res = {0, INFINITY};
    p.why_not_decided = "no FA-only sigma measured: the Q-loop gap is unknown";
    p.design = "undecided";
    return p;
  }
  p.qloop_gap_s = xs::model::qloop_gap_s(c.seq_len, TileShape::kBlockN, sigma);
  p.cover_s = sigma / 2;
  // The corners of the (T_iss^0, R, Q) box; an unbounded R (not identified) or T_iss^0 leaves hi at +inf.
  const Interval t = in.tiss0.range, q = in.capacity.range;
  double lo = INFINITY, hi = 0;
  bool rate_ok_all = true, rate_ok_any = false, cap_ok_all = true, cap_ok_any = false;
  for (double tv : {t.lo, t.hi})
    for (double rv : {r.lo, r.hi})
      for (double qv : {q.lo, q.hi}) {
        if (!(rv > 0) || !std::isfinite(rv)) {
          hi = INFINITY;
          lo = std::min(lo, 0.0);
          if (rv > 0) {
            // R unbounded: eq. 10's rate bound holds (a finite injection rate), and q_peak = [V - R T_iss^0]+
            // lies in [0, V] (at T_iss^0 = 0 the product is infinity x 0: no value, only that bracket), so the
            // capacity bound holds where V <= Q and is open otherwise.
            rate_ok_any = true;
            cap_ok_any = true;
            cap_ok_all = cap_ok_all && (tv > 0 || p.burst_bytes <= qv);
          } else {
            rate_ok_all = cap_ok_all = false;
            rate_ok_any = cap_ok_any = true;
          }
          continue;
        }
        const double e = evaluate(p, tv, rv, qv).total();
        lo = std::min(lo, e);
        hi = std::max(hi, e);
        if (!std::isfinite(tv)) {
          rate_ok_any = cap_ok_any = true;
          rate_ok_all = cap_ok_all = false;
          continue;
        }
        const xs::model::DesignTest d = xs::model::design_test(tv, p.burst_bytes, rv, qv, p.qloop_gap_s);
        rate_ok_all = rate_ok_all && d.rate_bound_ok;
        rate_ok_any = rate_ok_any || d.rate_bound_ok;
        cap_ok_all = cap_ok_all && d.capacity_bound_ok;
        cap_ok_any = cap_ok_any || d.capacity_bound_ok;
      }
  p.e_res = {lo, hi};
  p.design = rate_ok_all && cap_ok_all ? "piggyback" : (!rate_ok_any || !cap_ok_any ? "reshape" : "undecided");
  if (in.drain_rate.has_point() && in.tiss0.has_point() && in.capacity.has_point()) {
    const Parts x = evaluate(p, in.tiss0.point, in.drain_rate.point, in.capacity.point);
    p.e_res_point_s = x.total();
    p.e_issue_point_s = x.issue_s;
    p.e_drain_point_s = x.drain_s;
    p.e_cap_point_s = x.cap_s;
  }
  if (!std::isfinite(p.e_res.hi)) {
    p.why_not_decided = "the predicted E_res is unbounded";
    for (const Term* term : {&in.drain_rate, &in.tiss0, &in.capacity})
      if (!term->why.empty()) p.why_not_decided += "; " + term->why;
  } else if (p.e_res.hi - p.e_res.lo > std::max(p.e_res.lo, kMaterialFractionOfTfa * in.compute_only.t_fa_s)) {
    // Sharpness: an interval that does not pin E_res within a factor of two (or within the materiality floor
    // of 1% of T_FA where it predicts "hidden") decides nothing: it would agree with nearly any measurement.
    p.why_not_decided = fmt::format(
        "the predicted interval [{}, {}] does not pin E_res within a factor of two or within 1% of T_FA ({}): "
        "the calibration's brackets decide nothing here", us(p.e_res.lo), us(p.e_res.hi),
        us(kMaterialFractionOfTfa * in.compute_only.t_fa_s));
    for (const Term* term : {&in.drain_rate, &in.tiss0, &in.capacity})
      if (!term->why.empty()) p.why_not_decided += "; " + term->why;
  } else {
    p.decided = true;
  }
  return p;
}

json to_json(const FaFrozenInputs& in) {
  return {{"config", {{"M", in.config.seq_len}, {"heads", in.config.num_heads}, {"num_ctas", in.config.num_ctas},
                      {"head_dim", in.config.head_dim}, {"remote_bytes", in.config.remote_bytes}}},
          {"compute_only", {{"sigma_FA_s_per_kv_tile", number(in.compute_only.sigma_s_per_kv_tile)},
                            {"sigma_source", in.compute_only.sigma_source},
                            {"T_FA_s", number(in.compute_only.t_fa_s)},
                            {"T_FA_boundary", in.compute_only.t_fa_boundary}}},
          {"R_Bps", term_json(in.drain_rate)}, {"tiss0_s", term_json(in.tiss0)}, {"Q_bytes", term_json(in.capacity)},
          {"provenance", in.provenance}};
}

json to_json(const FaFrozenPrediction& p) {
  return {{"model", "aligned case: E_res = N_t T_iss^0 + max(N_t dt'(M), N_t [q_peak - Q]+ / R) (eqs. 6, 7, 18, 19)"},
          {"K", p.num_producers}, {"tile_bytes", p.tile_bytes}, {"V_bytes", p.burst_bytes}, {"N_t", p.num_bursts},
          {"G_qloop_s", p.qloop_gap_s}, {"cover_s", p.cover_s},
          {"E_res_s", interval_json(p.e_res)}, {"E_res_point_s", number(p.e_res_point_s)},
          {"E_issue_point_s", number(p.e_issue_point_s)}, {"E_drain_point_s", number(p.e_drain_point_s)},
          {"E_cap_point_s", number(p.e_cap_point_s)}, {"design_test", p.design}, {"decided", p.decided},
          {"why_not_decided", p.decided ? json() : json(p.why_not_decided)},
          {"interference", p.interference},
          {"interference_note", "the computation slowed by outstanding remote stores has no term in this model; "
                                "E_res omits it"},
          {"unhidden_s", interval_json(p.unhidden_range)}};
}

}  // namespace xs::attention::model
