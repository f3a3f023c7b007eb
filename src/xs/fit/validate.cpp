// xstage fit layer: a model's predictions of measured points and their error summaries per regime (see
// validation.hpp), shared by the held-out (cross_validate.cpp) and fixed-parameter validations.
//   periodic:      T_iss = max(T_iss^0, V/R - G) (eq. 3), T_period = max(T_iss^0 + G, V/R) (eq. 2)
//   isolated:      T_iss^iso = max(T_iss^0, (V - Q)/R) (eq. 7)
//   local control: the HBM path has no X-Stage backpressure: T_iss = T_iss^0, T_period = T_iss^0 + G
// T_iss^0(K,V) and Q(K) come from the model's tables with its interpolation.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"
#include "xs/fit/fit.hpp"
#include "xs/fit/stages.hpp"
#include "xs/fit/validation_detail.hpp"
#include "xs/model/burst_gap.hpp"

namespace xs::fit {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double rel_err(double predicted, double measured) { return std::abs(predicted - measured) / measured; }
bool positive_finite(double x) { return std::isfinite(x) && x > 0; }
bool usable_bound(const std::string& bound) { return bound == "fit" || bound == "lower"; }

}  // namespace

const char* regime_name(Regime regime) {
  switch (regime) {
    case Regime::kDrainLimited: return "drain_limited";
    case Regime::kTransition: return "transition";
    case Regime::kPlateau: return "plateau";
    case Regime::kIsolated: return "isolated";
    case Regime::kUnclassified: break;
  }
  return "unclassified";
}

FittedModel fitted_model(const CalibrationFit& fit) {
  FittedModel m;
  m.platform = fit.to_platform_model();
  if (!usable_bound(fit.drain.bound))
    m.drain_unidentified = fmt::format("R {}{}{}", fit.drain.bound, fit.drain.drain_rate_bps.note.empty() ? "" : ": ",
                                       fit.drain.drain_rate_bps.note);
  for (const CapacityFit& q : fit.capacity)
    if (!usable_bound(q.bound))
      m.capacity_unidentified.emplace_back(q.num_producers, fmt::format("Q(K={}) {}", q.num_producers, q.bound));
  return m;
}

bool validated_point(const PointRecord& p, const std::string& target) {
  if (p.spec.suite == Suite::kLocalControl) return false;  // a control, not a prediction of the remote path
  if (p.spec.suite == Suite::kLoaded) return false;        // the Burst-Gap model predicts no mainloop
  if (p.skipped || p.verification.wrong > 0) return false;
  if (!target.empty() && p.spec.target != target) return false;
  if (!positive_finite(modelled_issue_time(p).median)) return false;
  return p.spec.suite == Suite::kIsolated || positive_finite(p.period_s.median);
}

namespace detail {

Regime classify(const PointSpec& spec, const FittedModel& full, const RegimeBoundaries& boundaries) {
  if (spec.suite == Suite::kIsolated) return Regime::kIsolated;
  if (!full.drain_unidentified.empty()) return Regime::kUnclassified;
  const double v = static_cast<double>(spec.volume_bytes());
  const double horizon_s = v / full.platform.drain_rate_bps();
  const double t0 = full.platform.tiss0_s(spec.num_producers, v).value;
  if (spec.gap_s < horizon_s - t0) return Regime::kDrainLimited;
  if (spec.gap_s >= boundaries.plateau_gap_factor * horizon_s) return Regime::kPlateau;
  return Regime::kTransition;
}

ValidationRow unpredicted_row(const PointRecord& p, std::size_t index, Regime regime, const std::string& reason) {
  ValidationRow row;
  row.point_index = index;
  row.suite = p.spec.suite;
  row.regime = regime;
  row.num_producers = p.spec.num_producers;
  row.bytes_per_producer = p.spec.bytes_per_producer;
  row.gap_s = p.spec.gap_s;
  const bool periodic = p.spec.suite != Suite::kIsolated;
  row.measured_issue_s = modelled_issue_time(p).median;
  row.measured_period_s = periodic ? p.period_s.median : kNaN;
  row.predicted_issue_s = row.issue_rel_err = row.predicted_period_s = row.period_rel_err = kNaN;
  row.unpredicted_reason = reason;
  return row;
}

ValidationRow predict_row(const PointRecord& p, std::size_t index, const FittedModel& model, Regime regime) {
  // Every prediction needs R: eq. 3 picks its branch by V/R, eq. 7 drains at R.
  ValidationRow row = unpredicted_row(p, index, regime, model.drain_unidentified);
  if (!row.predicted()) return row;
  const bool periodic = p.spec.suite != Suite::kIsolated;
  const model::PlatformModel& platform = model.platform;
  const double r = platform.drain_rate_bps();
  const double v = static_cast<double>(p.spec.volume_bytes());
  const model::Lookup t0 = platform.tiss0_s(p.spec.num_producers, v);
  row.tiss0_extrapolated = t0.extrapolated;
  if (periodic) {
    row.predicted_issue_s = model::issue_time_s(t0.value, v, r, p.spec.gap_s);
    row.predicted_period_s = model::period_s(t0.value, v, r, p.spec.gap_s);
    row.period_rel_err = rel_err(row.predicted_period_s, row.measured_period_s);
  } else {
    for (const auto& [k, why] : model.capacity_unidentified)
      if (k == p.spec.num_producers) row.unpredicted_reason = why;
    if (!platform.has_capacity()) row.unpredicted_reason = "the model has no Q(K)";
    if (!row.predicted()) return row;
    const model::Lookup q = platform.capacity_bytes(p.spec.num_producers);
    row.capacity_lower_bound = q.is_lower_bound;
    row.predicted_issue_s = model::isolated_issue_time_s(t0.value, v, r, q.value);
  }
  row.issue_rel_err = rel_err(row.predicted_issue_s, row.measured_issue_s);
  return row;
}

void summarise(Validation& out) {
  std::map<Regime, std::vector<const ValidationRow*>> by_regime;
  std::map<std::string, int> reasons;
  out.num_points = static_cast<int>(out.rows.size());
  out.num_predicted = 0;
  for (const ValidationRow& row : out.rows) {
    by_regime[row.regime].push_back(&row);
    if (row.predicted())
      ++out.num_predicted;
    else
      ++reasons[row.unpredicted_reason];
  }
  out.unpredicted.assign(reasons.begin(), reasons.end());
  out.regimes.clear();
  for (Regime regime : {Regime::kDrainLimited, Regime::kTransition, Regime::kPlateau, Regime::kIsolated,
                        Regime::kUnclassified}) {
    const auto& rows = by_regime[regime];
    if (regime == Regime::kUnclassified && rows.empty()) continue;  // reported only when it happens
    RegimeSummary s;
    s.regime = regime;
    s.num_points = static_cast<int>(rows.size());
    std::vector<double> issue, period;
    for (const ValidationRow* row : rows) {
      if (!row->predicted()) continue;
      ++s.num_predicted;
      s.num_tiss0_extrapolated += row->tiss0_extrapolated ? 1 : 0;
      issue.push_back(row->issue_rel_err);
      if (row->suite != Suite::kIsolated) period.push_back(row->period_rel_err);
    }
    // quantile() of an empty set is NaN: "no predicted rows of this regime", written as null.
    s.issue_median_rel_err = quantile(issue, 0.5);
    s.issue_p90_rel_err = quantile(issue, 0.9);
    s.period_median_rel_err = quantile(period, 0.5);
    s.period_p90_rel_err = quantile(period, 0.9);
    out.regimes.push_back(s);
  }
}

}  // namespace detail

const RegimeSummary& Validation::regime(Regime which) const {
  for (const RegimeSummary& s : regimes)
    if (s.regime == which) return s;
  throw input_error("validation.regimes", fmt::format("no {} summary (it has no points)", regime_name(which)));
}

Validation validate(const std::vector<PointRecord>& points, const FittedModel& model,
                    const FittedModel& regimes_from, const RegimeBoundaries& boundaries, const std::string& target) {
  Validation out;
  int num_excluded = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const PointRecord& p = points[i];
    if (p.spec.suite == Suite::kLocalControl || p.spec.suite == Suite::kLoaded) continue;
    if (!validated_point(p, target)) {
      ++num_excluded;
      continue;
    }
    out.rows.push_back(detail::predict_row(p, i, model, detail::classify(p.spec, regimes_from, boundaries)));
  }
  detail::summarise(out);
  if (num_excluded)
    out.notes.push_back(
        fmt::format("{} skipped, wrong-data, empty or other-target points not validated", num_excluded));
  return out;
}

Validation validate(const std::vector<PointRecord>& points, const model::PlatformModel& platform) {
  FittedModel model;
  model.platform = platform;
  return validate(points, model, model);
}

nlohmann::json Validation::to_json() const {
  using detail::number_or_null;
  using nlohmann::json;
  json j = {{"num_points", num_points}, {"num_predicted", num_predicted},
            {"num_unpredicted", num_points - num_predicted}, {"unpredicted", json::array()},
            {"regimes", json::object()}, {"notes", notes}};
  for (const auto& [reason, count] : unpredicted) j["unpredicted"].push_back({{"reason", reason}, {"count", count}});
  for (const RegimeSummary& s : regimes)
    j["regimes"][regime_name(s.regime)] = {{"num_points", s.num_points},
                                           {"num_predicted", s.num_predicted},
                                           {"num_unpredicted", s.num_points - s.num_predicted},
                                           {"num_tiss0_extrapolated", s.num_tiss0_extrapolated},
                                           {"issue_median_rel_err", number_or_null(s.issue_median_rel_err)},
                                           {"issue_p90_rel_err", number_or_null(s.issue_p90_rel_err)},
                                           {"period_median_rel_err", number_or_null(s.period_median_rel_err)},
                                           {"period_p90_rel_err", number_or_null(s.period_p90_rel_err)}};
  // Compact per-point table, one array per row in `columns` order; unpredicted rows have null predictions
  // and their reason, period columns are null for isolated points.
  j["columns"] = {"point_index", "fold", "suite", "regime", "K", "B_bytes", "G_s", "issue_pred_s", "issue_meas_s",
                  "issue_rel_err", "period_pred_s", "period_meas_s", "period_rel_err", "Q_lower_bound",
                  "tiss0_extrapolated", "unpredicted_reason"};
  json rows_json = json::array();
  for (const ValidationRow& r : rows)
    rows_json.push_back({r.point_index, r.fold >= 0 ? json(r.fold) : json(), suite_name(r.suite),
                         regime_name(r.regime), r.num_producers, r.bytes_per_producer, r.gap_s,
                         number_or_null(r.predicted_issue_s), r.measured_issue_s, number_or_null(r.issue_rel_err),
                         number_or_null(r.predicted_period_s), number_or_null(r.measured_period_s),
                         number_or_null(r.period_rel_err), r.capacity_lower_bound, r.tiss0_extrapolated,
                         r.predicted() ? json() : json(r.unpredicted_reason)});
  j["rows"] = std::move(rows_json);
  return j;
}

void attach_predictions(std::vector<PointRecord>& points, const model::PlatformModel& platform) {
  // A parameter the calibration did not identify predicts nothing: no R, no prediction at all; an
  // isolated point at a K whose Q is not identified gets none either (never a neighbour's Q).
  // Any earlier prediction (a refit reads points that carry one) is replaced or removed.
  for (PointRecord& p : points) p.prediction.reset();
  if (!platform.drain_rate_identified()) return;
  const auto& unidentified_k = platform.unidentified_capacity_k();
  const double r = platform.drain_rate_bps();
  for (PointRecord& p : points) {
    // The Burst-Gap model predicts no mainloop: loaded points get their prediction from the interference term.
    if (p.skipped || p.spec.suite == Suite::kLoaded) continue;
    if (p.spec.suite == Suite::kIsolated &&
        std::find(unidentified_k.begin(), unidentified_k.end(), p.spec.num_producers) != unidentified_k.end())
      continue;
    const double v = static_cast<double>(p.spec.volume_bytes());
    const double t0 = platform.tiss0_s(p.spec.num_producers, v).value;
    Prediction pred;
    pred.drain_horizon_s = v / r;  // V/R of the remote path
    switch (p.spec.suite) {
      case Suite::kPeriodic:
        pred.issue_time_s = model::issue_time_s(t0, v, r, p.spec.gap_s);
        pred.period_s = model::period_s(t0, v, r, p.spec.gap_s);
        break;
      case Suite::kIsolated: {
        // No Q in the model: never capacity-limited (T_iss^0).
        const double q = platform.has_capacity() ? platform.capacity_bytes(p.spec.num_producers).value
                                                 : std::numeric_limits<double>::infinity();
        pred.issue_time_s = std::isinf(q) ? t0 : model::isolated_issue_time_s(t0, v, r, q);
        pred.period_s = 0;  // one burst: no period
        break;
      }
      case Suite::kLocalControl:
        pred.issue_time_s = t0;
        pred.period_s = t0 + p.spec.gap_s;
        break;
      case Suite::kLoaded:
        break;
    }
    p.prediction = pred;
  }
}

}  // namespace xs::fit
