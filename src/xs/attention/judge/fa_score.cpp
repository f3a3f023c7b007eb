// xstage attention judge layer: scoring (see fa_score.hpp).
#include "xs/attention/judge/fa_score.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>


namespace xs::attention::judge {
namespace {

using nlohmann::json;
json number(double x) { return std::isfinite(x) ? json(x) : json(); }
std::string us(double s) { return std::isfinite(s) ? fmt::format("{:.1f} us", s * 1e6) : std::string("inf"); }

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double quantile_sorted(const std::vector<double>& v, double q) {  // linear between order statistics
  const double x = q * (v.size() - 1);
  const std::size_t i = static_cast<std::size_t>(std::floor(x));
  const std::size_t j = std::min(i + 1, v.size() - 1);
  return v[i] + (x - i) * (v[j] - v[i]);
}

// Rule v5: the measured interval as an interval of E_res >= 0, with the residual's tolerance (20% of |median|
// until set_decisiveness gives T_FA).
void map_to_e_res(MeasuredResidual& m) {
  m.below_zero = m.median_ci95.hi < 0;
  m.e_res_ci95 = {std::max(m.median_ci95.lo, 0.0), std::max(m.median_ci95.hi, 0.0)};
  if (m.median_ci95.lo < 0) m.e_res_ci95.hi = std::max(m.e_res_ci95.hi, m.tolerance_s);
}

}  // namespace

MeasuredResidual measured_residual(const std::vector<double>& rounds_s, const std::string& boundary) {
  MeasuredResidual m;
  m.boundary = boundary;
  m.num_rounds = static_cast<int>(rounds_s.size());
  if (m.num_rounds < kMinRounds) {
    m.why_not = fmt::format("{} paired rounds at the {} boundary; at least {} are needed for the median's interval",
                            m.num_rounds, boundary, kMinRounds);
    return m;
  }
  m.measured = true;
  m.median_s = median_of(rounds_s);
  // Percentile bootstrap of the median over rounds, a fixed seed: the same file re-judges identically.
  constexpr int kResamples = 4000;
  std::mt19937_64 rng(0x5eed'fa'a2aULL);
  std::uniform_int_distribution<std::size_t> pick(0, rounds_s.size() - 1);
  std::vector<double> medians(kResamples), draw(rounds_s.size());
  for (double& med : medians) {
    for (double& d : draw) d = rounds_s[pick(rng)];
    med = median_of(draw);
  }
  std::sort(medians.begin(), medians.end());
  m.median_ci95 = {quantile_sorted(medians, 0.025), quantile_sorted(medians, 0.975)};
  m.tolerance_s = kDecisiveRelative * std::abs(m.median_s);  // until set_decisiveness gives T_FA
  map_to_e_res(m);
  return m;
}

void set_decisiveness(MeasuredResidual& m, double t_fa_s) {
  if (!m.measured) return;
  m.tolerance_s = std::max(kDecisiveRelative * std::abs(m.median_s), t_fa_s > 0 ? kDecisiveOfTfa * t_fa_s : 0.0);
  const double half_width = 0.5 * (m.median_ci95.hi - m.median_ci95.lo);
  m.decisive = half_width <= m.tolerance_s;
  map_to_e_res(m);
}

double interval_score(const Interval& p, double y) {
  if (std::isnan(p.lo) || std::isnan(p.hi) || std::isnan(y)) return NAN;
  if (!std::isfinite(p.hi) || !std::isfinite(p.lo)) return INFINITY;
  const double k = 2 / kIntervalScoreAlpha;
  return (p.hi - p.lo) + k * std::max(0.0, p.lo - y) + k * std::max(0.0, y - p.hi);
}

MeasuredResidual measured_residual(const FaA2aPointResult& r) {
  const FaBoundary b = judged_boundary(r);
  return measured_residual(b.e_res->samples, b.name);
}

Outcome score(const Interval& pred, double point_s, bool decided, const std::string& why_not_decided,
              const MeasuredResidual& m) {
  Outcome o;
  if (!m.measured) {
    o.reason = "not measured: " + m.why_not;
    return o;
  }
  if (std::isfinite(point_s)) {
    o.point_error_s = point_s - m.median_s;
    o.relative_error = m.median_s != 0 ? o.point_error_s / std::abs(m.median_s) : NAN;
  }
  std::string measured = fmt::format("measured E_res {} (median of {} rounds at the {} boundary; its 95% "
                                     "interval {} .. {})", us(m.median_s), m.num_rounds, m.boundary,
                                     us(m.median_ci95.lo), us(m.median_ci95.hi));
  if (m.median_ci95.lo < 0)
    measured += fmt::format(", judged as E_res in {} .. {} (E_res >= 0; below zero the launches' own variation shows, "
                            "so nothing under the tolerance {} is resolved)", us(m.e_res_ci95.lo), us(m.e_res_ci95.hi),
                            us(m.tolerance_s));
  o.interval_decided = decided;
  // Rule v5's ranking: every measured row; no interval scores inf (abstaining is not rewarded).
  o.interval_score_s = std::isnan(pred.lo) || std::isnan(pred.hi) ? INFINITY : interval_score(pred, std::max(m.median_s, 0.0));
  o.ranked = true;
  if (std::isnan(pred.lo) || std::isnan(pred.hi)) {  // no interval at all: nothing to agree or disagree with
    o.result = "not decided";
    o.interval_decided = false;
    o.reason = "no predicted interval: " + why_not_decided + "; " + measured;
    return o;
  }
  // Disjoint intervals refute the prediction whatever its width; only a decided one can agree.
  // Rule v5: judged against the measured interval as an interval of E_res >= 0 (map_to_e_res; a residual never
  // given a T_FA maps with the tolerance 20% of |median|).
  const Interval e = m.e_res_ci95;
  const bool meets = pred.hi >= e.lo && pred.lo <= e.hi;
  if (!meets) {
    o.result = "disagrees";
    o.direction = pred.hi < e.lo ? "under" : "over";
  } else {
    o.result = decided ? "agrees" : "not decided";
  }
  o.on_a_wide_measurement = !m.decisive;
  const std::string predicted = fmt::format("predicted {} .. {}{}", us(pred.lo), us(pred.hi),
                                            std::isfinite(point_s) ? fmt::format(" (point {})", us(point_s)) : std::string());
  const std::string verdict = meets ? "the intervals meet"
                                    : (o.direction == "under" ? "predicted below the measurement"
                                                              : "predicted above the measurement");
  const std::string wide = !m.decisive
      ? fmt::format(" (a wide measurement: its half-width {} exceeds the tolerance {}, the max of 20% of the median "
                    "and 1% of T_FA, so it could not have refuted a near miss)",
                    us(0.5 * (m.median_ci95.hi - m.median_ci95.lo)), us(m.tolerance_s))
      : std::string();
  if (decided)
    o.reason = fmt::format("{}; {}: {}{}", predicted, measured, verdict, meets ? wide : std::string());
  else if (meets)
    o.reason = fmt::format("the model decides nothing here: {}; {}; {}: the intervals meet{}", why_not_decided,
                           predicted, measured, wide);
  else
    o.reason = fmt::format("{}, an interval too wide to agree ({}), yet {}; {}: the measurement refutes it",
                           predicted, why_not_decided, verdict, measured);
  return o;
}

double Tally::median_interval_score_s() const {
  if (interval_scores_s.empty()) return NAN;
  std::vector<double> v = interval_scores_s;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void Tally::add(const Outcome& o) {
  if (o.ranked) interval_scores_s.push_back(o.interval_score_s);
  if (o.result == "agrees") {
    ++agrees;
    agrees_wide_measurement += o.on_a_wide_measurement;
  } else if (o.result == "disagrees") {
    ++disagrees;
    disagrees_wide += !o.interval_decided;
  }
  else if (o.result == "not decided") ++not_decided;
  else ++not_measured;
}

json Tally::to_json() const {
  return {{"agrees", agrees}, {"disagrees", disagrees}, {"not_decided", not_decided}, {"not_measured", not_measured},
          {"agrees_on_a_wide_measurement", agrees_wide_measurement},
          {"disagrees_with_a_wide_interval", disagrees_wide},
          {"interval_score_median_s",
           std::isinf(median_interval_score_s()) ? json("inf") : number(median_interval_score_s())},
          {"interval_score_rows", interval_scores_s.size()},
          {"interval_score_unbounded_rows",
           std::count_if(interval_scores_s.begin(), interval_scores_s.end(), [](double x) { return std::isinf(x); })}};
}

json to_json(const MeasuredResidual& m) {
  return {{"measured", m.measured}, {"boundary", m.boundary}, {"num_rounds", m.num_rounds},
          {"median_s", m.measured ? json(m.median_s) : json()},
          {"median_ci95_s", m.measured ? json::array({m.median_ci95.lo, m.median_ci95.hi}) : json()},
          {"method", "percentile bootstrap of the median over the paired (fused - FA-only) rounds, wall time"},
          {"decisive", m.measured ? json(m.decisive) : json()},
          {"decisive_tolerance_s", m.measured ? json(m.tolerance_s) : json()},
          {"below_zero", m.measured ? json(m.below_zero) : json()},
          {"e_res_ci95_s", m.measured ? json::array({m.e_res_ci95.lo, m.e_res_ci95.hi}) : json()},
          {"why_not", m.why_not.empty() ? json() : json(m.why_not)}};
}

json to_json(const Outcome& o) {
  return {{"result", o.result.empty() ? json() : json(o.result)},
          {"direction", o.direction.empty() ? json() : json(o.direction)}, {"reason", o.reason},
          {"point_error_s", number(o.point_error_s)}, {"relative_error", number(o.relative_error)},
          {"interval_decided", o.result.empty() ? json() : json(o.interval_decided)},
          {"interval_score_s", std::isinf(o.interval_score_s) ? json("inf") : number(o.interval_score_s)},
          {"interval_score_ranked", o.result.empty() ? json() : json(o.ranked)},
          {"on_a_wide_measurement", o.result.empty() ? json() : json(o.on_a_wide_measurement)}};
}

}  // namespace xs::attention::judge
