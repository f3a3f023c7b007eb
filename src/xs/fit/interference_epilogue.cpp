// xstage fit layer: the epilogue_per_byte interference term (see interference_epilogue.hpp).
//
// Identification (what the term claims, and when it refuses to):
//   - fewer than 3 points: not identified;
//   - one K only: gamma is fixed at 0 and named "not identified" (a constant a(K));
//   - fewer than 2 slowed points (T / T0 - 1 > min_effect) at different V: gamma fixed at 0 too; a keeps its
//     bootstrap interval (an upper bound in practice) — the term then says the stores cost little, with the
//     bound it can support;
//   - the drain rate R_eff is a fitted parameter but is "identified" only where some point is drain-bound in
//     >= 95% of the bootstrap draws; the term does not use it (the replay's own R and Q time the drain);
//   - only a point slowed and off the drain branch informs a(K): such points at fewer than 2 V make the term
//     "not identified" (a per-byte cost cannot be told from a per-tile one), at fewer than 2 K fix gamma at 0;
//   - held-out (leave one K out, leave one V out) median |error| above max_held_out_error: the data contradict
//     the law, and the term is "not identified" with the figures in `why`.
#include "xs/fit/interference_epilogue.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"

namespace xs::fit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Pt {
  int k = 0;
  double v = 0, t0 = 0, t = 0;
};

struct Law {
  double a_ref = 0, gamma = 0, r = kInf, sse = kInf;
};

double predict(const Law& l, double k_ref, const Pt& p) {
  const double issue = p.t0 + l.a_ref * std::pow(p.k / k_ref, l.gamma) * p.v;
  const double drain = std::isfinite(l.r) ? p.k * p.v / l.r : 0.0;
  return std::max(issue, drain);
}

double sse_of(const Law& l, double k_ref, const std::vector<Pt>& pts) {
  double s = 0;
  for (const auto& p : pts) {
    const double e = std::log(predict(l, k_ref, p) / p.t);
    s += e * e;
  }
  return s;
}

// Least squares on log T over gamma (grid, or fixed) x R_eff (log grid and +inf) x a_ref (golden section).
Law fit_law(const std::vector<Pt>& pts, double k_ref, bool fit_gamma) {
  std::vector<double> gammas;
  if (fit_gamma) {
    for (int i = -5; i <= 15; ++i) gammas.push_back(0.1 * i);
  } else {
    gammas.push_back(0.0);
  }
  std::vector<double> rates{kInf};
  for (int i = 0; i <= 60; ++i) rates.push_back(1e9 * std::pow(10.0, 3.0 * i / 60.0));  // 1 GB/s .. 1 TB/s, x1.12
  double a_max = 1e-15;
  for (const auto& p : pts) a_max = std::max(a_max, 4 * std::max(0.0, p.t - p.t0) / p.v);
  Law best;
  for (double g : gammas) {
    double scale = 1;  // a_ref range for this gamma: (K/K_ref)^gamma moves the per-byte cost
    for (const auto& p : pts) scale = std::max(scale, std::pow(k_ref / p.k, g));
    for (double r : rates) {
      double lo = 0, hi = a_max * scale;
      const double phi = 0.5 * (std::sqrt(5.0) - 1);
      Law c{0, g, r, 0};
      auto f = [&](double a) {
        c.a_ref = a;
        return sse_of(c, k_ref, pts);
      };
      double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo), f1 = f(x1), f2 = f(x2);
      for (int it = 0; it < 40; ++it) {
        if (f1 < f2) {
          hi = x2, x2 = x1, f2 = f1, x1 = hi - phi * (hi - lo), f1 = f(x1);
        } else {
          lo = x1, x1 = x2, f1 = f2, x2 = lo + phi * (hi - lo), f2 = f(x2);
        }
      }
      const double a = 0.5 * (lo + hi);
      const double s0 = f(0.0), sa = f(a);
      const Law cand{sa <= s0 ? a : 0.0, g, r, std::min(sa, s0)};
      if (cand.sse < best.sse - 1e-15) best = cand;
    }
  }
  return best;
}

std::uint64_t next(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
std::size_t draw(std::uint64_t& s, std::size_t n) { return static_cast<std::size_t>(next(s) % n); }

double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double x = q * static_cast<double>(v.size() - 1);
  const auto i = static_cast<std::size_t>(x);
  return i + 1 < v.size() ? v[i] + (x - static_cast<double>(i)) * (v[i + 1] - v[i]) : v[i];
}

double med_abs(const std::vector<double>& e, double q = 0.5) {
  std::vector<double> a;
  for (double x : e)
    if (std::isfinite(x)) a.push_back(std::abs(x));
  return a.empty() ? std::numeric_limits<double>::quiet_NaN() : pct(a, q);
}

model::InterferenceParameter param(const std::string& name, double v, double lo, double hi, bool constrained,
                                   const std::string& note = "") {
  return {name, v, lo, hi, constrained, note};
}

// Whether the law puts point p on its drain branch: K V / R above the issue time T0 + a(K) V.
bool drain_bound(const Law& l, double k_ref, const Pt& p) {
  return std::isfinite(l.r) && p.k * p.v / l.r > p.t0 + l.a_ref * std::pow(p.k / k_ref, l.gamma) * p.v;
}

// The observations as points (K, V, median T0, median T); throws input_error for an invalid observation.
std::vector<Pt> points_of(const std::vector<EpilogueObs>& obs) {
  std::vector<Pt> pts;
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const auto& o = obs[i];
    const std::string path = fmt::format("epilogue point {} ({})", i, o.block);
    if (o.num_sms < 1) throw input_error(path, "K must be >= 1");
    if (!(o.bytes_per_tile > 0)) throw input_error(path, "V (bytes per tile) must be > 0");
    if (o.t_samples.empty() || o.t_samples.size() != o.t0_samples.size())
      throw input_error(path, "needs as many loaded as baseline samples, at least one");
    for (std::size_t j = 0; j < o.t_samples.size(); ++j)
      if (!(o.t_samples[j] > 0) || !(o.t0_samples[j] > 0) || !std::isfinite(o.t_samples[j] + o.t0_samples[j]))
        throw input_error(path, "tile times must be finite and > 0");
    pts.push_back({o.num_sms, o.bytes_per_tile, median(o.t0_samples), median(o.t_samples)});
  }
  return pts;
}

// What the points cover: their K and V (and the V of the slowed ones), the calibrated ranges, and K_ref.
struct Coverage {
  std::set<int> ks;
  std::set<double> vs, slowed_v;
  int k_max = 0, k_min = 1 << 30;
  double v_min = kInf, v_max = 0;
  double x_min = kInf, x_max = 0;  // the law's regressor B / T0 (bytes stored per second of tile time, per CTA)
  double k_ref = 0;
};

// The points' coverage; K_ref is 132 when measured, else the largest K.
Coverage coverage_of(const std::vector<Pt>& pts, double min_effect) {
  Coverage c;
  for (const auto& p : pts) {
    c.x_min = std::min(c.x_min, p.v / p.t0), c.x_max = std::max(c.x_max, p.v / p.t0);
    c.ks.insert(p.k);
    c.vs.insert(p.v);
    if (p.t / p.t0 - 1 > min_effect) c.slowed_v.insert(p.v);
    c.k_max = std::max(c.k_max, p.k), c.k_min = std::min(c.k_min, p.k);
    c.v_min = std::min(c.v_min, p.v), c.v_max = std::max(c.v_max, p.v);
  }
  c.k_ref = c.ks.count(132) ? 132.0 : static_cast<double>(c.k_max);
  return c;
}

// State the stages of fit_epilogue share: the observations and their points, the options, the coverage, and
// whether gamma is fitted.
struct EpilogueSetup {
  const std::vector<EpilogueObs>& obs;
  const EpilogueFitOptions& options;
  std::vector<Pt> pts;
  Coverage cov;
  bool fit_gamma = false;
};

// The K and V of the points that inform a(K). Only a point that is slowed and NOT on the drain branch carries
// information on a(K): a drain-bound point's time is K V / R whatever a is. A first fit classifies the points.
struct Informative {
  std::set<int> k;
  std::set<double> v;
};

Informative informative_points(const EpilogueSetup& s) {
  Informative info;
  const Law pre = fit_law(s.pts, s.cov.k_ref, s.fit_gamma);
  for (const auto& p : s.pts) {
    if (!drain_bound(pre, s.cov.k_ref, p) && p.t / p.t0 - 1 > s.options.min_effect) {
      info.k.insert(p.k);
      info.v.insert(p.v);
    }
  }
  return info;
}

// Notes why gamma is fixed at 0, if it is: one K, flat data, or informative points at one K only (a(K) needs
// such points at >= 2 V, gamma at >= 2 K). Clears s.fit_gamma in the last case.
void settle_gamma(EpilogueSetup& s, const Informative& info, EpilogueFit& out) {
  if (s.cov.ks.size() < 2) out.notes.push_back("one K only: gamma fixed at 0 (not identified)");
  else if (!s.fit_gamma)
    out.notes.push_back(fmt::format("fewer than 2 slowed points at different V (T/T0 - 1 > {:g}): the data are flat; "
                                    "gamma fixed at 0 (not identified) and a is in effect an upper bound",
                                    s.options.min_effect));
  else if (info.k.size() < 2) {
    s.fit_gamma = false;
    out.notes.push_back(fmt::format("slowed points below the drain bound at {} K only: gamma fixed at 0 (not "
                                    "identified); the drain-bound points say nothing about a(K)", info.k.size()));
  }
}

// The bootstrap's 95% percentile intervals of a_ref, gamma and R_eff, and how many replicates had a drain-bound
// point.
struct LawBootstrap {
  double a_lo = 0, a_hi = 0, g_lo = 0, g_hi = 0, r_lo = 0, r_hi = 0;
  int drain_bound_draws = 0;
};

// Bootstrap: points with replacement, one repetition pair per drawn point, each replicate refitted.
LawBootstrap bootstrap_law(const EpilogueSetup& s) {
  const auto& pts = s.pts;
  LawBootstrap out;
  std::uint64_t rng = s.options.seed;
  std::vector<double> a_d, g_d, r_d;
  for (int b = 0; b < s.options.bootstrap_resamples; ++b) {
    std::vector<Pt> bs;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const std::size_t j = draw(rng, pts.size());
      const auto& o = s.obs[j];
      Pt p = pts[j];
      p.t = o.t_samples[draw(rng, o.t_samples.size())];
      p.t0 = o.t0_samples[draw(rng, o.t0_samples.size())];
      bs.push_back(p);
    }
    const Law l = fit_law(bs, s.cov.k_ref, s.fit_gamma);
    a_d.push_back(l.a_ref);
    g_d.push_back(l.gamma);
    r_d.push_back(l.r);
    bool any = false;
    for (const auto& p : bs) any |= drain_bound(l, s.cov.k_ref, p);
    out.drain_bound_draws += any;
  }
  out.a_lo = pct(a_d, 0.025), out.a_hi = pct(a_d, 0.975);
  out.g_lo = pct(g_d, 0.025), out.g_hi = pct(g_d, 0.975);
  out.r_lo = pct(r_d, 0.025), out.r_hi = pct(r_d, 0.975);
  return out;
}

// R_eff and its interval; identified only where some point is drain-bound in >= 95% of the bootstrap draws.
void set_drain_rate(const EpilogueSetup& s, const Law& law, const LawBootstrap& boot, EpilogueFit& out) {
  out.drain_rate_bps = law.r;
  // widened by one step of the rate grid (x1.122) on each side: the fit cannot place R finer than that
  constexpr double kRateStep = 1.1220184543019633;
  out.drain_rate_lo = boot.r_lo / kRateStep;
  out.drain_rate_hi = boot.r_hi * kRateStep;
  out.drain_rate_identified = std::isfinite(law.r) && boot.drain_bound_draws >= 0.95 * s.options.bootstrap_resamples &&
                              std::isfinite(out.drain_rate_hi);
}

// The law refitted without each K and without each V (where >= 3 points remain), for the held-out predictions.
struct HeldOutLaws {
  std::map<int, Law> without_k;
  std::map<double, Law> without_v;
};

HeldOutLaws held_out_laws(const EpilogueSetup& s) {
  HeldOutLaws h;
  for (int k : s.cov.ks) {
    std::vector<Pt> rest;
    for (const auto& p : s.pts)
      if (p.k != k) rest.push_back(p);
    std::set<int> rest_k;
    for (const auto& p : rest) rest_k.insert(p.k);
    if (rest.size() >= 3) h.without_k[k] = fit_law(rest, s.cov.k_ref, s.fit_gamma && rest_k.size() >= 2);
  }
  for (double v : s.cov.vs) {
    std::vector<Pt> rest;
    for (const auto& p : s.pts)
      if (p.v != v) rest.push_back(p);
    if (rest.size() >= 3) h.without_v[v] = fit_law(rest, s.cov.k_ref, s.fit_gamma);
  }
  return h;
}

// Per point: in-sample prediction, and the held-out ones (the law fitted without the point's K / V); then the
// median and p90 |relative errors| of each.
void score_points(const EpilogueSetup& s, const Law& law, EpilogueFit& out) {
  const HeldOutLaws held = held_out_laws(s);
  const double k_ref = s.cov.k_ref, min_effect = s.options.min_effect;
  std::vector<double> e_in, e_k, e_v, e_excess;
  for (std::size_t i = 0; i < s.pts.size(); ++i) {
    const Pt& p = s.pts[i];
    EpiloguePointFit f;
    f.num_sms = p.k;
    f.bytes_per_tile = p.v;
    f.t0_s = p.t0;
    f.t_s = p.t;
    f.block = s.obs[i].block;
    f.predicted_s = predict(law, k_ref, p);
    f.drain_bound = drain_bound(law, k_ref, p);
    e_in.push_back(f.predicted_s / p.t - 1);
    if (auto it = held.without_k.find(p.k); it != held.without_k.end()) {
      f.held_out_k_s = predict(it->second, k_ref, p);
      e_k.push_back(f.held_out_k_s / p.t - 1);
    }
    if (auto it = held.without_v.find(p.v); it != held.without_v.end()) {
      f.held_out_v_s = predict(it->second, k_ref, p);
      e_v.push_back(f.held_out_v_s / p.t - 1);
      if (!f.drain_bound && p.t / p.t0 - 1 > min_effect)
        e_excess.push_back((f.held_out_v_s - p.t0) / (p.t - p.t0) - 1);
    }
    out.num_informative_points += !f.drain_bound && p.t / p.t0 - 1 > min_effect;
    out.points.push_back(f);
  }
  out.in_sample_median_abs_error = med_abs(e_in);
  out.held_out_k_median_abs_error = med_abs(e_k);
  out.held_out_k_p90_abs_error = med_abs(e_k, 0.9);
  out.held_out_v_median_abs_error = med_abs(e_v);
  out.held_out_v_p90_abs_error = med_abs(e_v, 0.9);
  out.held_out_v_excess_median_abs_error = e_excess.empty() ? NAN : med_abs(e_excess);
}

// The term's parameters: the fitted law with its intervals, then the calibrated ranges.
void set_parameters(const EpilogueSetup& s, const Law& law, const LawBootstrap& boot, double misfit,
                    EpilogueFit& out) {
  const Coverage& c = s.cov;
  const bool fit_gamma = s.fit_gamma;
  out.term.parameters = {
      param("cost_s_per_byte_at_kref", law.a_ref, boot.a_lo, boot.a_hi, boot.a_lo > 0,
            boot.a_lo > 0 ? "" : "the interval reaches 0: an upper bound"),
      param("k_ref", c.k_ref, c.k_ref, c.k_ref, true),
      param("k_exponent", law.gamma, fit_gamma ? boot.g_lo : 0.0, fit_gamma ? boot.g_hi : 0.0, fit_gamma,
            fit_gamma ? "" : "not identified: fixed at 0"),
      param("misfit_log_sd", misfit, misfit, misfit, true, "between-point scatter of log T about the law"),
      param("drain_rate_bps", law.r, out.drain_rate_lo, out.drain_rate_hi, out.drain_rate_identified,
            out.drain_rate_identified ? "" : "not identified: no point is drain-bound in >= 95% of the bootstrap"),
      param("k_min", c.k_min, c.k_min, c.k_min, true),
      param("k_max", c.k_max, c.k_max, c.k_max, true),
      param("v_min", c.v_min, c.v_min, c.v_min, true),
      param("v_max", c.v_max, c.v_max, c.v_max, true),
      param("store_load_min_Bps", c.x_min, c.x_min, c.x_min, true, "smallest B / T0 calibrated (per CTA)"),
      param("store_load_max_Bps", c.x_max, c.x_max, c.x_max, true, "largest B / T0 calibrated (per CTA)"),
  };
}

// The verdict: not identified when a's interval reaches 0, when fewer than 2 V inform a(K), or when the law
// misses its held-out points by more than max_held_out_error; identified otherwise.
void set_status(const EpilogueSetup& s, const Informative& info, const LawBootstrap& boot, EpilogueFit& out) {
  const EpilogueFitOptions& options = s.options;
  auto& t = out.term;
  const double held = std::max(std::isfinite(out.held_out_k_median_abs_error) ? out.held_out_k_median_abs_error : 0.0,
                               std::isfinite(out.held_out_v_median_abs_error) ? out.held_out_v_median_abs_error : 0.0);
  if (!(boot.a_lo > 0)) {
    t.status = model::InterferenceStatus::kNotIdentified;
    t.why = fmt::format("the per-byte cost is not identified: its 95% interval reaches 0 (a_ref <= {:.3g} ns per KiB at "
                        "K_ref {:g}); the stores cost the tiles less than the data can resolve",
                        boot.a_hi * 1024e9, s.cov.k_ref);
  } else if (info.v.size() < 2) {
    t.status = model::InterferenceStatus::kNotIdentified;
    std::string at;
    for (double v : info.v) at += (at.empty() ? "" : ", ") + fmt::format("{:g} B", v);
    t.why = fmt::format("the per-byte cost is not identified: {} of {} points are slowed below the drain bound, at {} "
                        "volume(s) ({}); the drain-bound ones are K V / R whatever a(K) is, so a per-byte cost cannot "
                        "be told from a per-tile one (measure more points below the bound, e.g. "
                        "configs/calibrate/loaded-epilogue-wide.json)",
                        std::count_if(out.points.begin(), out.points.end(),
                                      [&](const EpiloguePointFit& f) {
                                        return !f.drain_bound && f.t_s / f.t0_s - 1 > options.min_effect;
                                      }),
                        s.pts.size(), info.v.size(), at.empty() ? "none" : at);
  } else if (held > options.max_held_out_error) {
    t.status = model::InterferenceStatus::kNotIdentified;
    t.why = fmt::format("the law T = max(T0 + a(K) V, K V / R) misses its own held-out points: median |error| {:.0f}% "
                        "(leave one K out) and {:.0f}% (leave one V out), above {:.0f}%",
                        100 * out.held_out_k_median_abs_error, 100 * out.held_out_v_median_abs_error,
                        100 * options.max_held_out_error);
  } else {
    t.status = model::InterferenceStatus::kIdentified;
  }
}

}  // namespace

EpilogueFit fit_epilogue(const std::vector<EpilogueObs>& obs, const EpilogueFitOptions& options) {
  EpilogueFit out;
  out.term.form = model::kEpiloguePerByteForm;
  EpilogueSetup s{obs, options, points_of(obs), {}, false};
  if (s.pts.size() < 3) {
    out.term.status = model::InterferenceStatus::kNotIdentified;
    out.term.why = fmt::format("{} epilogue point(s) on the remote path; the law needs at least 3", s.pts.size());
    return out;
  }
  s.cov = coverage_of(s.pts, options.min_effect);
  s.fit_gamma = s.cov.ks.size() >= 2 && s.cov.slowed_v.size() >= 2;
  const Informative info = informative_points(s);
  settle_gamma(s, info, out);

  const Law law = fit_law(s.pts, s.cov.k_ref, s.fit_gamma);
  const double n = static_cast<double>(s.pts.size()), dof = std::max(1.0, n - (s.fit_gamma ? 3.0 : 2.0));
  const double misfit = std::sqrt(law.sse / dof);
  const LawBootstrap boot = bootstrap_law(s);
  set_drain_rate(s, law, boot, out);
  score_points(s, law, out);
  set_parameters(s, law, boot, misfit, out);
  set_status(s, info, boot, out);
  return out;
}

bool has_epilogue_points(const std::vector<PointRecord>& points) {
  return std::any_of(points.begin(), points.end(), [](const PointRecord& p) {
    return p.spec.suite == Suite::kLoaded && p.spec.loaded.injection == Injection::kEpilogue && !p.skipped &&
           p.loaded && p.loaded->epilogue;
  });
}

std::vector<EpilogueObs> epilogue_obs_of(const std::vector<PointRecord>& points, const std::string& target) {
  std::vector<EpilogueObs> obs;
  for (const auto& p : points) {
    if (p.spec.suite != Suite::kLoaded || p.spec.loaded.injection != Injection::kEpilogue || p.skipped || !p.loaded ||
        !p.loaded->epilogue || p.spec.target != target)
      continue;
    EpilogueObs o;
    o.block = fmt::format("K{}_B{}_{}_{}_{}", p.spec.num_producers, p.spec.bytes_per_producer,
                          working_set_name(p.spec.loaded.working_set), mainloop_name(p.spec.loaded.mainloop),
                          address_mode_name(p.spec.address_mode));
    o.num_sms = p.spec.num_producers;
    o.bytes_per_tile = static_cast<double>(p.spec.bytes_per_producer) / std::max(1, p.spec.loaded.tiles_per_burst);
    o.t_samples = p.loaded->epilogue->mean_tile_epilogue_time_s.samples;
    o.t0_samples = p.loaded->epilogue->baseline_mean_tile_time_s.samples;
    obs.push_back(std::move(o));
  }
  return obs;
}

nlohmann::json epilogue_block(const EpilogueFit& fit, const std::string& target) {
  auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  nlohmann::json j = model::to_json(fit.term);
  j["target"] = target;
  j["equation"] = "T = max(T0 + a(K) V, K V / R_eff), a(K) = a_ref (K/K_ref)^gamma; s = 1 + a(K) V / T0 (eq. I2)";
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : fit.points)
    pts.push_back({{"block", p.block}, {"K", p.num_sms}, {"V_bytes", p.bytes_per_tile}, {"T0_s", num(p.t0_s)},
                   {"T_s", num(p.t_s)}, {"predicted_in_sample_s", num(p.predicted_s)},
                   {"predicted_without_its_K_s", p.held_out_k_s > 0 ? num(p.held_out_k_s) : nlohmann::json(nullptr)},
                   {"predicted_without_its_V_s", p.held_out_v_s > 0 ? num(p.held_out_v_s) : nlohmann::json(nullptr)},
                   {"drain_bound", p.drain_bound}});
  j["fit"] = {{"points", pts}, {"notes", fit.notes},
              {"drain_rate", {{"value_bps", num(fit.drain_rate_bps)}, {"lo", num(fit.drain_rate_lo)},
                              {"hi", num(fit.drain_rate_hi)}, {"identified", fit.drain_rate_identified}}}};
  j["validation"] = {
      {"in_sample", {{"label", "in-sample residuals (every point was fitted)"},
                     {"median_abs_relative_error", num(fit.in_sample_median_abs_error)}}},
      {"held_out_k", {{"label", "leave one K out: each point predicted by the law fitted without its K"},
                      {"median_abs_relative_error", num(fit.held_out_k_median_abs_error)},
                      {"p90_abs_relative_error", num(fit.held_out_k_p90_abs_error)}}},
      {"held_out_v", {{"label", "leave one V out: each point predicted by the law fitted without its V"},
                      {"median_abs_relative_error", num(fit.held_out_v_median_abs_error)},
                      {"p90_abs_relative_error", num(fit.held_out_v_p90_abs_error)}}},
      {"held_out_v_excess", {{"label", "leave one V out, judged on the excess time T - T0 of the points slowed below "
                                       "the drain bound (those that inform a(K)); a diagnostic: not a gate"},
                             {"points", fit.num_informative_points},
                             {"median_abs_relative_error", num(fit.held_out_v_excess_median_abs_error)}}}};
  return j;
}

}  // namespace xs::fit
