// xstage attention judge layer: one point judged (see fa_judgement.hpp).
#include "xs/attention/judge/fa_judgement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "xs/kernels/attention/config.hpp"

namespace xs::attention::judge {
namespace {

using nlohmann::json;
using xs::kernels::attention::TileShape;
std::string us(double s) { return std::isfinite(s) ? fmt::format("{:.1f} us", s * 1e6) : std::string("inf"); }

}  // namespace

FaPointConfig point_config(const FaA2aPointSpec& spec, const FaA2aPointResult& r) {
  FaPointConfig c;
  c.seq_len = spec.seq_len;
  c.num_heads = spec.num_heads;
  c.num_ctas = r.num_ctas > 0 ? r.num_ctas : spec.num_ctas;  // the resolved CTA count (0 in the spec: one per SM)
  c.head_dim = spec.head_dim;
  c.remote_bytes = r.remote_bytes;
  return c;
}

FaJudgement judge_point(const FaA2aPointSpec& spec, const FaA2aPointResult& r, const FaCalibration& calibration) {
  FaJudgement j;
  j.inputs = frozen_inputs(point_config(spec, r), compute_only_of(r), calibration);
  j.prediction = predict_frozen(j.inputs);
  j.measured = measured_residual(r);
  set_decisiveness(j.measured, j.inputs.compute_only.t_fa_s);
  const FaFrozenPrediction& p = j.prediction;
  j.model = score(p.e_res, p.e_res_point_s, p.decided, p.why_not_decided, j.measured);
  j.zero = score({0, 0}, 0, true, "", j.measured);
  const bool unhidden_known = p.unhidden_range.bounded();
  j.unhidden = score(p.unhidden_range, p.unhidden_s, unhidden_known, "R not bounded by the calibration", j.measured);
  j.diagnostics = fa_diagnostics(r, j.inputs.config, p, j.measured);
  return j;
}

json fa_diagnostics(const FaA2aPointResult& r, const FaPointConfig& config, const FaFrozenPrediction& p,
                    const MeasuredResidual& m) {
  json d = {{"note", "measured in the judged launches, not predicted; none of it enters the prediction or the "
                     "outcome. Each entry says what the model missed."}};
  if (m.measured && std::isfinite(p.e_res.lo)) {
    const double below = m.median_s - p.e_res.hi, above = p.e_res.lo - m.median_s;
    d["residual_outside_prediction_s"] = below > 0 ? below : (above > 0 ? -above : 0.0);
    d["residual_outside_prediction_note"] =
        "measured median minus the nearest end of the predicted interval (positive: exposure the model did not predict)";
  }
  const double sigma_fa = r.sigma_rounds_fa_cycles.median > 0 ? r.sigma_rounds_fa_cycles.median : 0;
  const double sigma_fused = r.sigma_rounds_fused_cycles.median > 0 ? r.sigma_rounds_fused_cycles.median : 0;
  if (sigma_fa > 0 && sigma_fused > 0 && r.clock_fa_hz.median > 0) {
    const double per_tile_s = (sigma_fused - sigma_fa) / r.clock_fa_hz.median;
    const double n_kv = std::ceil(static_cast<double>(config.seq_len) / TileShape::kBlockN);
    d["qloop_under_load"] = {
        {"measured", true}, {"sigma_fused_over_sigma_FA", sigma_fused / sigma_fa},
        {"E_load_s", p.num_bursts * n_kv * per_tile_s},
        {"formula", "N_t ceil(M/b_n) (sigma_fused - sigma_FA), the Q-loops' growth under store load (cycles at the "
                    "FA-only clock)"},
        {"model_missed", "the computation slowed by outstanding remote stores: the Burst-Gap model has no term "
                         "for it (interference not calibrated)"}};
  }
  if (r.peak_concurrent_storers > 0)
    d["alignment"] = {{"measured", true}, {"store_phase_spread_median_s", r.store_phase_spread_median_s},
                      {"peak_concurrent_storers", r.peak_concurrent_storers},
                      {"mean_concurrent_storers", r.mean_concurrent_storers}, {"K", p.num_producers},
                      {"model_missed", fmt::format("the aligned case assumes all K = {} CTAs store at once; the "
                                                   "judged launches had at most {:.0f}", p.num_producers,
                                                   r.peak_concurrent_storers)}};
  if (has_values(r.critical_qloop_paired))
    d["critical_path"] = {
        {"measured", true}, {"qloop_growth_s", r.critical_qloop_paired.median},
        {"epilogue_growth_s", r.critical_epilogue_paired.median}, {"other_growth_s", r.critical_other_paired.median},
        {"model_missed", fmt::format("the model puts E_res in the stores' issue and stalls (predicted point {}); on "
                                     "the critical path the Q-loops grew {} and the epilogues {}",
                                     us(p.e_res_point_s), us(r.critical_qloop_paired.median),
                                     us(r.critical_epilogue_paired.median))}};
  if (has_values(r.e_res_sender_cycles_paired))
    d["clock_normalized_E_res"] = {{"measured", true}, {"median_s", r.e_res_sender_cycles_paired.median},
                                   {"p10_s", r.e_res_sender_cycles_paired.p10},
                                   {"p90_s", r.e_res_sender_cycles_paired.p90},
                                   {"model_missed", "SM clock changes between the fused and the FA-only launches; "
                                                    "the outcome is scored on wall time"}};
  return d;
}

json fa_rules_json() {
  json rules = json::array();
  for (const FaRule& r : kFaRules)
    rules.push_back({{"id", r.id}, {"written_utc", r.written_utc}, {"what", r.what}, {"current", &r == &kFaRule}});
  return rules;
}

void add_judgement_json(const FaJudgement& j, json& point) {
  json prediction = to_json(j.prediction);
  prediction["inputs"] = to_json(j.inputs);
  point["prediction"] = prediction;
  point["judgement"] = {
      {"rule", {{"id", kFaRuleId}, {"written_utc", kFaRuleWrittenUtc}, {"what", kFaRule.what}}},
      {"measured", to_json(j.measured)},
      {"model", to_json(j.model)},
      {"trivial", {{"zero", to_json(j.zero)}, {"unhidden", to_json(j.unhidden)}}},
      {"scored_on", "wall time at the judged boundary"}};
  point["diagnostics"] = j.diagnostics;
  std::string line = fmt::format("E_res predicted {} .. {} before the run ({}); ", us(j.prediction.e_res.lo),
                                 us(j.prediction.e_res.hi), j.prediction.decided ? "decided" : "not decided");
  line += j.model.result.empty() ? j.model.reason : j.model.result + ": " + j.model.reason;
  line += fmt::format(". Trivial predictors: zero {}, unhidden {}", j.zero.result.empty() ? "-" : j.zero.result,
                      j.unhidden.result.empty() ? "-" : j.unhidden.result);
  point["agreement"] = line;
}

}  // namespace xs::attention::judge
