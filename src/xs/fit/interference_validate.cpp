// xstage fit layer: the interference term's validation and its file block (see interference.hpp). Held-out:
// each sweep block (K, B, working set, mainloop, store pattern) is predicted by a term refitted without it.
// In-sample: the full fit's own residuals, labelled as such. Both sit beside two constant predictors: "no term"
// (s = 1, what the Burst-Gap model assumes) and the median slowdown of the points the fit saw.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"
#include "xs/fit/interference.hpp"
#include "xs/fit/interference_epilogue.hpp"

namespace xs::fit {
namespace {

nlohmann::json num(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

struct Row {
  std::size_t point_idx = 0;
  std::string block, regime, unpredicted, outside;
  int num_sms = 0;
  std::uint64_t burst_bytes = 0;
  double gap_s = 0, measured = 0, lo = 0, mid = 0, hi = 0, constant = 0;
  bool predicted() const { return unpredicted.empty(); }
  double rel_err() const { return (mid - measured) / measured; }
  double no_term_rel_err() const { return (1.0 - measured) / measured; }
  double constant_rel_err() const { return (constant - measured) / measured; }
  bool inside() const { return lo <= measured && measured <= hi; }
};

// Predicts `obs` (of the full fit's point list) with `term`; `constant` is the training points' median.
Row predict_row(const LoadedObs& o, LoadRegime regime, const model::InterferenceTerm& term, double constant) {
  Row r;
  r.point_idx = o.point_idx;
  r.block = o.block;
  r.regime = load_regime_name(regime);
  r.num_sms = o.num_sms;
  r.burst_bytes = o.burst_bytes;
  r.gap_s = o.gap_s;
  r.measured = o.slowdown;
  r.constant = constant;
  if (term.status != model::InterferenceStatus::kIdentified) {
    r.unpredicted = std::string(model::interference_status_name(term.status)) + ": " + term.why;
    return r;
  }
  const model::LoadState load = load_state_of(o, term);
  const model::SlowdownBracket s = term.slowdown(load);
  r.lo = s.lo;
  r.mid = s.mid;
  r.hi = s.hi;
  r.outside = term.outside_calibration(load);
  return r;
}

nlohmann::json summary(const std::vector<Row>& rows, const std::string& regime, bool in_scope_only) {
  std::vector<double> model_err, none_err, const_err;
  int n = 0, inside = 0, unpredicted = 0;
  for (const auto& r : rows) {
    if (!regime.empty() && r.regime != regime) continue;
    if (in_scope_only && !r.outside.empty()) continue;
    ++n;
    if (!r.predicted()) { ++unpredicted; continue; }
    model_err.push_back(std::abs(r.rel_err()));
    none_err.push_back(std::abs(r.no_term_rel_err()));
    const_err.push_back(std::abs(r.constant_rel_err()));
    inside += r.inside();
  }
  auto q = [](const std::vector<double>& v, double p) { return v.empty() ? nlohmann::json(nullptr) : num(quantile(v, p)); };
  return {{"num_points", n}, {"num_predicted", static_cast<int>(model_err.size())}, {"num_unpredicted", unpredicted},
          {"median_abs_rel_err", q(model_err, 0.5)}, {"p90_abs_rel_err", q(model_err, 0.9)},
          {"bracket_coverage", model_err.empty() ? nlohmann::json(nullptr) : num(double(inside) / model_err.size())},
          {"no_term_median_abs_rel_err", q(none_err, 0.5)}, {"no_term_p90_abs_rel_err", q(none_err, 0.9)},
          {"constant_median_abs_rel_err", q(const_err, 0.5)}, {"constant_p90_abs_rel_err", q(const_err, 0.9)}};
}

nlohmann::json rows_json(const std::vector<Row>& rows) {
  nlohmann::json out = {{"columns", {"point", "block", "K", "B_bytes", "G_s", "regime", "measured", "lo", "mid", "hi",
                                     "inside", "rel_err", "no_term_rel_err", "constant_rel_err", "outside_calibration",
                                     "unpredicted"}},
                        {"rows", nlohmann::json::array()}};
  for (const auto& r : rows) {
    const bool p = r.predicted();
    out["rows"].push_back({r.point_idx, r.block, r.num_sms, r.burst_bytes, r.gap_s, r.regime, r.measured,
                           p ? num(r.lo) : nullptr, p ? num(r.mid) : nullptr, p ? num(r.hi) : nullptr,
                           p ? nlohmann::json(r.inside()) : nullptr, p ? num(r.rel_err()) : nullptr,
                           num(r.no_term_rel_err()), num(r.constant_rel_err()), r.outside, r.unpredicted});
  }
  return out;
}

nlohmann::json validation_json(const std::vector<Row>& rows) {
  nlohmann::json by_regime;
  for (const char* g : {"free", "knee", "full"}) by_regime[g] = summary(rows, g, false);
  nlohmann::json in_scope_by_regime;
  for (const char* g : {"free", "knee", "full"}) in_scope_by_regime[g] = summary(rows, g, true);
  // in_scope: rows whose load lies inside what the predicting term was calibrated on (outside_calibration empty).
  nlohmann::json j = {{"all", summary(rows, "", false)},
                      {"in_scope", summary(rows, "", true)},
                      {"by_regime", by_regime},
                      {"in_scope_by_regime", in_scope_by_regime}};
  j.update(rows_json(rows));
  return j;
}

double median_slowdown(const std::vector<LoadedObs>& obs, const std::set<std::size_t>& leave_out) {
  std::vector<double> s;
  for (const auto& o : obs)
    if (!leave_out.count(o.point_idx)) s.push_back(o.slowdown);
  return s.empty() ? 1.0 : median(s);
}

}  // namespace

nlohmann::json interference_block(const std::vector<PointRecord>& points, const InterferenceFitOptions& options) {
  const InterferenceFit strict = fit_interference(points, options);
  nlohmann::json block = model::to_json(strict.term);
  // Censored full-path points (burst cap) leave the term not identified; the fit and its validation below
  // then read them as measured, to show how the lower bound behaves (labelled in "validation.note").
  bool censored = false;
  for (int i : strict.full_used) censored |= strict.obs[i].censored();
  InterferenceFitOptions diag = options;
  diag.censored_as_measured = options.censored_as_measured || censored;
  const InterferenceFit full = censored ? fit_interference(points, diag) : strict;
  block["target"] = full.target;
  block["equation"] = "s = s_free + u W(K) (n_kb / n_kb_cal) / T0, W(K) = W_ref (K / K_ref)^gamma; u = 0 for "
                      "rho <= (1 - knee_band) R, 1 for rho >= (1 + knee_band) R or q >= Q, [0, 1] between "
                      "(docs/interference-model.md, eq. I1)";
  nlohmann::json pts = nlohmann::json::array();
  auto used = [](const std::vector<int>& v, int i) { return std::find(v.begin(), v.end(), i) != v.end(); };
  for (int i = 0; i < static_cast<int>(full.obs.size()); ++i) {
    const LoadedObs& o = full.obs[i];
    pts.push_back({{"point", o.point_idx}, {"block", o.block}, {"K", o.num_sms}, {"B_bytes", o.burst_bytes},
                   {"offered_Bps", num(o.offered_bps)}, {"load_Bps", num(o.load_bps)}, {"issue_rate_Bps", o.issue_rate_bps},
                   {"slowdown", o.slowdown}, {"baseline_tile_time_s", o.baseline_s},
                   {"regime", i < static_cast<int>(full.regime.size()) ? load_regime_name(full.regime[i]) : "?"},
                   {"in_free_fit", used(full.free_used, i)}, {"in_wait_fit", used(full.full_used, i)},
                   {"in_rate_fit", used(full.rate_used, i)}, {"reps_at_burst_cap", o.reps_at_cap}});
  }
  block["fit"] = {
      {"criteria",
       {{"knee_band", options.knee_band}, {"presence_sigmas", options.presence_sigmas},
        {"max_misfit_log_sd", options.max_misfit_log_sd}, {"max_free_trend", options.max_free_trend},
        {"regimes", "x = offered/R, or issue rate/R where the point issued below (1 - knee_band) R (R: median issue "
                    "rate of the G = 0 points within knee_band of the fastest); free x <= 1 - knee_band, full x >= "
                    "1 + knee_band (G = 0 included), knee between"},
        {"wait_fit", "full points at the burst volume with the most full points; W_i = (s_i - s_free) T0_i; least "
                     "squares of ln W_i on ln(K_i / K_ref)"}}},
      {"bootstrap",
       {{"resamples", options.bootstrap_resamples}, {"seed", options.seed},
        {"scheme", "points redrawn within each group (rate, free, full) and repetitions within each point; "
                   "expanded percentile 95% (fit/bootstrap.hpp)"}}},
      {"points", pts},
      {"notes", strict.notes}};
  if (full.target == "local" || full.obs.empty()) return block;

  // Held-out: leave one block out.
  std::vector<std::string> blocks;
  for (const auto& o : full.obs)
    if (std::find(blocks.begin(), blocks.end(), o.block) == blocks.end()) blocks.push_back(o.block);
  std::vector<Row> held, in_sample;
  nlohmann::json folds = nlohmann::json::array();
  InterferenceFitOptions fold_options = diag;
  fold_options.target = full.target;
  for (const auto& b : blocks) {
    std::set<std::size_t> out;
    std::vector<PointRecord> training;
    for (const auto& o : full.obs)
      if (o.block == b) out.insert(o.point_idx);
    for (std::size_t i = 0; i < points.size(); ++i)
      if (!out.count(i)) training.push_back(points[i]);
    // A fold whose training points cannot be fitted at all (e.g. the only block held out) predicts nothing.
    InterferenceFit f;
    try {
      f = fit_interference(training, fold_options);
    } catch (const Error& e) {
      f.term.status = model::InterferenceStatus::kNotIdentified;
      f.term.why = std::string("the other blocks cannot be fitted: ") + e.what();
    }
    folds.push_back({{"block", b}, {"num_held_out", out.size()}, {"status", model::interference_status_id(f.term.status)},
                     {"why", f.term.why}});
    const double constant = median_slowdown(full.obs, out);
    for (int i = 0; i < static_cast<int>(full.obs.size()); ++i)
      if (full.obs[i].block == b) held.push_back(predict_row(full.obs[i], full.regime[i], f.term, constant));
  }
  const double constant_all = median_slowdown(full.obs, {});
  for (int i = 0; i < static_cast<int>(full.obs.size()); ++i)
    in_sample.push_back(predict_row(full.obs[i], full.regime[i], full.term, constant_all));
  nlohmann::json ho = validation_json(held);
  ho["rule"] = "leave one sweep block out (K, B, working set, mainloop, store pattern): each block predicted by the "
               "term refitted on the other blocks; regimes from the full fit; T0 = the point's own launch without stores; rate = "
               "load_Bps (offered, or the issue rate where the SMs could not issue the offered rate)";
  ho["folds"] = folds;
  nlohmann::json is = validation_json(in_sample);
  is["note"] = "in-sample residuals of the full fit (not a validation)";
  block["validation"] = {{"held_out", ho}, {"in_sample", is}};
  if (censored && !options.censored_as_measured)
    block["validation"]["note"] = "the term is not identified: its full-path points reached the burst cap. Both "
                                  "validations below read those points as measured (censored_as_measured), so they "
                                  "score the lower-bound fit, not a usable term";
  return block;
}

void attach_interference(report::ResultFile& file, const InterferenceFitOptions& options) {
  if (has_epilogue_points(file.points)) {
    // The closed-loop (epilogue) points give eq. I2, the term the applications' replays use; the paced points'
    // eq. I1, if any, goes beside it under interference_paced.
    std::string target = options.target;
    if (target.empty())
      for (const auto& p : file.points)
        if (p.spec.suite == Suite::kLoaded && p.spec.loaded.injection == Injection::kEpilogue && p.spec.target != "local")
          target = p.spec.target;
    if (target.empty()) {
      EpilogueFit none;
      none.term.form = model::kEpiloguePerByteForm;
      none.term.status = model::InterferenceStatus::kNotIdentified;
      none.term.why = "only the local control (stores to HBM) was measured: there is no remote path to fit";
      file.extra["interference"] = epilogue_block(none, "local");
    } else {
      EpilogueFitOptions eo;
      eo.bootstrap_resamples = std::min(options.bootstrap_resamples, 300);
      file.extra["interference"] = epilogue_block(fit_epilogue(epilogue_obs_of(file.points, target), eo), target);
    }
    if (has_loaded_points(file.points)) file.extra["interference_paced"] = interference_block(file.points, options);
    return;
  }
  if (!has_loaded_points(file.points)) return;
  InterferenceFitOptions o = options;
  if (o.target.empty() && file.config.is_object() && file.config.contains("target") &&
      file.config.at("target").is_string() && file.config.at("target").get<std::string>() != "local") {
    // The sweep's target names the remote path when the file also holds other targets' points.
    const std::string target = file.config.at("target").get<std::string>();
    bool has = false;
    for (const auto& p : file.points) has |= p.spec.suite == Suite::kLoaded && p.spec.target == target;
    if (has) o.target = target;
  }
  file.extra["interference"] = interference_block(file.points, o);
}

}  // namespace xs::fit
