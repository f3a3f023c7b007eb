// xstage fit layer: the whole calibration fit (R, then T_iss^0 with R fixed, then Q with both fixed), one
// joint bootstrap over all of it, and the calibration file's `model` section.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <cmath>

#include "common/error.hpp"
#include "fit/bootstrap.hpp"
#include "fit/stages.hpp"

namespace xs::fit {
namespace {

using detail::number_or_null;

// The isolated points below the knee become T_iss^0 rows of their own (K,B) (Fig. 3c's floor), unless the
// gap sweep already measured that (K,B) on its plateau; they replace a "max_gap" upper bound. A point near
// the knee is kept as a flagged upper bound (its T_iss is what the model must predict there either way).
void add_isolated_floor_rows(const detail::Dataset& data, const std::vector<detail::CapacityPlan>& cplans,
                             const std::vector<CapacityFit>& capacity, double drain_rate_bps,
                             const FitOptions& options, std::vector<Tiss0Fit>& rows,
                             std::vector<detail::Tiss0Plan>& plans) {
  for (std::size_t k = 0; k < cplans.size(); ++k) {
    for (int i : cplans[k].floor) {
      const detail::Obs& o = data.obs[i];
      const bool clear = detail::clearly_on_floor(data, cplans[k], i, drain_rate_bps,
                                                  capacity[k].capacity_bytes.value, options);
      Tiss0Fit row;
      row.num_producers = o.num_producers;
      row.bytes_per_producer = o.bytes_per_producer;
      row.volume_bytes = o.volume_bytes;
      row.source = "isolated_floor";
      row.issue_time_s = {o.issue_s, o.issue_s, o.issue_s, clear,
                          clear ? "isolated point below the knee (eq. 7 floor)"
                                : "isolated point near the knee: may include backpressure, an upper bound of T_iss^0"};
      row.quality = {1, std::nan(""), 0.0};
      detail::Tiss0Plan plan;
      plan.num_producers = o.num_producers;
      plan.bytes_per_producer = o.bytes_per_producer;
      plan.estimate_from = {i};
      plan.source = "isolated_floor";
      auto same = std::find_if(rows.begin(), rows.end(), [&](const Tiss0Fit& r) {
        return r.num_producers == o.num_producers && r.bytes_per_producer == o.bytes_per_producer;
      });
      if (same == rows.end()) {
        rows.push_back(row);
        plans.push_back(plan);
      } else if (!same->issue_time_s.constrained && clear) {
        plans[static_cast<std::size_t>(same - rows.begin())] = plan;
        *same = row;
      }
    }
  }
}

}  // namespace

CalibrationFit fit_calibration(const std::vector<PointRecord>& points, const FitOptions& options) {
  const detail::Dataset data = detail::build_dataset(points, options);
  const detail::Values med = detail::median_values(data);
  CalibrationFit fit;
  fit.options = options;
  fit.options.target = data.target;
  fit.notes = data.notes;

  const detail::DrainPlan dplan = detail::settle_drain_plan(data, options);
  const double r = detail::drain_rate_from(data, dplan, med);
  fit.drain.drain_rate_bps = {r, r, r, dplan.constrained, dplan.note};
  fit.drain.quality = detail::drain_quality(data, dplan, r);
  fit.drain.bound = dplan.lower_bound ? "lower" : "fit";

  std::vector<detail::Tiss0Plan> tplans = detail::plan_tiss0(data, r, options);
  for (const auto& p : tplans) fit.tiss0.push_back(detail::tiss0_row(data, p, r, med));
  const auto cplans = detail::plan_capacity(data, r, dplan.constrained, fit.tiss0, options);
  for (const auto& p : cplans) fit.capacity.push_back(detail::capacity_row(data, p, r, med));
  add_isolated_floor_rows(data, cplans, fit.capacity, r, options, fit.tiss0, tplans);
  if (fit.tiss0.empty())
    throw input_error("points", "no T_iss^0 information: need a periodic gap sweep (G > 0) or isolated points");
  if (cplans.empty()) fit.notes.push_back("no isolated points: Q(K) not measured");

  // A plateau above the isolated knee is T_iss^iso (eq. 7), not T_iss^0: say so beside the row.
  for (auto& row : fit.tiss0)
    for (const auto& q : fit.capacity)
      if (row.source == "plateau" && q.num_producers == row.num_producers && q.bound == "fit" &&
          row.volume_bytes > q.knee_volume_bytes)
        row.issue_time_s.note += (row.issue_time_s.note.empty() ? "" : "; ") +
                                 std::string("V above the isolated knee: this plateau is T_iss^iso, capacity-limited");

  // Joint bootstrap: parameters [R, T_iss^0 rows..., Q rows...]; each replicate's R feeds its Q.
  std::vector<int> issue_obs, period_obs = dplan.lower_bound ? dplan.zero_gap : dplan.used;
  for (const auto& p : tplans) issue_obs.insert(issue_obs.end(), p.estimate_from.begin(), p.estimate_from.end());
  for (const auto& p : cplans) issue_obs.insert(issue_obs.end(), p.points.begin(), p.points.end());
  const auto ci = detail::bootstrap_ci95(
      data, issue_obs, period_obs, options.bootstrap_resamples, options.seed,
      [&](const detail::Values& v, std::vector<double>& out) {
        out.clear();
        const double rb = detail::drain_rate_from(data, dplan, v);
        out.push_back(rb);
        for (const auto& p : tplans) out.push_back(detail::tiss0_from(p, v));
        for (const auto& p : cplans) out.push_back(detail::capacity_from(data, p, v, rb));
      });
  fit.drain.drain_rate_bps.ci95_lo = ci[0].lo;
  fit.drain.drain_rate_bps.ci95_hi = ci[0].hi;
  for (std::size_t t = 0; t < fit.tiss0.size(); ++t) {
    fit.tiss0[t].issue_time_s.ci95_lo = ci[1 + t].lo;
    fit.tiss0[t].issue_time_s.ci95_hi = ci[1 + t].hi;
  }
  for (std::size_t q = 0; q < fit.capacity.size(); ++q) {
    const detail::Interval& iv = ci[1 + fit.tiss0.size() + q];
    detail::set_capacity_ci95(fit.capacity[q], iv.lo, iv.hi);
  }
  std::sort(fit.tiss0.begin(), fit.tiss0.end(), [](const Tiss0Fit& a, const Tiss0Fit& b) {
    return std::pair(a.num_producers, a.bytes_per_producer) < std::pair(b.num_producers, b.bytes_per_producer);
  });
  return fit;
}

model::PlatformModel CalibrationFit::to_platform_model() const {
  // One path for both: the model reads exactly what the calibration file stores.
  return model::PlatformModel::from_json(to_json());
}

nlohmann::json CalibrationFit::to_json() const {
  using nlohmann::json;
  const auto quality = [](const Quality& q) {
    return json{{"num_points", q.num_points}, {"r_squared", number_or_null(q.r_squared)},
                {"worst_rel_residual", number_or_null(q.worst_rel_residual)}};
  };
  const Estimate& rate = drain.drain_rate_bps;
  json m = {{"R_Bps", rate.value}, {"R_ci95", {rate.ci95_lo, rate.ci95_hi}}, {"R_bound", drain.bound},
            {"R_constrained", rate.constrained}, {"tiss0", json::array()}, {"Q", json::array()}};
  json fit_block = {{"target", options.target}, {"R", quality(drain.quality)}, {"tiss0", json::array()},
                    {"Q", json::array()}};
  fit_block["R"]["note"] = rate.note;
  for (const Tiss0Fit& row : tiss0) {
    const Estimate& t = row.issue_time_s;
    m["tiss0"].push_back({{"K", row.num_producers}, {"B_bytes", row.bytes_per_producer}, {"V_bytes", row.volume_bytes},
                          {"s", t.value}, {"ci95", {t.ci95_lo, t.ci95_hi}}, {"constrained", t.constrained},
                          {"source", row.source}, {"num_plateau_points", row.num_plateau_points}});
    json qj = quality(row.quality);
    qj["K"] = row.num_producers;
    qj["B_bytes"] = row.bytes_per_producer;
    qj["note"] = t.note;
    fit_block["tiss0"].push_back(qj);
  }
  for (const CapacityFit& row : capacity) {
    const Estimate& q = row.capacity_bytes;
    m["Q"].push_back({{"K", row.num_producers}, {"bytes", q.value}, {"ci95", {q.ci95_lo, q.ci95_hi}},
                      {"bound", row.bound}, {"knee_V_bytes", row.knee_volume_bytes}, {"constrained", q.constrained}});
    json qj = quality(row.quality);
    qj["K"] = row.num_producers;
    qj["num_points_tested"] = row.num_points_tested;
    qj["num_points_above_knee"] = row.num_points_above_knee;
    qj["note"] = q.note;
    fit_block["Q"].push_back(qj);
  }
  fit_block["criteria"] = {{"drain_dominance", options.drain_dominance},
                           {"envelope_tolerance", options.envelope_tolerance},
                           {"plateau_gap_factor", options.plateau_gap_factor},
                           {"knee_margin", options.knee_margin},
                           {"min_zero_gap_volume_bytes", options.min_zero_gap_volume_bytes}};
  fit_block["bootstrap"] = {{"resamples", options.bootstrap_resamples}, {"seed", options.seed},
                            {"scheme", "repetition: each replicate redraws every used point's per-repetition "
                                       "samples with replacement and takes their median; point selection fixed; "
                                       "percentile 2.5-97.5%"}};
  fit_block["notes"] = notes;
  m["fit"] = std::move(fit_block);
  return m;
}

}  // namespace xs::fit
