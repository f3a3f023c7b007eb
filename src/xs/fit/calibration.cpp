// xstage fit layer: the whole calibration fit (R, then T_iss^0 with R fixed, then Q with both fixed), one
// joint bootstrap over all of it, and the calibration file's `model` section.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <cmath>

#include "xs/common/error.hpp"
#include "xs/fit/bootstrap.hpp"
#include "xs/fit/stages.hpp"

namespace xs::fit {
namespace {

using detail::number_or_null;

// The isolated points below the knee become T_iss^0 rows of their own (K,B) (Fig. 3c's floor), unless the
// gap sweep already measured that (K,B) on its plateau; they replace a "max_gap" upper bound. A point near
// the knee is kept as a flagged upper bound (its T_iss is what the model must predict there either way).
// A "floor" point more than 2x above what the points below it allow (T' V/V') is a transition point taken
// back from the branch, not a floor: it is left out rather than poison T_iss^0 at its (K,B).
void add_isolated_floor_rows(const detail::Dataset& data, const std::vector<detail::CapacityPlan>& cplans,
                             const std::vector<CapacityFit>& capacity, double drain_rate_bps,
                             const FitOptions& options, std::vector<Tiss0Fit>& rows,
                             std::vector<detail::Tiss0Plan>& plans) {
  for (std::size_t k = 0; k < cplans.size(); ++k) {
    double bound_s = std::numeric_limits<double>::infinity(), bound_v = 0;  // lowest T'/V' below
    for (int i : cplans[k].floor) {
      const detail::Obs& o = data.obs[i];
      if (bound_v > 0 && o.issue_s > 2.0 * bound_s * o.volume_bytes / bound_v) continue;
      if (bound_v == 0 || o.issue_s / o.volume_bytes < bound_s / bound_v) {
        bound_s = o.issue_s;
        bound_v = o.volume_bytes;
      }
      const bool clear = detail::clearly_on_floor(data, cplans[k], i, drain_rate_bps,
                                                  capacity[k].capacity_bytes.value, options);
      Tiss0Fit row;
      row.num_producers = o.num_producers;
      row.bytes_per_producer = o.bytes_per_producer;
      row.volume_bytes = o.volume_bytes;
      row.source = "isolated_floor";
      row.issue_time_s = {o.floor_issue_s, o.floor_issue_s, o.floor_issue_s, clear,
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

// Stream-length convergence: every (K,B) measured at G = 0 with more than one stream length (num_bursts * V).
// The longest stream's rate differs from R when its own spread (p10-p90 of T_period) and R's interval do
// not overlap: a shorter-stream R was then partly L2 absorption, not the steady drain.
void record_convergence(const detail::Dataset& data, DrainRateFit& drain) {
  std::map<std::pair<int, std::uint64_t>, std::vector<int>> by_kb;
  for (int i = 0; i < static_cast<int>(data.obs.size()); ++i) {
    const detail::Obs& o = data.obs[i];
    if (o.suite == Suite::kPeriodic && o.gap_s == 0) by_kb[{o.num_producers, o.bytes_per_producer}].push_back(i);
  }
  const Estimate& r = drain.drain_rate_bps;
  bool any = false, all_agree = true;
  for (auto& [kb, idx] : by_kb) {
    std::sort(idx.begin(), idx.end(), [&](int a, int b) { return data.obs[a].stream_bytes() < data.obs[b].stream_bytes(); });
    if (data.obs[idx.front()].stream_bytes() == data.obs[idx.back()].stream_bytes()) continue;
    any = true;
    for (int i : idx)
      drain.convergence.push_back({kb.first, kb.second, data.obs[i].stream_bytes(),
                                   data.obs[i].volume_bytes / data.obs[i].period_s});
    const detail::Obs& longest = data.obs[idx.back()];
    const double rate = longest.volume_bytes / longest.period_s;
    const double half = 0.5 * rate * longest.period_spread;
    const double lo = r.has_ci95() ? r.ci95_lo : r.value, hi = r.has_ci95() ? r.ci95_hi : r.value;
    if (rate + half < lo || rate - half > hi) {
      all_agree = false;
      drain.convergence_note += fmt::format("{}K={} B={}: longest stream ({:.4g} B) runs at {:.4g} B/s, outside R's "
                                            "interval", drain.convergence_note.empty() ? "" : "; ", kb.first, kb.second,
                                            longest.stream_bytes(), rate);
    }
  }
  if (!any) {
    drain.convergence_note = "no (K,B) measured at several stream lengths: steady state over stream length not checked";
    return;
  }
  drain.converged = all_agree;
  if (all_agree) drain.convergence_note = "the longest stream of every (K,B) agrees with R";
}

// What the stages of fit_calibration share: the data and their medians, the options, R and each stage's plan
// (the Q plans are updated in place by the knee-shape checks).
struct CalibrationStage {
  const detail::Dataset& data;
  const detail::Values& med;
  const FitOptions& options;
  detail::DrainPlan dplan;
  double r = 0;  // R's point value
  std::vector<detail::Tiss0Plan> tplans{};
  std::vector<detail::CapacityPlan> cplans{};
  std::vector<detail::CapacityPlan> without_first{}, without_two{};  // cplans without the branch's first 1 / 2 points
};

// R's point value from the settled drain plan (its interval comes from the joint bootstrap). Throws when no
// zero-gap point gives a positive rate.
void fit_drain(CalibrationStage& st, CalibrationFit& fit) {
  st.r = detail::drain_rate_from(st.data, st.dplan, st.med);
  const double r = st.r;
  fit.drain.drain_rate_bps = {r, r, r, st.dplan.constrained, st.dplan.note};
  fit.drain.quality = detail::drain_quality(st.data, st.dplan, r);
  fit.drain.bound = st.dplan.bound();
  if (!(r > 0)) throw input_error("points", "no zero-gap point gives a positive rate V/T_period: R cannot be estimated");
}

// The T_iss^0 rows with R fixed, the Q(K) rows with both fixed, then the isolated floor rows. Throws when no
// point informs T_iss^0.
void fit_tiss0_and_capacity(CalibrationStage& st, CalibrationFit& fit) {
  const detail::Dataset& data = st.data;
  const double r = st.r;
  st.tplans = detail::plan_tiss0(data, r, st.options);
  for (const auto& p : st.tplans) fit.tiss0.push_back(detail::tiss0_row(data, p, r, st.med));
  st.cplans = detail::plan_capacity(data, r, st.dplan.constrained, fit.tiss0, st.options,
                                    detail::drain_scatter(data, st.dplan, r));
  for (const auto& p : st.cplans) fit.capacity.push_back(detail::capacity_row(data, p, r, st.med));
  add_isolated_floor_rows(data, st.cplans, fit.capacity, r, st.options, fit.tiss0, st.tplans);
  if (fit.tiss0.empty())
    throw input_error("points", "no T_iss^0 information: need a periodic gap sweep (G > 0) or isolated points");
  if (st.cplans.empty()) fit.notes.push_back("no isolated points: Q(K) not measured");
}

// A plateau at or beyond a measured drain-branch volume is T_iss^iso (eq. 7), not T_iss^0: say so beside
// the row. (The interpolated knee alone is not enough: it can sit just below a floor point.)
void mark_iso_plateaus(CalibrationFit& fit) {
  for (auto& row : fit.tiss0)
    for (const auto& q : fit.capacity)
      if (row.source == "plateau" && q.num_producers == row.num_producers && q.bound != "lower" &&
          q.drain_start_volume_bytes > 0 && row.volume_bytes >= q.drain_start_volume_bytes)
      {
        row.issue_time_s.note += (row.issue_time_s.note.empty() ? "" : "; ") +
                                 std::string("V on the isolated drain branch: this plateau is T_iss^iso, capacity-limited");
        row.issue_time_s.constrained = false;  // an upper bound of T_iss^0 (T_iss^iso >= T_iss^0), not T_iss^0
      }
}

// Joint bootstrap: parameters [R, R_iso, T_iss^0 rows..., Q rows..., Q without the first branch point...,
// Q without the first two..., Q under each soft knee per Q row...]; each replicate's R feeds its Q. Groups
// resampled as cases: R's cluster, each plateau, each drain branch (disjoint sets of points). Returns the
// intervals in that order, and sets st.without_first / st.without_two.
std::vector<detail::Interval> joint_bootstrap(CalibrationStage& st) {
  const detail::Dataset& data = st.data;
  const auto& cplans = st.cplans;
  std::vector<int> issue_obs, period_obs = st.dplan.used;
  std::vector<std::vector<int>> groups;
  if (!st.dplan.used.empty()) groups.push_back(st.dplan.used);
  for (const auto& p : st.tplans) {
    issue_obs.insert(issue_obs.end(), p.estimate_from.begin(), p.estimate_from.end());
    if (p.source == "plateau") groups.push_back(p.estimate_from);
  }
  for (const auto& p : cplans) {
    issue_obs.insert(issue_obs.end(), p.points.begin(), p.points.end());
    if (!p.drain.empty()) groups.push_back(p.drain);
  }
  // Knee-shape misfit (set_capacity_intervals): a knee that fades within one or two sweep steps (capacity.cpp)
  // biases the first one or two branch points, so each drain branch is also fitted, in the same replicates,
  // without its first point (branches of >= 3 points) and without its first two (>= 5).
  auto& without_first = st.without_first;
  auto& without_two = st.without_two;
  without_first.assign(cplans.size(), {});
  without_two.assign(cplans.size(), {});
  for (std::size_t q = 0; q < cplans.size(); ++q) {
    without_first[q] = without_two[q] = cplans[q];
    if (cplans[q].drain.size() >= 3) without_first[q].drain.erase(without_first[q].drain.begin());
    if (cplans[q].drain.size() >= 5) without_two[q].drain.erase(without_two[q].drain.begin(), without_two[q].drain.begin() + 2);
  }
  return detail::bootstrap_ci95(
      data, issue_obs, period_obs, groups, st.options.bootstrap_resamples, st.options.seed,
      [&](const detail::Values& v, std::vector<double>& out) {
        out.clear();
        const double rb = detail::drain_rate_from(data, st.dplan, v);
        out.push_back(rb);
        out.push_back(detail::isolated_drain_rate(data, cplans, v));
        for (const auto& p : st.tplans) out.push_back(detail::tiss0_from(p, v));
        for (const auto& p : cplans) out.push_back(detail::capacity_from(data, p, v, rb));
        for (const auto& p : without_first) out.push_back(detail::capacity_from(data, p, v, rb));
        for (const auto& p : without_two) out.push_back(detail::capacity_from(data, p, v, rb));
        // Q under each soft knee of the family (knee_shape.cpp), from this replicate's hard-knee Q.
        for (std::size_t q = 0; q < cplans.size(); ++q)
          detail::shape_capacities(data, cplans[q], v, rb, out[2 + st.tplans.size() + q], out);
      });
}

// R's and the T_iss^0 rows' intervals from the bootstrap. A row from one isolated floor point has no
// between-point scatter of its own to resample; its interval also spans the floor's measured scatter
// (isolated_floor_scatter), as a 95% normal interval in log T.
void set_rate_and_tiss0_intervals(const CalibrationStage& st, const std::vector<detail::Interval>& ci,
                                  CalibrationFit& fit) {
  const detail::DrainPlan& dplan = st.dplan;
  if (dplan.bound() == "fit") detail::set_ci95(fit.drain.drain_rate_bps, ci[0], dplan.used.size());
  else detail::clear_ci95(fit.drain.drain_rate_bps, dplan.lower_bound ? "R is a lower bound" : "R is not identified");
  for (std::size_t t = 0; t < fit.tiss0.size(); ++t) detail::set_tiss0_ci95(fit.tiss0[t], st.tplans[t], ci[2 + t]);
  const double floor_scatter = detail::isolated_floor_scatter(st.data, st.cplans, st.med);
  for (Tiss0Fit& row : fit.tiss0) {
    Estimate& e = row.issue_time_s;
    if (st.options.bootstrap_resamples <= 0 || row.source != "isolated_floor" || !e.constrained ||
        !std::isfinite(floor_scatter) || !(floor_scatter > 0))
      continue;
    const bool had_interval = e.has_ci95();
    e.ci95_lo = std::min(had_interval ? e.ci95_lo : e.value, e.value * std::exp(-1.96 * floor_scatter));
    e.ci95_hi = std::max(had_interval ? e.ci95_hi : e.value, e.value * std::exp(1.96 * floor_scatter));
    const std::string scatter = fmt::format("the isolated floor's between-point scatter ({:.1f}%)", 100 * floor_scatter);
    const std::string reps_only = "interval from one point's repetitions only";
    if (auto at = e.note.find(reps_only); at != std::string::npos)
      e.note.replace(at, reps_only.size(), "interval from one point's repetitions and " + scatter);
    else if (auto none = e.note.find("no interval: "); none != std::string::npos)
      e.note = e.note.substr(0, none) + "interval from " + scatter + " (one repetition)";
  }
}

// Q's rows and intervals after the bootstrap: the knee-shape check, the hull with Q without the branch points
// nearest the knee, and the widening to every soft knee the data do not reject.
void set_capacity_intervals(CalibrationStage& st, const std::vector<detail::Interval>& ci, CalibrationFit& fit) {
  const detail::Dataset& data = st.data;
  const detail::Values& med = st.med;
  auto& cplans = st.cplans;
  const double r = st.r;
  const std::size_t shapes_at = 2 + fit.tiss0.size() + 3 * cplans.size(), num_orders = std::size(detail::kKneeOrders);
  // Knee shape (knee_shape.cpp): a drain branch whose V - R T tilts along the branch beyond its noise and R's (a knee
  // softer than eq. 7's, a drift of R) does not identify Q. sigma_R, the relative standard error of R, from R's own
  // bootstrap interval (half-width / 1.96). Decided after the bootstrap, so R's and T_iss^0's fits are untouched.
  const double r_rel_se = st.dplan.bound() == "fit" && std::isfinite(ci[0].lo) && std::isfinite(ci[0].hi)
                              ? (ci[0].hi - ci[0].lo) / (2 * 1.96 * r) : 0.0;
  for (std::size_t q = 0; q < cplans.size(); ++q)
    if (fit.capacity[q].bound == "fit" &&
        detail::reject_knee_shape(cplans[q], detail::knee_shape(data, cplans[q], r, r_rel_se), r,
                                  st.options.knee_shape_sigmas))
      fit.capacity[q] = detail::capacity_row(data, cplans[q], r, med);
  for (std::size_t q = 0; q < fit.capacity.size(); ++q) {
    detail::set_capacity_ci95(fit.capacity[q], cplans[q], ci[2 + fit.tiss0.size() + q]);
    // Misfit at the knee: a soft knee bends the branch's first points above (V - Q)/R and pulls Q down, within
    // every point's noise (capacity.cpp). Q's interval is the hull of its own and those of Q without the first
    // one and two branch points (same replicates). (The point value of the first alone widened too little: a
    // soft knee of order 4 left Q's coverage at 0.835; with the hull 0.935, and sharp knees' intervals about
    // 1.3x wider: results/cpu/coverage/.)
    Estimate& e = fit.capacity[q].capacity_bytes;
    const detail::CapacityPlan& plan = cplans[q];
    detail::Interval far = ci[2 + fit.tiss0.size() + cplans.size() + q];
    const detail::Interval& farther = ci[2 + fit.tiss0.size() + 2 * cplans.size() + q];
    if (plan.drain.size() >= 5 && std::isfinite(farther.lo) && std::isfinite(farther.hi))
      far = {std::min(far.lo, farther.lo), std::max(far.hi, farther.hi)};
    if (fit.capacity[q].bound == "fit" && e.has_ci95() && plan.drain.size() >= 3 && std::isfinite(far.lo) &&
        std::isfinite(far.hi) && (far.lo < e.ci95_lo || far.hi > e.ci95_hi)) {
      const double q_far = detail::capacity_from(data, st.without_first[q], med, r);
      e.ci95_lo = std::max(std::min(e.ci95_lo, far.lo), 1.0);
      e.ci95_hi = std::max(e.ci95_hi, far.hi);
      e.note += fmt::format("; interval spans Q without the branch points nearest the knee ({:.4g} B without the "
                            "first; ci95 {:.4g} to {:.4g} B without the first one or two)", q_far, far.lo, far.hi);
    }
    // Knee shape (knee_shape.cpp): the interval also spans Q under every p-norm knee the data do not reject.
    if (fit.capacity[q].bound == "fit" && e.has_ci95() &&
        detail::widen_to_knee_shapes(data, cplans[q], med, r, r_rel_se, ci, shapes_at + q * num_orders, e)) {
      fit.capacity[q] = detail::capacity_row(data, cplans[q], r, med);
      detail::set_capacity_ci95(fit.capacity[q], cplans[q], ci[2 + fit.tiss0.size() + q]);
    }
  }
}

// Cross-check: the isolated drain branches' slope dT/dV = 1/R, independent of the zero-gap points. Where the
// two disagree, R's interval spans both and the Q rows computed with R lose their constraint.
void cross_check_isolated_rate(const CalibrationStage& st, const std::vector<detail::Interval>& ci,
                               CalibrationFit& fit) {
  const double r = st.r;
  fit.drain.iso_rate_bps = detail::isolated_drain_rate(st.data, st.cplans, st.med);
  if (!std::isfinite(fit.drain.iso_rate_bps)) {
    fit.drain.iso_note = "no isolated drain branch with two volumes: R not cross-checked";
    return;
  }
  fit.drain.iso_ci95 = {ci[1].lo, ci[1].hi};
  const Estimate& re = fit.drain.drain_rate_bps;
  const bool overlap = re.has_ci95() && ci[1].lo <= re.ci95_hi && re.ci95_lo <= ci[1].hi;
  fit.drain.iso_rate_agrees =
      overlap || std::abs(fit.drain.iso_rate_bps / r - 1) <= st.options.envelope_tolerance;
  fit.drain.iso_note = *fit.drain.iso_rate_agrees
                           ? "the isolated drain branches' slope agrees with R"
                           : fmt::format("the isolated drain branches' slope gives {:.4g} B/s, {:.1f}% from R",
                                         fit.drain.iso_rate_bps, 100 * (fit.drain.iso_rate_bps / r - 1));
  // Two measurements of R that disagree bound it between them (drift over the run, or a model misfit that
  // one of them carries): R's interval spans both intervals rather than claim the zero-gap one alone.
  Estimate& widened = fit.drain.drain_rate_bps;
  const bool disjoint = widened.has_ci95() && (ci[1].lo > widened.ci95_hi || ci[1].hi < widened.ci95_lo);
  if ((!*fit.drain.iso_rate_agrees || disjoint) && widened.has_ci95() && std::isfinite(ci[1].lo) &&
      std::isfinite(ci[1].hi)) {
    widened.ci95_lo = std::min(widened.ci95_lo, ci[1].lo);
    widened.ci95_hi = std::max(widened.ci95_hi, ci[1].hi);
    widened.note += (widened.note.empty() ? "" : "; ") +
               std::string("interval widened to the isolated drain branches' slope, which disagrees (drift or misfit)");
    // Q is V - R T on the isolated points with the zero-gap R, which those points' own slope contradicts:
    // a drift of R between the two measurements moves Q by that fraction of V - Q, many Q far from the knee.
    for (CapacityFit& q : fit.capacity)
      if (q.bound == "fit" && q.capacity_bytes.constrained) {
        q.capacity_bytes.constrained = false;
        q.capacity_bytes.note += "; unconstrained: the isolated branches' slope disagrees with the zero-gap R that "
                                 "Q is computed with";
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

  CalibrationStage st{data, med, options, detail::settle_drain_plan(data, options)};
  fit_drain(st, fit);
  fit_tiss0_and_capacity(st, fit);
  mark_iso_plateaus(fit);
  const std::vector<detail::Interval> ci = joint_bootstrap(st);
  set_rate_and_tiss0_intervals(st, ci, fit);
  set_capacity_intervals(st, ci, fit);
  cross_check_isolated_rate(st, ci, fit);
  detail::check_path_rate(fit.drain, options);
  record_convergence(data, fit.drain);
  std::sort(fit.tiss0.begin(), fit.tiss0.end(), [](const Tiss0Fit& a, const Tiss0Fit& b) {
    return std::pair(a.num_producers, a.bytes_per_producer) < std::pair(b.num_producers, b.bytes_per_producer);
  });
  return fit;
}

model::PlatformModel CalibrationFit::to_platform_model() const {
  // One path for both: the model reads exactly what the calibration file stores (null intervals and
  // "not_identified" bounds included; an unidentified Q(K) is not interpolated over).
  return model::PlatformModel::from_json(to_json());
}

nlohmann::json CalibrationFit::to_json() const {
  using nlohmann::json;
  const auto quality = [](const Quality& q) {
    return json{{"num_points", q.num_points}, {"r_squared", number_or_null(q.r_squared)},
                {"worst_rel_residual", number_or_null(q.worst_rel_residual)}};
  };
  const Estimate& rate = drain.drain_rate_bps;
  const auto ci95 = [](const Estimate& e) { return e.has_ci95() ? json{e.ci95_lo, e.ci95_hi} : json(); };
  json m = {{"R_Bps", rate.value}, {"R_ci95", ci95(rate)}, {"R_bound", drain.bound},
            {"R_constrained", rate.constrained}, {"tiss0", json::array()}, {"Q", json::array()}};
  if (!drain.caveat.empty()) m["R_caveat"] = drain.caveat;
  json fit_block = {{"target", options.target}, {"R", quality(drain.quality)}, {"tiss0", json::array()},
                    {"Q", json::array()}};
  json& rj = fit_block["R"];
  rj["note"] = rate.note;
  rj["iso_rate_Bps"] = number_or_null(drain.iso_rate_bps);
  rj["iso_ci95"] = std::isfinite(drain.iso_ci95.first) && std::isfinite(drain.iso_ci95.second)
                       ? json{drain.iso_ci95.first, drain.iso_ci95.second} : json();
  rj["iso_agrees"] = drain.iso_rate_agrees ? json(*drain.iso_rate_agrees) : json();
  rj["iso_note"] = drain.iso_note;
  rj["convergence"] = json::array();
  for (const StreamRate& c : drain.convergence)
    rj["convergence"].push_back({{"K", c.num_producers}, {"B_bytes", c.bytes_per_producer},
                                 {"stream_bytes", c.stream_bytes}, {"rate_Bps", number_or_null(c.rate_bps)}});
  rj["converged"] = drain.converged ? json(*drain.converged) : json();
  rj["convergence_note"] = drain.convergence_note;
  for (const Tiss0Fit& row : tiss0) {
    const Estimate& t = row.issue_time_s;
    m["tiss0"].push_back({{"K", row.num_producers}, {"B_bytes", row.bytes_per_producer}, {"V_bytes", row.volume_bytes},
                          {"s", t.value}, {"ci95", ci95(t)}, {"constrained", t.constrained},
                          {"source", row.source}, {"num_plateau_points", row.num_plateau_points},
                          {"bound", t.constrained ? "fit" : "upper"}});
    // Every unconstrained T_iss^0 row the fitter writes bounds T_iss^0 from above (the smallest T_iss seen,
    // a floor point near the knee, a plateau that is T_iss^iso): the reason goes beside it for lookups.
    if (!t.constrained) m["tiss0"].back()["caveat"] = t.note;
    json qj = quality(row.quality);
    qj["K"] = row.num_producers;
    qj["B_bytes"] = row.bytes_per_producer;
    qj["note"] = t.note;
    fit_block["tiss0"].push_back(qj);
  }
  for (const CapacityFit& row : capacity) {
    const Estimate& q = row.capacity_bytes;
    m["Q"].push_back({{"K", row.num_producers}, {"bytes", q.value}, {"ci95", ci95(q)},
                      {"bound", row.bound}, {"knee_V_bytes", row.knee_volume_bytes}, {"constrained", q.constrained}});
    json qj = quality(row.quality);
    qj["K"] = row.num_producers;
    qj["num_points_tested"] = row.num_points_tested;
    qj["num_points_above_knee"] = row.num_points_above_knee;
    qj["note"] = q.note;
    qj["drain_start_V_bytes"] = row.drain_start_volume_bytes;
    qj["floor_lower_bound_bytes"] = number_or_null(row.floor_lower_bound_bytes);
    qj["branch_estimate_bytes"] = number_or_null(row.branch_estimate_bytes);
    fit_block["Q"].push_back(qj);
  }
  fit_block["criteria"] = {{"drain_dominance", options.drain_dominance},
                           {"envelope_tolerance", options.envelope_tolerance},
                           {"plateau_gap_factor", options.plateau_gap_factor},
                           {"knee_margin", options.knee_margin},
                           {"noise_factor", options.noise_factor},
                           {"knee_min_points", options.knee_min_points},
                           {"misfit_floor", options.misfit_floor},
                           {"misfit_sigmas", options.misfit_sigmas},
                           {"floor_conflict_sigmas", options.floor_conflict_sigmas},
                           {"knee_shape_sigmas", options.knee_shape_sigmas},
                           {"min_stream_bytes", options.min_stream_bytes},
                           {"min_zero_gap_volume_bytes", options.min_zero_gap_volume_bytes},
                           {"path_rate_limit_Bps", options.path_rate_limit_bps > 0 ? json(options.path_rate_limit_bps) : json()},
                           {"path_rate_tolerance", options.path_rate_tolerance}};
  fit_block["bootstrap"] = {{"resamples", options.bootstrap_resamples}, {"seed", options.seed},
                            {"scheme", "points+repetitions: each replicate redraws, with replacement, the points of "
                                       "each stage's group (R's drain cluster, each T_iss^0 plateau, each Q(K) drain "
                                       "branch) and every used point's per-repetition samples (median); one joint "
                                       "replicate feeds its R into its Q; point selection fixed; percentile "
                                       "2.5-97.5%; an estimate on a single point or with identical replicates gets "
                                       "ci95 null and a note 'no interval: ...'; a single isolated floor point's "
                                       "interval is widened to the floor's between-point scatter; R's spans the "
                                       "isolated branches' slope interval where the two disagree"}};
  fit_block["notes"] = notes;
  m["fit"] = std::move(fit_block);
  return m;
}

}  // namespace xs::fit
