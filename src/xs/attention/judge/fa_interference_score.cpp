// xstage attention judge layer: E_res(M) with the interference term, scored (see fa_interference_score.hpp).
#include "xs/attention/judge/fa_interference_score.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "xs/attention/model/fa_frozen_prediction.hpp"
#include "xs/attention/model/fa_interference_prediction.hpp"
#include "xs/attention/judge/fa_judgement.hpp"
#include "xs/attention/judge/fa_score.hpp"

namespace xs::attention::judge {
namespace {

using nlohmann::json;
json number(double x) { return std::isfinite(x) ? json(x) : json(); }

// The v2 sharpness rule, applied to this model's interval too: an interval that does not pin E_res within a
// factor of two (or within 1% of T_FA) decides nothing.
bool sharp(const Interval& i, double t_fa_s) {
  return i.bounded() && i.hi - i.lo <= std::max(i.lo, kMaterialFractionOfTfa * t_fa_s);
}

xs::model::SlowdownSource knee_term(double a, double b) {
  xs::model::SlowdownSource s;
  s.status = xs::model::InterferenceStatus::kIdentified;
  s.label = fmt::format("application-data reference s = 1 + {} [offered/R - {}]+", a, b);
  s.slowdown = [a, b](const xs::model::LoadState& l) {
    const double x = 1.0 + a * std::max(0.0, l.offered_rate_bps / l.drain_rate_bps - b);
    return xs::model::SlowdownBracket{x, x, x};
  };
  return s;
}

struct Row {
  const FaScoredPoint* point = nullptr;
  FaFrozenInputs inputs;
  FaInterferencePrediction pred;
  FaFrozenPrediction frozen_v2;
  MeasuredResidual sender, completion;
  double reference_completion_s = NAN;
};

// A term used outside its calibration gives no interval to judge (as moe-whole): not decided, never disagrees.
const Interval kNoInterval{NAN, NAN};

// Why a prediction is not decided: not computed, the term extrapolated, or an interval that is not sharp.
std::string not_decided_why(const FaInterferencePrediction& p, const Interval& i, const char* what, const char* cause) {
  if (!p.computed) return p.why_not;
  if (!p.term_outside_calibration.empty()) return p.term_outside_calibration;
  return fmt::format("the {} [{:.1f}, {:.1f}] us is not sharp{}{}", what, i.lo * 1e6, i.hi * 1e6, *cause ? " " : "", cause);
}

json bar_at(const char* boundary, double point_s, const Interval& interval, const MeasuredResidual& m, double t_fa_s,
            int seq_len) {
  json j = {{"boundary", boundary}, {"M", seq_len}};
  if (!m.measured) {
    j["result"] = "not measured";
    return j;
  }
  const double tol = std::max(kFaBarRelative * std::fabs(m.median_s), kFaBarFractionOfTfa * t_fa_s);
  j["measured_s"] = m.median_s;
  j["tolerance_s"] = tol;
  if (!std::isfinite(point_s)) {
    j["result"] = "missed";
    j["why"] = "no point prediction (a parameter has no point)";
    if (interval.bounded()) {  // labelled extra: how far the interval's nearest end is from the tolerance band
      const double gap = std::max({0.0, interval.lo - (m.median_s + tol), (m.median_s - tol) - interval.hi});
      j["interval_s"] = {interval.lo, interval.hi};
      j["interval_outside_tolerance_by_s"] = gap;
    }
    return j;
  }
  const double err = point_s - m.median_s;
  j["predicted_s"] = point_s;
  j["error_s"] = err;
  j["result"] = std::fabs(err) <= tol ? "met" : "missed";
  if (std::fabs(err) > tol) j["by_s"] = std::fabs(err) - tol;
  return j;
}

// Does the predicted sequence move the same way as the measured one between consecutive M? (ties: |diff| below
// the measured medians' ci95 half-widths count as "flat" and match anything)
json trend(const std::vector<std::pair<int, std::pair<double, MeasuredResidual>>>& seq) {
  int agree = 0, disagree = 0;
  json steps = json::array();
  for (std::size_t i = 1; i < seq.size(); ++i) {
    const auto& [m0, a] = seq[i - 1];
    const auto& [m1, b] = seq[i];
    if (!std::isfinite(a.first) || !std::isfinite(b.first) || !a.second.measured || !b.second.measured) continue;
    const double dm = b.second.median_s - a.second.median_s;
    const double noise = 0.5 * ((a.second.median_ci95.hi - a.second.median_ci95.lo) +
                                (b.second.median_ci95.hi - b.second.median_ci95.lo));
    const int meas = std::fabs(dm) <= noise ? 0 : (dm > 0 ? 1 : -1);
    const double dp = b.first - a.first;
    const int pred = dp > 0 ? 1 : (dp < 0 ? -1 : 0);
    const bool ok = meas == 0 || meas == pred;
    ok ? ++agree : ++disagree;
    steps.push_back({{"from_M", m0}, {"to_M", m1}, {"measured", meas > 0 ? "up" : meas < 0 ? "down" : "flat"},
                     {"predicted", pred > 0 ? "up" : pred < 0 ? "down" : "flat"}, {"agrees", ok}});
  }
  return {{"steps", steps}, {"agree", agree}, {"disagree", disagree}, {"right", disagree == 0 && agree > 0}};
}

// One row per point, predicted with and without the interference term and measured at both boundaries, in
// increasing M.
std::vector<Row> predicted_rows(const std::vector<FaScoredPoint>& points, const FaCalibration& cal,
                                const xs::model::SlowdownSource& term) {
  std::vector<Row> rows;
  for (const FaScoredPoint& p : points) {
    Row r;
    r.point = &p;
    r.inputs = frozen_inputs(point_config(p.spec, p.result), compute_only_of(p.result), cal);
    r.pred = predict_with_interference(r.inputs, term);
    r.frozen_v2 = predict_frozen(r.inputs);
    r.sender = measured_residual(p.result);
    r.completion = measured_residual(p.result.e_res_paired.samples, "remote_visible_completion");
    set_decisiveness(r.sender, r.inputs.compute_only.t_fa_s);
    set_decisiveness(r.completion, r.inputs.compute_only.t_fa_s);
    rows.push_back(std::move(r));
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.inputs.config.seq_len < b.inputs.config.seq_len; });
  return rows;
}

// Reference: a knee term fitted on the other M's completion residuals (leave one M out), by grid search on
// the median |relative error|. Sets each measured row's reference_completion_s; returns the fits.
json fit_reference_terms(std::vector<Row>& rows, const FaCalibration& cal) {
  json ref_fits = json::array();
  std::vector<std::pair<double, double>> grid = {{0.0, 0.0}};
  for (double a : {0.1, 0.25, 0.5, 1.0, 2.0, 4.0})
    for (double b : {0.0, 0.25, 0.5, 0.75, 1.0}) grid.emplace_back(a, b);
  const double rv = cal.platform.drain_rate_bps();
  std::vector<std::vector<double>> pred(rows.size(), std::vector<double>(grid.size(), NAN));
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t g = 0; g < grid.size(); ++g)
      if (rows[i].inputs.compute_only.t_fa_s > 0 && rows[i].inputs.compute_only.sigma_s_per_kv_tile > 0)
        pred[i][g] = replay_fa_waves(rows[i].inputs, knee_term(grid[g].first, grid[g].second), rv, INFINITY, 1)
                         .completion_s(rv);
  for (std::size_t out = 0; out < rows.size(); ++out) {
    if (!rows[out].completion.measured) continue;
    double best = INFINITY;
    std::size_t best_g = 0;
    for (std::size_t g = 0; g < grid.size(); ++g) {
      std::vector<double> errs;
      for (std::size_t i = 0; i < rows.size(); ++i)
        if (i != out && rows[i].completion.measured && std::isfinite(pred[i][g]))
          errs.push_back(std::fabs(pred[i][g] / rows[i].completion.median_s - 1));
      if (errs.empty()) continue;
      std::nth_element(errs.begin(), errs.begin() + errs.size() / 2, errs.end());
      const double m = errs[errs.size() / 2];
      if (m < best) {
        best = m;
        best_g = g;
      }
    }
    if (std::isfinite(best)) {
      rows[out].reference_completion_s = pred[out][best_g];
      ref_fits.push_back({{"left_out_M", rows[out].inputs.config.seq_len}, {"a", grid[best_g].first},
                          {"b", grid[best_g].second}, {"train_abs_rel_error_median", best}});
    }
  }
  return ref_fits;
}

// The scoring of all rows so far: the tallies per predictor and boundary, the JSON rows, issue 28's bars (model
// and trivial predictors) with the (M, point, measured) sequences for the trend, and the point |relative errors|.
struct Scoring {
  Tally t_sender, t_completion, t_zero_s, t_zero_c, t_unhidden_s, t_unhidden_c, t_v2;
  json out_rows = json::array(), bars = json::array(), bars_zero = json::array(), bars_unhidden = json::array();
  std::vector<std::pair<int, std::pair<double, MeasuredResidual>>> seq_completion, seq_sender;
  std::vector<double> rel_completion, rel_sender, rel_zero, rel_unhidden, rel_v2, rel_ref;
};

// Each predictor's point |relative error| against the measured median, where both are finite.
void add_relative_errors(const Row& r, Scoring& s) {
  const FaInterferencePrediction& p = r.pred;
  const auto rel = [](double pred, const MeasuredResidual& meas) {
    return meas.measured && std::isfinite(pred) && meas.median_s != 0 ? std::fabs(pred / meas.median_s - 1) : NAN;
  };
  const auto push = [](std::vector<double>& v, double x) {
    if (std::isfinite(x)) v.push_back(x);
  };
  push(s.rel_completion, rel(p.completion_point_s, r.completion));
  push(s.rel_sender, rel(p.sender_point_s, r.sender));
  push(s.rel_zero, rel(0.0, r.completion));
  push(s.rel_unhidden, rel(r.frozen_v2.unhidden_s, r.completion));
  push(s.rel_v2, rel(r.frozen_v2.e_res_point_s, r.sender));
  push(s.rel_ref, rel(r.reference_completion_s, r.completion));
}

// Issue 28's bar at both boundaries for a row whose M is in the bar's range, for the model and the trivial
// predictors, and the row's place in the trend sequences.
void add_bars(const Row& r, Scoring& s) {
  const double t_fa = r.inputs.compute_only.t_fa_s;
  const FaInterferencePrediction& p = r.pred;
  const int m = r.inputs.config.seq_len;
  if (m < kFaBarMinM || m > kFaBarMaxM) return;
  s.bars.push_back(bar_at("remote_visible_completion", p.completion_point_s, p.completion, r.completion, t_fa, m));
  s.bars.push_back(bar_at("sender_side", p.sender_point_s, p.sender, r.sender, t_fa, m));
  // The same bar for the trivial predictors (a bar the constant also meets says little about the model).
  s.bars_zero.push_back(bar_at("remote_visible_completion", 0.0, {0, 0}, r.completion, t_fa, m));
  s.bars_zero.push_back(bar_at("sender_side", 0.0, {0, 0}, r.sender, t_fa, m));
  s.bars_unhidden.push_back(bar_at("remote_visible_completion", r.frozen_v2.unhidden_s, r.frozen_v2.unhidden_range,
                                   r.completion, t_fa, m));
  s.bars_unhidden.push_back(bar_at("sender_side", r.frozen_v2.unhidden_s, r.frozen_v2.unhidden_range, r.sender,
                                   t_fa, m));
  s.seq_completion.push_back({m, {p.completion_point_s, r.completion}});
  s.seq_sender.push_back({m, {p.sender_point_s, r.sender}});
}

// Scores one row: the model (sender side and completion), the trivial predictors and the interference-free rule,
// each tallied; then its relative errors, its bars and its JSON row.
void score_row(const Row& r, Scoring& s) {
  const double t_fa = r.inputs.compute_only.t_fa_s;
  const FaInterferencePrediction& p = r.pred;
  const bool inside = p.term_outside_calibration.empty();
  const bool ds = p.computed && inside && sharp(p.sender, t_fa), dc = p.computed && inside && sharp(p.completion, t_fa);
  const std::string why_s = not_decided_why(p, p.sender, "sender-side interval", "(Q's bracket or R's and the term's ranges)");
  const std::string why_c = not_decided_why(p, p.completion, "completion interval", "");
  const Outcome os = score(inside ? p.sender : kNoInterval, p.sender_point_s, ds, why_s, r.sender);
  const Outcome oc = score(inside ? p.completion : kNoInterval, p.completion_point_s, dc, why_c, r.completion);
  const Outcome zs = score({0, 0}, 0, true, "", r.sender), zc = score({0, 0}, 0, true, "", r.completion);
  const bool unhidden_known = r.frozen_v2.unhidden_range.bounded();
  const Outcome us_ = score(r.frozen_v2.unhidden_range, r.frozen_v2.unhidden_s, unhidden_known, "R not bounded", r.sender);
  const Outcome uc = score(r.frozen_v2.unhidden_range, r.frozen_v2.unhidden_s, unhidden_known, "R not bounded", r.completion);
  const Outcome v2 = score(r.frozen_v2.e_res, r.frozen_v2.e_res_point_s, r.frozen_v2.decided, r.frozen_v2.why_not_decided, r.sender);
  s.t_sender.add(os);
  s.t_completion.add(oc);
  s.t_zero_s.add(zs);
  s.t_zero_c.add(zc);
  s.t_unhidden_s.add(us_);
  s.t_unhidden_c.add(uc);
  s.t_v2.add(v2);
  const int m = r.inputs.config.seq_len;
  add_relative_errors(r, s);
  add_bars(r, s);
  s.out_rows.push_back({{"file", r.point->file}, {"point", r.point->index}, {"M", m},
                        {"inputs", to_json(r.inputs)},
                        {"prediction", to_json(p)},
                        {"measured", {{"sender_side", to_json(r.sender)}, {"completion", to_json(r.completion)}}},
                        {"model", {{"sender_side", to_json(os)}, {"completion", to_json(oc)}}},
                        {"zero", {{"sender_side", zs.result}, {"completion", zc.result}}},
                        {"unhidden", {{"sender_side", us_.result}, {"completion", uc.result}}},
                        {"frozen_aligned_v2_without_interference", {{"sender_side", v2.result},
                                                                    {"point_s", number(r.frozen_v2.e_res_point_s)}}},
                        {"reference_completion_point_s", number(r.reference_completion_s)}});
}

// The median of `v` (null when empty).
json median_or_null(std::vector<double> v) {
  if (v.empty()) return json();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return json(n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

// (met, missed) over the bars of `per_m`; a bar not measured counts as neither.
std::pair<int, int> count_bars(const json& per_m) {
  int met = 0, missed = 0;
  for (const json& b : per_m) (b.value("result", "") == "met" ? met : missed) += b.value("result", "") != "not measured";
  return std::pair<int, int>{met, missed};
}

// The summary document (schema xstage.fa_interference_score) of the scored rows.
json summary_json(const Scoring& s, const FaCalibration& cal, const xs::model::SlowdownSource& term,
                  const json& ref_fits) {
  const auto [met, missed] = count_bars(s.bars);
  const auto [met_zero, missed_zero] = count_bars(s.bars_zero);
  const auto [met_unhidden, missed_unhidden] = count_bars(s.bars_unhidden);
  return {{"schema", {{"name", "xstage.fa_interference_score"}, {"version", "1.0"}}},
          {"interference_term", {{"label", term.label}, {"status", term.usable() ? "identified" : term.reason_not_usable()}}},
          {"calibration", {{"file", cal.path}, {"fnv1a64", cal.fnv1a64}, {"target", cal.target}, {"git_sha", cal.git_sha},
                           {"date_utc", cal.date_utc}}},
          {"definitions",
           {{"prediction", "wave replay of the fused kernel from T_FA and sigma_FA of the FA-only variant, R and Q of "
                           "the calibration and the interference term: nothing of the judged fused launches"},
            {"outcome", "fa_score: agrees where the predicted interval meets the bootstrap ci95 of the measured median "
                        "(paired rounds, wall time); not decided only where the model's interval is unbounded or not "
                        "sharp (rule v2's sharpness); no other outcome (rule v6): a measured ci95 whose half-width exceeds "
                        "max(20% of the median, 1% of T_FA) is a wide measurement, said with the row and its "
                        "agreements counted apart, for every predictor alike"},
            {"bar", "issue 28: |point - measured median| <= max(20% of measured, 1% of T_FA) at every M in [8192, "
                    "65536]; trend: consecutive M move the same way (measured steps within their ci95 are flat)"},
            {"reference", "knee term s = 1 + a [offered/R - b]+ fitted on the other M's completion residuals "
                          "(leave-one-M-out); application data, reference only"}}},
          {"tally", {{"model_sender_side", s.t_sender.to_json()}, {"model_completion", s.t_completion.to_json()},
                     {"zero_sender_side", s.t_zero_s.to_json()}, {"zero_completion", s.t_zero_c.to_json()},
                     {"unhidden_sender_side", s.t_unhidden_s.to_json()}, {"unhidden_completion", s.t_unhidden_c.to_json()},
                     {"frozen_aligned_v2_sender_side", s.t_v2.to_json()}}},
          {"point_abs_relative_error_median",
           {{"model_completion", median_or_null(s.rel_completion)}, {"model_sender_side", median_or_null(s.rel_sender)},
            {"zero_completion", median_or_null(s.rel_zero)}, {"unhidden_completion", median_or_null(s.rel_unhidden)},
            {"frozen_aligned_v2_sender_side", median_or_null(s.rel_v2)},
            {"reference_completion", median_or_null(s.rel_ref)}}},
          {"bars", {{"per_M", s.bars}, {"met", met}, {"missed", missed},
                    {"trend_completion", trend(s.seq_completion)}, {"trend_sender_side", trend(s.seq_sender)}}},
          {"bars_trivial",
           {{"note", "the same bar applied to the trivial predictors: a bar they meet as well is no evidence for the model"},
            {"zero", {{"per_M", s.bars_zero}, {"met", met_zero}, {"missed", missed_zero}}},
            {"unhidden", {{"per_M", s.bars_unhidden}, {"met", met_unhidden}, {"missed", missed_unhidden}}}}},
          {"reference_fits", ref_fits},
          {"rows", s.out_rows}};
}

}  // namespace

json score_fa_with_interference(const std::vector<FaScoredPoint>& points, const FaCalibration& cal,
                                const xs::model::SlowdownSource& term, bool reference_fit) {
  std::vector<Row> rows = predicted_rows(points, cal, term);
  json ref_fits = json::array();
  if (reference_fit && cal.platform.drain_rate_bps() > 0) ref_fits = fit_reference_terms(rows, cal);
  Scoring s;
  for (const Row& r : rows) score_row(r, s);
  return summary_json(s, cal, term, ref_fits);
}

}  // namespace xs::attention::judge
