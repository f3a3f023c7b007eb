// xstage fit layer: the interference term's fit (see interference.hpp). Point selection (regimes, the
// reference burst volume, presence of a wait) is decided once from the point medians; the estimator below is
// then replayed on bootstrap replicates (points redrawn within each group, repetitions redrawn within each
// point: the bootstrap.hpp scheme), and detail::set_ci95 gives the expanded percentile intervals.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"
#include "xs/fit/bootstrap.hpp"
#include "xs/fit/interference.hpp"

namespace xs::fit {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t x = (state += 0x9e3779b97f4a7c15ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
std::size_t draw(std::uint64_t& rng, std::size_t n) { return static_cast<std::size_t>(((splitmix64(rng) >> 32) * n) >> 32); }

// Point values one estimate is computed from (medians, or one replicate) and each obs's multiplicity.
struct Values {
  std::vector<double> slowdown, baseline_s, issue_rate_bps;
  std::vector<int> count;
};

double counted_median(const std::vector<int>& idx, const std::vector<double>& v, const std::vector<int>& count) {
  std::vector<double> x;
  for (int i : idx)
    for (int c = 0; c < count[i]; ++c) x.push_back(v[i]);
  return x.empty() ? kNaN : median(x);
}

// The plan: decided from the medians, fixed across replicates.
struct Plan {
  std::vector<int> rate, free, full;  // obs indices
  bool rate_lower_bound = false;      // no G = 0 point: R >= the largest issue rate
  bool wait_present = true;           // false: the "no wait" branch (W ~ 0, gamma not identified)
  double k_ref = 0;
  int num_k = 0;                      // distinct K among `full`
};

struct Est {
  double drain_rate_bps = kNaN, free_slowdown = kNaN, free_log_sd = kNaN, free_trend = kNaN;
  double wait_s = kNaN, k_exponent = kNaN, misfit_log_sd = kNaN;
};

Est estimate(const std::vector<LoadedObs>& obs, const Plan& plan, const Values& v) {
  Est e;
  e.drain_rate_bps = plan.rate_lower_bound ? [&] {
    double m = 0;
    for (int i : plan.rate) if (v.count[i] > 0) m = std::max(m, v.issue_rate_bps[i]);
    return m;
  }() : counted_median(plan.rate, v.issue_rate_bps, v.count);
  // Free: median slowdown, log scatter, and the slope of s against rho/R (counted least squares).
  e.free_slowdown = plan.free.empty() ? 1.0 : counted_median(plan.free, v.slowdown, v.count);
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, ss = 0;
  for (int i : plan.free) {
    const double c = v.count[i], x = obs[i].load_bps / e.drain_rate_bps, y = v.slowdown[i];
    n += c; sx += c * x; sy += c * y; sxx += c * x * x; sxy += c * x * y;
    ss += c * std::pow(std::log(y / e.free_slowdown), 2);
  }
  e.free_log_sd = n > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
  const double det = n * sxx - sx * sx;
  e.free_trend = n > 2 && det > 1e-12 * n * n ? (n * sxy - sx * sy) / det : kNaN;
  // Full: W_i = (s_i - s_free) T0_i.
  std::vector<double> lw, lk, w;
  std::vector<int> c;
  for (int i : plan.full) {
    if (v.count[i] == 0) continue;
    const double wi = (v.slowdown[i] - e.free_slowdown) * v.baseline_s[i];
    for (int k = 0; k < v.count[i]; ++k) w.push_back(wi);
    if (plan.wait_present) {
      if (!(wi > 0)) return e;  // a replicate the log form cannot take: dropped (NaN)
      lw.push_back(std::log(wi));
      lk.push_back(std::log(obs[i].num_sms / plan.k_ref));
      c.push_back(v.count[i]);
    }
  }
  if (w.empty()) return e;
  if (!plan.wait_present) {
    e.wait_s = median(w);
    e.k_exponent = 0;
    e.misfit_log_sd = 0;
    return e;
  }
  double m = 0, mx = 0, my = 0, mxx = 0, mxy = 0;
  for (std::size_t j = 0; j < lw.size(); ++j) {
    m += c[j]; mx += c[j] * lk[j]; my += c[j] * lw[j]; mxx += c[j] * lk[j] * lk[j]; mxy += c[j] * lk[j] * lw[j];
  }
  const double d = m * mxx - mx * mx;
  const bool slope = plan.num_k >= 2 && d > 1e-12 * m * m;
  const double g = slope ? (m * mxy - mx * my) / d : 0.0;
  const double a = (my - g * mx) / m;
  double rss = 0;
  for (std::size_t j = 0; j < lw.size(); ++j) rss += c[j] * std::pow(lw[j] - a - g * lk[j], 2);
  const double dof = m - (slope ? 2 : 1);
  e.wait_s = std::exp(a);
  e.k_exponent = slope ? g : kNaN;
  e.misfit_log_sd = dof > 0 ? std::sqrt(rss / dof) : kNaN;
  return e;
}

// Replays `estimate` on `resamples` replicates: repetitions redrawn within every point (slowdown and T0 of one
// repetition together), points redrawn as cases within each group (rate, free, full). Returns the draws per
// estimate field, in Est order; `dropped` counts replicates without a finite wait.
std::vector<std::vector<double>> bootstrap(const std::vector<LoadedObs>& obs, const Plan& plan, const Values& med,
                                           int resamples, std::uint64_t seed, int* dropped) {
  std::vector<std::vector<double>> draws(7);
  const std::vector<std::vector<int>> groups = {plan.rate, plan.free, plan.full};
  for (int b = 0; b < resamples; ++b) {
    std::uint64_t rng = seed ^ (0xd1b54a32d192ed03ULL * static_cast<std::uint64_t>(b + 1));
    Values v = med;
    for (std::size_t i = 0; i < obs.size(); ++i) {
      const auto& s = *obs[i].slowdown_samples;
      const auto& t = *obs[i].baseline_samples;
      const auto& r = *obs[i].issue_rate_samples;
      std::vector<double> sd, bs, rr;
      for (std::size_t k = 0; k < s.size(); ++k) {
        const std::size_t j = draw(rng, s.size());
        sd.push_back(s[j]);
        bs.push_back(t[std::min(j, t.size() - 1)]);
        if (!r.empty()) rr.push_back(r[std::min(j, r.size() - 1)]);
      }
      v.slowdown[i] = median(sd);
      v.baseline_s[i] = median(bs);
      if (!rr.empty()) v.issue_rate_bps[i] = median(rr);
    }
    for (const auto& g : groups) {
      for (int i : g) v.count[i] = 0;
      for (std::size_t d = 0; d < g.size(); ++d) ++v.count[g[draw(rng, g.size())]];
    }
    const Est e = estimate(obs, plan, v);
    if (dropped && !plan.full.empty() && !std::isfinite(e.wait_s)) ++*dropped;
    const double vals[7] = {e.drain_rate_bps, e.free_slowdown, e.free_log_sd, e.free_trend,
                            e.wait_s, e.k_exponent, e.misfit_log_sd};
    for (int p = 0; p < 7; ++p) draws[p].push_back(vals[p]);
  }
  return draws;
}

detail::Interval percentile95(const std::vector<double>& draws) {
  std::vector<double> d;
  for (double x : draws) if (std::isfinite(x)) d.push_back(x);
  if (d.empty()) return {kNaN, kNaN};
  return {quantile(d, 0.025), quantile(d, 0.975)};
}

std::string block_of(const PointSpec& s) {
  return fmt::format("K{}_B{}_{}_{}_{}", s.num_producers, s.bytes_per_producer, working_set_name(s.loaded.working_set),
                     mainloop_name(s.loaded.mainloop), address_mode_name(s.address_mode));
}

model::InterferenceParameter param(const std::string& name, double value, double lo, double hi, bool constrained,
                                   const std::string& note) {
  return {name, value, lo, hi, constrained, note};
}
model::InterferenceParameter constant(const std::string& name, double value, const std::string& note) {
  return {name, value, value, value, true, note};
}
model::InterferenceParameter from_estimate(const std::string& name, const Estimate& e) {
  return {name, e.value, e.ci95_lo, e.ci95_hi, e.constrained, e.note};
}

// True for a point the term is fitted on: a paced (open-loop) loaded point that ran and was measured (the
// epilogue mode's closed loop is not the term's form).
bool usable_paced(const PointRecord& p) {
  return p.spec.suite == Suite::kLoaded && p.spec.loaded.injection == Injection::kPaced && !p.skipped && p.loaded;
}

// The target to fit: options.target, else the one remote target the usable points name; empty when they name
// only the local control. Throws when no point is usable, or when several remote targets leave the choice open.
std::string choose_target(const std::vector<PointRecord>& points, const InterferenceFitOptions& options) {
  std::set<std::string> remote;
  bool any_local = false;
  for (const auto& p : points) {
    if (!usable_paced(p)) continue;
    if (p.spec.target == "local") any_local = true; else remote.insert(p.spec.target);
  }
  if (remote.empty() && !any_local) throw input_error("points", "no usable remote_store.loaded point to fit the interference term");
  if (!options.target.empty()) return options.target;
  if (remote.size() > 1) throw input_error("target", "the loaded points name several remote targets; choose one");
  return remote.size() == 1 ? *remote.begin() : std::string();
}

// One usable point as an observation: its configuration, per-repetition samples and medians (load_bps is set
// later, against the fitted R).
LoadedObs obs_of(const PointRecord& p, std::size_t idx) {
  const LoadedMeasurement& m = *p.loaded;
  LoadedObs o;
  o.point_idx = idx;
  o.block = block_of(p.spec);
  o.num_sms = p.spec.num_producers;
  o.burst_bytes = p.spec.bytes_per_producer;
  o.gap_s = p.spec.gap_s;
  o.offered_bps = p.spec.gap_s > 0 ? o.num_sms * static_cast<double>(o.burst_bytes) / p.spec.gap_s
                                   : std::numeric_limits<double>::infinity();
  o.operands_in_l2 = p.spec.loaded.working_set == WorkingSet::kL2;
  o.wgmma = p.spec.loaded.mainloop == Mainloop::kWgmma;
  o.k_blocks_per_tile = p.spec.loaded.k_elems / 64;
  o.slowdown_samples = &m.slowdown.samples;
  o.baseline_samples = &m.baseline_tile_time_s.samples;
  o.issue_rate_samples = &m.issue_rate_bps.samples;
  const double cap_bytes = o.num_sms * static_cast<double>(p.spec.num_bursts) * static_cast<double>(o.burst_bytes);
  for (double b : m.bytes_issued.samples) o.reps_at_cap += b >= (1 - 1e-9) * cap_bytes;
  o.slowdown = m.slowdown.median;
  o.baseline_s = m.baseline_tile_time_s.median;
  o.issue_rate_bps = m.issue_rate_bps.median;
  return o;
}

// Fills fit.obs with the usable points of fit.target; a point left out (wrong data, missing medians) gets a note.
void collect_obs(const std::vector<PointRecord>& points, InterferenceFit& fit) {
  for (std::size_t idx = 0; idx < points.size(); ++idx) {
    const PointRecord& p = points[idx];
    if (!usable_paced(p) || p.spec.target != fit.target) continue;
    const LoadedMeasurement& m = *p.loaded;
    if (p.verification.checked && p.verification.wrong > 0) {
      fit.notes.push_back(fmt::format("point {} left out: wrong data", idx));
      continue;
    }
    if (!(m.slowdown.median > 0) || !(m.baseline_tile_time_s.median > 0) || !(m.issue_rate_bps.median > 0) ||
        m.slowdown.samples.empty() || m.baseline_tile_time_s.samples.empty()) {
      fit.notes.push_back(fmt::format("point {} left out: non-positive or missing loaded medians", idx));
      continue;
    }
    fit.obs.push_back(obs_of(p, idx));
  }
}

// The fit as returned when the term is not identified: status set, `why` says what the data lack or contradict.
InterferenceFit not_identified(InterferenceFit&& fit, const std::string& why) {
  fit.term.status = model::InterferenceStatus::kNotIdentified;
  fit.term.why = why;
  return std::move(fit);
}

// The point medians as one estimate's Values, each point counted once.
Values point_medians(const std::vector<LoadedObs>& obs) {
  Values med;
  for (const auto& o : obs) {
    med.slowdown.push_back(o.slowdown);
    med.baseline_s.push_back(o.baseline_s);
    med.issue_rate_bps.push_back(o.issue_rate_bps);
    med.count.push_back(1);
  }
  return med;
}

// R's points (plan.rate): the G = 0 points that saturate the path. A G = 0 point whose issue rate stays below
// (1 - knee_band) x the fastest one is issue-limited (too few SMs to fill the path) and says nothing about R.
// Without a G = 0 point every point is used, and R is a lower bound.
void select_rate_points(InterferenceFit& fit, double knee_band, Plan& plan) {
  const auto& obs = fit.obs;
  double fastest_bps = 0;
  for (const auto& o : obs)
    if (o.gap_s == 0) fastest_bps = std::max(fastest_bps, o.issue_rate_bps);
  for (int i = 0; i < static_cast<int>(obs.size()); ++i)
    if (obs[i].gap_s == 0 && obs[i].issue_rate_bps >= (1 - knee_band) * fastest_bps) plan.rate.push_back(i);
  if (plan.rate.empty()) {
    plan.rate_lower_bound = true;
    for (int i = 0; i < static_cast<int>(obs.size()); ++i) plan.rate.push_back(i);
    fit.notes.push_back("no G = 0 point: R is bounded below by the largest issue rate");
  }
}

// Places every point against r0 (R from the medians): sets its load_bps, fit.regime and plan.free. Returns the
// number of full-path points at each burst volume B.
std::map<std::uint64_t, int> classify_regimes(InterferenceFit& fit, double r0, double knee_band, Plan& plan) {
  std::map<std::uint64_t, int> full_by_b;
  for (auto& o : fit.obs) {
    // Where the path is: the offered rate against R, unless the point could not issue that fast (an unpaced
    // point on too few SMs issues below R and never fills the path).
    o.load_bps = o.issue_rate_bps < (1 - knee_band) * r0 ? std::min(o.offered_bps, o.issue_rate_bps) : o.offered_bps;
    const double x = o.load_bps / r0;
    fit.regime.push_back(x >= 1 + knee_band ? LoadRegime::kFull
                         : x <= 1 - knee_band ? LoadRegime::kFree : LoadRegime::kKnee);
    if (fit.regime.back() == LoadRegime::kFull) ++full_by_b[o.burst_bytes];
  }
  for (int i = 0; i < static_cast<int>(fit.obs.size()); ++i)
    if (fit.regime[i] == LoadRegime::kFree) plan.free.push_back(i);
  return full_by_b;
}

// The wait fit's points (plan.full): the full-path points at the most common burst volume, which becomes
// fit.reference_burst_bytes (the others get a note); K_ref is their geometric mean K. Returns why the term is
// not identified, if too few full-path points were measured.
std::optional<std::string> select_full_points(InterferenceFit& fit, const std::map<std::uint64_t, int>& full_by_b,
                                              Plan& plan) {
  const auto& obs = fit.obs;
  if (full_by_b.empty()) return "no point offers more than R (1 + knee_band): a full path was never measured";
  fit.reference_burst_bytes = std::max_element(full_by_b.begin(), full_by_b.end(), [](auto& a, auto& b) {
                                return a.second < b.second;
                              })->first;
  std::set<int> ks;
  double sum_log_k = 0;
  for (int i = 0; i < static_cast<int>(obs.size()); ++i) {
    if (fit.regime[i] != LoadRegime::kFull) continue;
    if (obs[i].burst_bytes != fit.reference_burst_bytes) {
      fit.notes.push_back(fmt::format("full-path point {} ({}) not in the wait fit: B = {} B, the fit's is {} B",
                                      obs[i].point_idx, obs[i].block, obs[i].burst_bytes, fit.reference_burst_bytes));
      continue;
    }
    plan.full.push_back(i);
    ks.insert(obs[i].num_sms);
    sum_log_k += std::log(obs[i].num_sms);
  }
  plan.num_k = static_cast<int>(ks.size());
  plan.k_ref = std::round(std::exp(sum_log_k / plan.full.size()));
  if (plan.full.size() < 2) return "fewer than 2 full-path points at one burst volume";
  return std::nullopt;
}

// The free regime first: a slowdown that grows with the offered rate below the knee breaks the form, and would
// also inflate the free scatter the presence test is measured against. Then the presence test: a wait is present
// (plan.wait_present) when every full-path point slows the mainloop beyond that scatter, absent when none does.
// Returns why the term is not identified, if the free regime or the full-path points contradict the form.
std::optional<std::string> check_free_regime_and_wait(InterferenceFit& fit, const InterferenceFitOptions& options,
                                                      const Values& med, Plan& plan) {
  const auto& obs = fit.obs;
  const Plan free_plan{plan.rate, plan.free, {}, plan.rate_lower_bound, true, plan.k_ref, 0};
  const Est e0 = estimate(obs, free_plan, med);
  const auto trend_draws = bootstrap(obs, free_plan, med, std::max(0, options.bootstrap_resamples), options.seed, nullptr);
  Estimate trend;
  trend.value = e0.free_trend;
  const detail::Interval iv = percentile95(trend_draws[3]);
  if (std::isfinite(iv.lo)) detail::set_ci95(trend, iv, plan.free.size());
  if (std::isfinite(trend.value) && trend.value > options.max_free_trend && trend.has_ci95() && trend.ci95_lo > 0) {
    fit.term.parameters.push_back(from_estimate("free_trend", trend));
    return fmt::format("below the knee the slowdown grows with the offered rate ({:.3g} per R, 95% "
                       "[{:.3g}, {:.3g}]): the form's flat free regime does not hold", trend.value,
                       trend.ci95_lo, trend.ci95_hi);
  }
  const double threshold = options.presence_sigmas * std::max(e0.free_log_sd, 0.01);
  int above = 0;
  for (int i : plan.full) above += std::log(obs[i].slowdown / e0.free_slowdown) > threshold;
  if (above == static_cast<int>(plan.full.size())) {
    plan.wait_present = true;
  } else if (above == 0) {
    plan.wait_present = false;
  } else {
    return fmt::format("{} of {} full-path points slow the mainloop beyond the free scatter and the "
                       "others do not: contradictory", above, plan.full.size());
  }
  return std::nullopt;
}

// The term's estimates: point values from the medians, 95% intervals from the bootstrap replicates.
struct TermEstimates {
  Est point;
  Estimate rate, free, trend, wait, gamma;
};

// Estimates the term on the final plan and replays it on the bootstrap; notes the replicates dropped for a
// full-path wait <= 0. Gamma is fixed at 0 where there is no wait or a single K.
TermEstimates estimate_term(InterferenceFit& fit, const InterferenceFitOptions& options, const Plan& plan,
                            const Values& med) {
  TermEstimates est;
  est.point = estimate(fit.obs, plan, med);
  const Est& point = est.point;
  const int resamples = std::max(0, options.bootstrap_resamples);
  int dropped = 0;
  const auto draws = bootstrap(fit.obs, plan, med, resamples, options.seed, &dropped);
  auto make = [&](double value, int p, std::size_t n, const std::string& note) {
    Estimate e;
    e.value = value;
    e.note = note;
    detail::Interval iv = percentile95(draws[p]);
    if (std::isfinite(iv.lo)) detail::set_ci95(e, iv, n); else detail::clear_ci95(e, "no finite replicate");
    return e;
  };
  if (dropped > 0)
    fit.notes.push_back(fmt::format("{} of {} bootstrap replicates had a full-path wait <= 0 (dropped; the wait "
                                    "interval is then too narrow at its low end)", dropped, resamples));

  est.rate = make(point.drain_rate_bps, 0, plan.rate.size(),
                  plan.rate_lower_bound ? "lower bound: no G = 0 point" : "median issue rate of the G = 0 points");
  est.rate.constrained = !plan.rate_lower_bound;
  est.free = make(point.free_slowdown, 1, plan.free.size(), "median slowdown of the points below the knee");
  if (plan.free.empty()) { est.free.constrained = false; est.free.note = "no point below the knee: assumed 1"; }
  est.trend = make(point.free_trend, 3, plan.free.size(), "d s / d(rho/R) below the knee (a check, not used)");
  est.wait = make(point.wait_s, 4, plan.full.size(),
                  plan.wait_present ? "time added per tile on a full path at K_ref"
                                    : "no wait beyond the free scatter: W ~ 0");
  est.gamma = make(point.k_exponent, 5, plan.full.size(), "W ~ K^gamma");
  Estimate& gamma = est.gamma;
  if (!plan.wait_present || plan.num_k < 2) {
    gamma.value = 0;
    gamma.ci95_lo = gamma.ci95_hi = 0;
    gamma.constrained = false;
    gamma.note = plan.wait_present ? "not identified: one K_SM only (the term holds at that K only)"
                                   : "not identified: no wait to scale";
  }
  return est;
}

// What the observations say beyond the fitted parameters: tile times without stores (wgmma mainloop) per
// working set, for callers that give none; the most common tile depth; the K range of the wait fit.
struct TileSummary {
  double t0_l2 = kNaN, t0_hbm = kNaN;
  int n_kb = 0, k_min = 1 << 30, k_max = 0;
};

// Summarizes the observations' tile times, tile depths and the wait fit's K range (see TileSummary).
TileSummary summarize_tiles(const std::vector<LoadedObs>& obs, const Plan& plan) {
  TileSummary s;
  std::vector<double> t_l2, t_hbm;
  std::map<int, int> kb;
  for (const auto& o : obs) {
    if (o.wgmma) (o.operands_in_l2 ? t_l2 : t_hbm).push_back(o.baseline_s);
    ++kb[o.k_blocks_per_tile];
  }
  for (int i : plan.full) { s.k_min = std::min(s.k_min, obs[i].num_sms); s.k_max = std::max(s.k_max, obs[i].num_sms); }
  s.n_kb = std::max_element(kb.begin(), kb.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
  s.t0_l2 = t_l2.empty() ? kNaN : median(t_l2);
  s.t0_hbm = t_hbm.empty() ? kNaN : median(t_hbm);
  return s;
}

// Writes the term's parameters, in the file's order: the fitted ones, then the derived alpha, the free-regime
// check, and the constants that bound where the term was calibrated.
void push_parameters(InterferenceFit& fit, const InterferenceFitOptions& options, const Plan& plan,
                     const TermEstimates& est) {
  const Est& point = est.point;
  const TileSummary tiles = summarize_tiles(fit.obs, plan);
  const double t0_l2 = tiles.t0_l2;
  auto& P = fit.term.parameters;
  P.push_back(from_estimate("drain_rate_Bps", est.rate));
  P.push_back(from_estimate("free_slowdown", est.free));
  P.push_back(param("free_log_sd", point.free_log_sd, kNaN, kNaN, true,
                    "between-point log scatter below the knee (a prediction spread, x exp(+-1.96 sd))"));
  P.push_back(from_estimate("wait_s_at_kref", est.wait));
  P.push_back(constant("k_ref", plan.k_ref, "geometric mean K_SM of the full-path points (centres gamma)"));
  P.push_back(from_estimate("k_exponent", est.gamma));
  P.push_back(param("misfit_log_sd", point.misfit_log_sd, kNaN, kNaN, std::isfinite(point.misfit_log_sd),
                    std::isfinite(point.misfit_log_sd) ? "log scatter of the full-path waits about W(K) (residual sd)"
                                                       : "not identified: as many parameters as points"));
  {
    Estimate alpha;
    alpha.value = point.wait_s / t0_l2;
    alpha.ci95_lo = est.wait.ci95_lo / t0_l2;
    alpha.ci95_hi = est.wait.ci95_hi / t0_l2;
    alpha.constrained = est.wait.constrained && std::isfinite(t0_l2);
    P.push_back(param("alpha_at_kref", alpha.value, alpha.ci95_lo, alpha.ci95_hi, alpha.constrained,
                      "W_ref / T0(L2): the full path's extra slowdown of the calibrated L2 tile at K_ref (derived)"));
  }
  P.push_back(from_estimate("free_trend", est.trend));
  P.push_back(constant("knee_band", options.knee_band, "criterion: abs(rho/R - 1) below it is the knee (u unknown)"));
  P.push_back(constant("k_min", tiles.k_min, "smallest K_SM in the wait fit"));
  P.push_back(constant("k_max", tiles.k_max, "largest K_SM in the wait fit"));
  P.push_back(constant("burst_bytes_per_sm", static_cast<double>(fit.reference_burst_bytes),
                       "B of the full-path points the wait was fitted at"));
  P.push_back(constant("k_blocks_per_tile", tiles.n_kb, "64-wide k-blocks per calibrated tile"));
  P.push_back(constant("tile_time_s_l2", t0_l2, "median T0 of the wgmma points with L2-resident operands"));
  P.push_back(constant("tile_time_s_hbm", tiles.t0_hbm, "median T0 of the wgmma points with HBM-streamed operands"));
}

// The verdict: identified, unless the wait comes from censored points (burst cap; its parameters are then
// marked lower bounds) or the full-path waits scatter about W(K) beyond max_misfit_log_sd. Returns why the term
// is not identified, if it is not; notes censored points read as measured, and a term without a wait.
std::optional<std::string> verdict(InterferenceFit& fit, const InterferenceFitOptions& options, const Plan& plan,
                                   const Est& point) {
  fit.term.status = model::InterferenceStatus::kIdentified;
  int num_censored = 0;
  for (int i : plan.full) num_censored += fit.obs[i].censored();
  if (num_censored > 0 && !options.censored_as_measured) {
    for (auto& p : fit.term.parameters)
      if (p.name == "wait_s_at_kref" || p.name == "k_exponent" || p.name == "alpha_at_kref" || p.name == "misfit_log_sd") {
        p.constrained = false;
        p.note += "; from censored points (burst cap): W is a lower bound";
      }
    return fmt::format(
        "{} of {} full-path points reached the burst cap (every CTA issued num_bursts bursts before its mainloop "
        "ended): their slowdowns mix loaded and unloaded tiles and are lower bounds, so W(K) is only bounded below "
        "(W_ref >= {:.3g} s at K_ref {:g}, gamma {:.3g}); re-measure with the cap sized from the mainloop",
        num_censored, plan.full.size(), point.wait_s, plan.k_ref, point.k_exponent);
  }
  if (num_censored > 0)
    fit.notes.push_back(fmt::format("{} of {} full-path points are censored (burst cap) and read as measured "
                                    "(censored_as_measured): W is a lower bound", num_censored, plan.full.size()));
  if (plan.wait_present && std::isfinite(point.misfit_log_sd) && point.misfit_log_sd > options.max_misfit_log_sd)
    return fmt::format("the full-path waits scatter about W(K) by a log sd of {:.3g} > {:.3g}: the "
                       "points contradict the form", point.misfit_log_sd, options.max_misfit_log_sd);
  if (!plan.wait_present) fit.notes.push_back("no full-path wait beyond the free scatter: the term is s_free at every load");
  return std::nullopt;
}

}  // namespace

const char* load_regime_name(LoadRegime regime) {
  switch (regime) {
    case LoadRegime::kFree: return "free";
    case LoadRegime::kKnee: return "knee";
    case LoadRegime::kFull: return "full";
  }
  return "?";
}

bool has_loaded_points(const std::vector<PointRecord>& points) {
  return std::any_of(points.begin(), points.end(),
                     [](const PointRecord& p) {
                       return p.spec.suite == Suite::kLoaded && p.spec.loaded.injection == Injection::kPaced &&
                              !p.skipped && p.loaded;
                     });
}

InterferenceFit fit_interference(const std::vector<PointRecord>& points, const InterferenceFitOptions& options) {
  InterferenceFit fit;
  fit.options = options;
  fit.term.form = model::kFullPathWaitForm;
  // ---- the usable points and the target
  fit.target = choose_target(points, options);
  if (fit.target.empty() || fit.target == "local") {
    fit.target = "local";
    fit.term.status = model::InterferenceStatus::kNotIdentified;
    fit.term.why = "only the local control (stores to HBM) was measured: there is no remote path, no R, and no "
                   "full-path wait to fit";
    return fit;
  }
  collect_obs(points, fit);
  if (fit.obs.empty()) return not_identified(std::move(fit), "no usable loaded point of target " + fit.target);

  // ---- plan: R from the unpaced points, regimes, reference B, presence of a wait
  Plan plan;
  select_rate_points(fit, options.knee_band, plan);
  const Values med = point_medians(fit.obs);
  const double r0 = estimate(fit.obs, plan, med).drain_rate_bps;
  const auto full_by_b = classify_regimes(fit, r0, options.knee_band, plan);
  if (auto why = select_full_points(fit, full_by_b, plan)) return not_identified(std::move(fit), *why);
  if (auto why = check_free_regime_and_wait(fit, options, med, plan)) return not_identified(std::move(fit), *why);
  fit.free_used = plan.free;
  fit.full_used = plan.full;
  fit.rate_used = plan.rate;

  // ---- estimates and the bootstrap, the parameters, the verdict
  const TermEstimates est = estimate_term(fit, options, plan, med);
  push_parameters(fit, options, plan, est);
  if (auto why = verdict(fit, options, plan, est.point)) return not_identified(std::move(fit), *why);
  return fit;
}

model::LoadState load_state_of(const LoadedObs& o, const model::InterferenceTerm& term) {
  model::LoadState s;
  s.offered_rate_bps = o.load_bps > 0 ? o.load_bps : o.offered_bps;
  const auto* r = term.find("drain_rate_Bps");
  s.drain_rate_bps = r ? r->value : 0;
  s.num_sms = o.num_sms;
  s.operands_in_l2 = o.operands_in_l2;
  s.tile_time_s = o.baseline_s;
  s.k_blocks_per_tile = o.k_blocks_per_tile;
  s.burst_bytes_per_sm = static_cast<double>(o.burst_bytes);
  return s;
}

}  // namespace xs::fit
