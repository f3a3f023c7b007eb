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

}  // namespace

EpilogueFit fit_epilogue(const std::vector<EpilogueObs>& obs, const EpilogueFitOptions& options) {
  EpilogueFit out;
  out.term.form = model::kEpiloguePerByteForm;
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
  if (pts.size() < 3) {
    out.term.status = model::InterferenceStatus::kNotIdentified;
    out.term.why = fmt::format("{} epilogue point(s) on the remote path; the law needs at least 3", pts.size());
    return out;
  }
  std::set<int> ks;
  std::set<double> vs, slowed_v;
  int k_max = 0, k_min = 1 << 30;
  double v_min = kInf, v_max = 0;
  double x_min = kInf, x_max = 0;  // the law's regressor B / T0 (bytes stored per second of tile time, per CTA)
  for (const auto& p : pts) {
    x_min = std::min(x_min, p.v / p.t0), x_max = std::max(x_max, p.v / p.t0);
    ks.insert(p.k);
    vs.insert(p.v);
    if (p.t / p.t0 - 1 > options.min_effect) slowed_v.insert(p.v);
    k_max = std::max(k_max, p.k), k_min = std::min(k_min, p.k);
    v_min = std::min(v_min, p.v), v_max = std::max(v_max, p.v);
  }
  const double k_ref = ks.count(132) ? 132.0 : static_cast<double>(k_max);
  bool fit_gamma = ks.size() >= 2 && slowed_v.size() >= 2;
  // Only a point that is slowed and NOT on the drain branch carries information on a(K): a drain-bound point's
  // time is K V / R whatever a is. A first fit classifies the points; a(K) then needs such points at >= 2 V
  // (else a per-byte cost cannot be told from a per-tile one), and gamma such points at >= 2 K.
  std::set<int> info_k;
  std::set<double> info_v;
  {
    const Law pre = fit_law(pts, k_ref, fit_gamma);
    for (const auto& p : pts) {
      const bool drain = std::isfinite(pre.r) &&
                         p.k * p.v / pre.r > p.t0 + pre.a_ref * std::pow(p.k / k_ref, pre.gamma) * p.v;
      if (!drain && p.t / p.t0 - 1 > options.min_effect) {
        info_k.insert(p.k);
        info_v.insert(p.v);
      }
    }
  }
  if (ks.size() < 2) out.notes.push_back("one K only: gamma fixed at 0 (not identified)");
  else if (!fit_gamma)
    out.notes.push_back(fmt::format("fewer than 2 slowed points at different V (T/T0 - 1 > {:g}): the data are flat; "
                                    "gamma fixed at 0 (not identified) and a is in effect an upper bound",
                                    options.min_effect));
  else if (info_k.size() < 2) {
    fit_gamma = false;
    out.notes.push_back(fmt::format("slowed points below the drain bound at {} K only: gamma fixed at 0 (not "
                                    "identified); the drain-bound points say nothing about a(K)", info_k.size()));
  }

  const Law law = fit_law(pts, k_ref, fit_gamma);
  const double n = static_cast<double>(pts.size()), dof = std::max(1.0, n - (fit_gamma ? 3.0 : 2.0));
  const double misfit = std::sqrt(law.sse / dof);

  // Bootstrap: points with replacement, one repetition pair per drawn point.
  std::uint64_t rng = options.seed;
  std::vector<double> a_d, g_d, r_d;
  int drain_bound_draws = 0;
  for (int b = 0; b < options.bootstrap_resamples; ++b) {
    std::vector<Pt> bs;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const std::size_t j = draw(rng, pts.size());
      const auto& o = obs[j];
      Pt p = pts[j];
      p.t = o.t_samples[draw(rng, o.t_samples.size())];
      p.t0 = o.t0_samples[draw(rng, o.t0_samples.size())];
      bs.push_back(p);
    }
    const Law l = fit_law(bs, k_ref, fit_gamma);
    a_d.push_back(l.a_ref);
    g_d.push_back(l.gamma);
    r_d.push_back(l.r);
    bool any = false;
    for (const auto& p : bs) any |= std::isfinite(l.r) && p.k * p.v / l.r > p.t0 + l.a_ref * std::pow(p.k / k_ref, l.gamma) * p.v;
    drain_bound_draws += any;
  }
  const double a_lo = pct(a_d, 0.025), a_hi = pct(a_d, 0.975);
  const double g_lo = pct(g_d, 0.025), g_hi = pct(g_d, 0.975);
  out.drain_rate_bps = law.r;
  // widened by one step of the rate grid (x1.122) on each side: the fit cannot place R finer than that
  constexpr double kRateStep = 1.1220184543019633;
  out.drain_rate_lo = pct(r_d, 0.025) / kRateStep;
  out.drain_rate_hi = pct(r_d, 0.975) * kRateStep;
  out.drain_rate_identified = std::isfinite(law.r) && drain_bound_draws >= 0.95 * options.bootstrap_resamples &&
                              std::isfinite(out.drain_rate_hi);

  // Per point: in-sample prediction, and the held-out ones (the law fitted without the point's K / V).
  std::map<int, Law> without_k;
  std::map<double, Law> without_v;
  for (int k : ks) {
    std::vector<Pt> rest;
    for (const auto& p : pts)
      if (p.k != k) rest.push_back(p);
    std::set<int> rest_k;
    for (const auto& p : rest) rest_k.insert(p.k);
    if (rest.size() >= 3) without_k[k] = fit_law(rest, k_ref, fit_gamma && rest_k.size() >= 2);
  }
  for (double v : vs) {
    std::vector<Pt> rest;
    for (const auto& p : pts)
      if (p.v != v) rest.push_back(p);
    if (rest.size() >= 3) without_v[v] = fit_law(rest, k_ref, fit_gamma);
  }
  std::vector<double> e_in, e_k, e_v, e_excess;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const Pt& p = pts[i];
    EpiloguePointFit f;
    f.num_sms = p.k;
    f.bytes_per_tile = p.v;
    f.t0_s = p.t0;
    f.t_s = p.t;
    f.block = obs[i].block;
    f.predicted_s = predict(law, k_ref, p);
    f.drain_bound = std::isfinite(law.r) && p.k * p.v / law.r > p.t0 + law.a_ref * std::pow(p.k / k_ref, law.gamma) * p.v;
    e_in.push_back(f.predicted_s / p.t - 1);
    if (auto it = without_k.find(p.k); it != without_k.end()) {
      f.held_out_k_s = predict(it->second, k_ref, p);
      e_k.push_back(f.held_out_k_s / p.t - 1);
    }
    if (auto it = without_v.find(p.v); it != without_v.end()) {
      f.held_out_v_s = predict(it->second, k_ref, p);
      e_v.push_back(f.held_out_v_s / p.t - 1);
      if (!f.drain_bound && p.t / p.t0 - 1 > options.min_effect)
        e_excess.push_back((f.held_out_v_s - p.t0) / (p.t - p.t0) - 1);
    }
    out.num_informative_points += !f.drain_bound && p.t / p.t0 - 1 > options.min_effect;
    out.points.push_back(f);
  }
  out.in_sample_median_abs_error = med_abs(e_in);
  out.held_out_k_median_abs_error = med_abs(e_k);
  out.held_out_k_p90_abs_error = med_abs(e_k, 0.9);
  out.held_out_v_median_abs_error = med_abs(e_v);
  out.held_out_v_p90_abs_error = med_abs(e_v, 0.9);
  out.held_out_v_excess_median_abs_error = e_excess.empty() ? NAN : med_abs(e_excess);

  auto& t = out.term;
  t.parameters = {
      param("cost_s_per_byte_at_kref", law.a_ref, a_lo, a_hi, a_lo > 0,
            a_lo > 0 ? "" : "the interval reaches 0: an upper bound"),
      param("k_ref", k_ref, k_ref, k_ref, true),
      param("k_exponent", law.gamma, fit_gamma ? g_lo : 0.0, fit_gamma ? g_hi : 0.0, fit_gamma,
            fit_gamma ? "" : "not identified: fixed at 0"),
      param("misfit_log_sd", misfit, misfit, misfit, true, "between-point scatter of log T about the law"),
      param("drain_rate_bps", law.r, out.drain_rate_lo, out.drain_rate_hi, out.drain_rate_identified,
            out.drain_rate_identified ? "" : "not identified: no point is drain-bound in >= 95% of the bootstrap"),
      param("k_min", k_min, k_min, k_min, true),
      param("k_max", k_max, k_max, k_max, true),
      param("v_min", v_min, v_min, v_min, true),
      param("v_max", v_max, v_max, v_max, true),
      param("store_load_min_Bps", x_min, x_min, x_min, true, "smallest B / T0 calibrated (per CTA)"),
      param("store_load_max_Bps", x_max, x_max, x_max, true, "largest B / T0 calibrated (per CTA)"),
  };
  const double held = std::max(std::isfinite(out.held_out_k_median_abs_error) ? out.held_out_k_median_abs_error : 0.0,
                               std::isfinite(out.held_out_v_median_abs_error) ? out.held_out_v_median_abs_error : 0.0);
  if (!(a_lo > 0)) {
    t.status = model::InterferenceStatus::kNotIdentified;
    t.why = fmt::format("the per-byte cost is not identified: its 95% interval reaches 0 (a_ref <= {:.3g} ns per KiB at "
                        "K_ref {:g}); the stores cost the tiles less than the data can resolve",
                        a_hi * 1024e9, k_ref);
  } else if (info_v.size() < 2) {
    t.status = model::InterferenceStatus::kNotIdentified;
    std::string at;
    for (double v : info_v) at += (at.empty() ? "" : ", ") + fmt::format("{:g} B", v);
    t.why = fmt::format("the per-byte cost is not identified: {} of {} points are slowed below the drain bound, at {} "
                        "volume(s) ({}); the drain-bound ones are K V / R whatever a(K) is, so a per-byte cost cannot "
                        "be told from a per-tile one (measure more points below the bound, e.g. "
                        "configs/calibrate/loaded-epilogue-wide.json)",
                        std::count_if(out.points.begin(), out.points.end(),
                                      [&](const EpiloguePointFit& f) {
                                        return !f.drain_bound && f.t_s / f.t0_s - 1 > options.min_effect;
                                      }),
                        pts.size(), info_v.size(), at.empty() ? "none" : at);
  } else if (held > options.max_held_out_error) {
    t.status = model::InterferenceStatus::kNotIdentified;
    t.why = fmt::format("the law T = max(T0 + a(K) V, K V / R) misses its own held-out points: median |error| {:.0f}% "
                        "(leave one K out) and {:.0f}% (leave one V out), above {:.0f}%",
                        100 * out.held_out_k_median_abs_error, 100 * out.held_out_v_median_abs_error,
                        100 * options.max_held_out_error);
  } else {
    t.status = model::InterferenceStatus::kIdentified;
  }
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
