// xstage fit layer: validation with fixed parameters (paper section 3.5: "Equations 1 and 3 then predict
// the full sweep with no additional fitted parameter") and the predictions stored beside each point.
//   periodic:      T_iss = max(T_iss^0, V/R - G) (eq. 3), T_period = max(T_iss^0 + G, V/R) (eq. 2)
//   isolated:      T_iss^iso = max(T_iss^0, (V - Q)/R) (eq. 7); no Q in the model: T_iss^0
//   local control: the HBM path has no X-Stage backpressure: T_iss = T_iss^0, T_period = T_iss^0 + G
// T_iss^0(K,V) and Q(K) come from the model's tables with its interpolation.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "common/stats.hpp"
#include "fit/fit.hpp"
#include "fit/stages.hpp"
#include "model/burst_gap.hpp"

namespace xs::fit {
namespace {

bool usable(const PointRecord& p) { return !p.skipped && p.verification.wrong == 0; }

double rel_err(double predicted, double measured) { return std::abs(predicted - measured) / measured; }

struct Capacity {
  double bytes = std::numeric_limits<double>::infinity();  // no Q in the model: never capacity-limited
  bool lower_bound = false;
};

Capacity capacity_of(const model::PlatformModel& platform, int num_producers) {
  if (!platform.has_capacity()) return {};
  const model::Lookup q = platform.capacity_bytes(num_producers);
  return {q.value, q.is_lower_bound};
}

}  // namespace

Validation validate(const std::vector<PointRecord>& points, const model::PlatformModel& platform) {
  Validation out;
  const double r = platform.drain_rate_bps();
  std::vector<double> issue_err, period_err, isolated_err;
  int num_excluded = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const PointRecord& p = points[i];
    if (p.spec.suite == Suite::kLocalControl) continue;  // a control, not a prediction of the remote path
    if (!usable(p) || !(p.issue_time_s.median > 0)) {
      ++num_excluded;
      continue;
    }
    const double v = static_cast<double>(p.spec.volume_bytes());
    const double t0 = platform.tiss0_s(p.spec.num_producers, v).value;
    ValidationRow row;
    row.point_index = i;
    row.suite = p.spec.suite;
    row.num_producers = p.spec.num_producers;
    row.bytes_per_producer = p.spec.bytes_per_producer;
    row.gap_s = p.spec.gap_s;
    row.measured_issue_s = p.issue_time_s.median;
    if (p.spec.suite == Suite::kIsolated) {
      const Capacity q = capacity_of(platform, p.spec.num_producers);
      row.capacity_lower_bound = q.lower_bound;
      row.predicted_issue_s = std::isinf(q.bytes) ? t0 : model::isolated_issue_time_s(t0, v, r, q.bytes);
      row.issue_rel_err = rel_err(row.predicted_issue_s, row.measured_issue_s);
      isolated_err.push_back(row.issue_rel_err);
    } else {
      if (!(p.period_s.median > 0)) {
        ++num_excluded;
        continue;
      }
      row.predicted_issue_s = model::issue_time_s(t0, v, r, p.spec.gap_s);
      row.predicted_period_s = model::period_s(t0, v, r, p.spec.gap_s);
      row.measured_period_s = p.period_s.median;
      row.issue_rel_err = rel_err(row.predicted_issue_s, row.measured_issue_s);
      row.period_rel_err = rel_err(row.predicted_period_s, row.measured_period_s);
      issue_err.push_back(row.issue_rel_err);
      period_err.push_back(row.period_rel_err);
    }
    out.rows.push_back(row);
  }
  // quantile() of an empty set is NaN: "no rows of this kind", written as null.
  out.issue_median_rel_err = quantile(issue_err, 0.5);
  out.issue_p90_rel_err = quantile(issue_err, 0.9);
  out.period_median_rel_err = quantile(period_err, 0.5);
  out.period_p90_rel_err = quantile(period_err, 0.9);
  out.isolated_median_rel_err = quantile(isolated_err, 0.5);
  out.isolated_p90_rel_err = quantile(isolated_err, 0.9);
  out.num_periodic = static_cast<int>(issue_err.size());
  out.num_isolated = static_cast<int>(isolated_err.size());
  if (num_excluded)
    out.notes.push_back(fmt::format("{} skipped, wrong-data or empty points not validated", num_excluded));
  return out;
}

nlohmann::json Validation::to_json() const {
  using detail::number_or_null;
  using nlohmann::json;
  json j = {{"issue_median_rel_err", number_or_null(issue_median_rel_err)},
            {"issue_p90_rel_err", number_or_null(issue_p90_rel_err)},
            {"period_median_rel_err", number_or_null(period_median_rel_err)},
            {"period_p90_rel_err", number_or_null(period_p90_rel_err)},
            {"isolated_median_rel_err", number_or_null(isolated_median_rel_err)},
            {"isolated_p90_rel_err", number_or_null(isolated_p90_rel_err)},
            {"num_periodic", num_periodic},
            {"num_isolated", num_isolated},
            {"notes", notes}};
  // Compact per-point table: one array per row in `columns` order; period columns are null for isolated.
  j["columns"] = {"point_index", "suite", "K", "B_bytes", "G_s", "issue_pred_s", "issue_meas_s", "issue_rel_err",
                  "period_pred_s", "period_meas_s", "period_rel_err", "Q_lower_bound"};
  json rows_json = json::array();
  for (const ValidationRow& r : rows) {
    const bool periodic = r.suite != Suite::kIsolated;
    rows_json.push_back({r.point_index, suite_name(r.suite), r.num_producers, r.bytes_per_producer, r.gap_s,
                         number_or_null(r.predicted_issue_s), r.measured_issue_s, number_or_null(r.issue_rel_err),
                         periodic ? number_or_null(r.predicted_period_s) : json(),
                         periodic ? json(r.measured_period_s) : json(),
                         periodic ? number_or_null(r.period_rel_err) : json(), r.capacity_lower_bound});
  }
  j["rows"] = std::move(rows_json);
  return j;
}

void attach_predictions(std::vector<PointRecord>& points, const model::PlatformModel& platform) {
  const double r = platform.drain_rate_bps();
  for (PointRecord& p : points) {
    if (p.skipped) continue;
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
        const Capacity q = capacity_of(platform, p.spec.num_producers);
        pred.issue_time_s = std::isinf(q.bytes) ? t0 : model::isolated_issue_time_s(t0, v, r, q.bytes);
        pred.period_s = 0;  // one burst: no period
        break;
      }
      case Suite::kLocalControl:
        pred.issue_time_s = t0;
        pred.period_s = t0 + p.spec.gap_s;
        break;
    }
    p.prediction = pred;
  }
}

}  // namespace xs::fit
