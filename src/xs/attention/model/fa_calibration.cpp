// xstage attention judge layer: calibration terms as intervals (see fa_calibration.hpp).
#include "xs/attention/model/fa_calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "xs/common/error.hpp"
#include "xs/fit/calibration_file.hpp"
#include "xs/report/fnv1a.hpp"
#include "xs/report/measured_device.hpp"
#include "xs/report/result_file.hpp"

namespace xs::attention::model {
namespace {

using nlohmann::json;

std::string text_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string mb(double bytes) { return fmt::format("{:.3g} MB", bytes / 1e6); }
std::string us(double s) { return fmt::format("{:.3g} us", s * 1e6); }

}  // namespace

namespace {
// The rows with the fitter's flags (PlatformModel keeps only the values; its strict reader has checked them).
void read_rows(const json& model_section, FaCalibration& c) {
  for (const json& row : model_section.at("tiss0")) {
    Tiss0Row r;
    r.num_producers = row.at("K").get<int>();
    r.volume_bytes = row.at("V_bytes").get<double>();
    r.issue_time_s = row.at("s").get<double>();
    r.ci_lo_s = r.ci_hi_s = r.issue_time_s;
    if (auto ci = row.find("ci95"); ci != row.end() && ci->is_array() && ci->size() == 2) {
      r.ci_lo_s = (*ci)[0].get<double>();
      r.ci_hi_s = (*ci)[1].get<double>();
    }
    if (auto f = row.find("constrained"); f != row.end() && f->is_boolean()) r.constrained = f->get<bool>();
    r.source = text_at(row, "source");
    c.tiss0_rows.push_back(r);
  }
}
}  // namespace

FaCalibration fa_calibration_from_model(const json& model_section, const std::string& name) {
  FaCalibration c;
  c.platform = xs::model::PlatformModel::from_json(model_section);
  c.path = name;
  read_rows(model_section, c);
  return c;
}

FaCalibration load_fa_calibration(std::string_view text, const std::string& path) {
  FaCalibration c;
  c.platform = xs::fit::platform_model_from_result_text(text, path);  // strict; refuses an unidentified R
  const report::ResultFile file = report::parse_result_text(text, path);
  c.path = path;
  c.fnv1a64 = report::fnv1a64(text);
  if (file.config.is_object()) c.target = text_at(file.config, "target");
  c.git_sha = text_at(file.meta, "git_sha");
  c.date_utc = text_at(file.meta, "date_utc");
  c.backend = text_at(file.meta, "backend");
  c.device = report::measured_device(file.meta, path).name;  // the GPU measured: meta.devices[meta.device_index]
  read_rows(file.model, c);
  for (const PointRecord& p : file.points) {
    if (p.skipped || p.clock_flagged || p.spec.suite == Suite::kLocalControl) continue;
    if (!c.target.empty() && p.spec.target != c.target) continue;
    if (!(p.issue_time_s.median > 0)) continue;
    c.bursts.push_back({p.spec.num_producers, static_cast<double>(p.spec.volume_bytes()), p.issue_time_s.median,
                        p.spec.suite == Suite::kIsolated ? "isolated" : "periodic"});
  }
  if (auto ref = file.extra.find("reference"); ref != file.extra.end() && ref->is_object())
    if (auto ce = ref->find("copy_engine_Bps"); ce != ref->end() && ce->is_number()) c.copy_engine_bps = ce->get<double>();
  return c;
}

FaCalibration constant_fa_calibration(double drain_rate_bps, double tiss0_s, double capacity_bytes) {
  FaCalibration c;
  c.platform = xs::model::PlatformModel::constant(drain_rate_bps, tiss0_s, capacity_bytes);
  c.path = "(constant model from the command line)";
  c.tiss0_rows.push_back({0, 0, tiss0_s, tiss0_s, tiss0_s, true, "constant"});
  return c;
}

Term drain_rate_term(const FaCalibration& c) {
  Term t;
  const json m = c.platform.to_json();
  const double r = c.platform.drain_rate_bps();
  double lo = r, hi = r;
  if (auto ci = m.find("R_ci95"); ci != m.end() && ci->is_array() && ci->size() == 2) {
    lo = (*ci)[0].get<double>();
    hi = (*ci)[1].get<double>();
  }
  t.range = {lo, hi};
  t.source = "R fit with its ci95";
  if (!c.platform.drain_rate_identified() || !(r > 0)) {
    t.range = {0, INFINITY};
    t.why = "R not identified by the calibration";
  } else if (c.copy_engine_bps > 0 && lo > c.copy_engine_bps) {
    // Faster than the copy engine on the same link: the bursts were absorbed, R is not what drains them.
    t.range = {0, c.copy_engine_bps};
    t.why = fmt::format("R = {:.1f} GB/s with ci95 above the copy engine's {:.1f} GB/s on the same link: "
                        "absorption, not a drain rate; R bounded by the copy engine only",
                        r / 1e9, c.copy_engine_bps / 1e9);
  } else {
    t.point = r;
  }
  return t;
}

Term tiss0_term(const FaCalibration& c, int k, double v) {
  Term t;
  if (c.tiss0_rows.size() == 1 && c.tiss0_rows.front().num_producers == 0) {  // constant model
    t.point = c.tiss0_rows.front().issue_time_s;
    t.range = {t.point, t.point};
    t.source = "constant model";
    return t;
  }
  const double rel = 1e-9;
  const Tiss0Row* exact = nullptr;
  const Tiss0Row* below = nullptr;  // constrained row of this K at the largest V <= v
  const Tiss0Row* above = nullptr;  // constrained row of this K at the smallest V >= v
  bool any_row = false;
  double upper = INFINITY;
  std::string upper_from;
  for (const Tiss0Row& r : c.tiss0_rows) {
    if (r.num_producers != k) continue;
    any_row = true;
    const bool same_v = std::abs(r.volume_bytes - v) <= rel * v;
    if (r.constrained) {
      if (same_v) exact = &r;
      if (r.volume_bytes <= v * (1 + rel) && (!below || r.volume_bytes > below->volume_bytes)) below = &r;
      if (r.volume_bytes >= v * (1 - rel) && (!above || r.volume_bytes < above->volume_bytes)) above = &r;
    }
    // Any row at V' >= v bounds T_iss^0(K, v) from above: a constrained one by its ci95 top, an unconstrained
    // one because it is a measured issue time (backpressure only lengthens it).
    if (r.volume_bytes >= v * (1 - rel)) {
      const double bound = r.constrained ? r.ci_hi_s : r.issue_time_s;
      if (bound < upper) {
        upper = bound;
        upper_from = fmt::format("{} row at V = {}", r.constrained ? "constrained" : "unconstrained", mb(r.volume_bytes));
      }
    }
  }
  for (const BurstObservation& b : c.bursts)
    if (b.num_producers == k && b.volume_bytes >= v * (1 - rel) && b.issue_time_median_s < upper) {
      upper = b.issue_time_median_s;
      upper_from = fmt::format("measured {} burst at V = {} (median T_iss {})", b.suite, mb(b.volume_bytes),
                               us(b.issue_time_median_s));
    }
  if (exact) {
    t.point = exact->issue_time_s;
    t.range = {exact->ci_lo_s, exact->ci_hi_s};
    t.source = fmt::format("constrained row at K = {}, V = {} ({})", k, mb(v), exact->source);
    return t;
  }
  if (below && above) {  // between two constrained rows of this K: interpolated, the rows' ci95 bound it
    const double w = (v - below->volume_bytes) / (above->volume_bytes - below->volume_bytes);
    t.point = below->issue_time_s + w * (above->issue_time_s - below->issue_time_s);
    t.range = {below->ci_lo_s, std::min(above->ci_hi_s, upper)};
    t.source = fmt::format("interpolated in V between constrained rows at K = {} (V = {} and {})", k,
                           mb(below->volume_bytes), mb(above->volume_bytes));
    return t;
  }
  t.range = {below ? below->ci_lo_s : 0.0, upper};
  if (!any_row) {
    t.why = fmt::format("T_iss^0 not measured at K = {}: no row of the calibration at this K", k);
    t.range = {0, INFINITY};
    return t;
  }
  t.why = fmt::format("T_iss^0(K = {}, V = {}) not identified: {}; bracketed by monotonicity in V at this K: "
                      "below by {}, above by {}",
                      k, mb(v),
                      below ? fmt::format("the constrained rows of this K stop at V = {}", mb(below->volume_bytes))
                            : std::string("no constrained row of this K at or below this V"),
                      below ? fmt::format("the constrained row at V = {}", mb(below->volume_bytes)) : std::string("0"),
                      std::isfinite(upper) ? upper_from : std::string("nothing (no measurement at or above this V)"));
  t.source = "bracket";
  return t;
}

Term capacity_term(const FaCalibration& c, int k, double burst_volume_bytes) {
  Term t;
  const xs::model::PlatformModel& p = c.platform;
  if (p.has_capacity()) {
    // Identified at this very K (a "fit" row), not interpolated across K the fitter left unidentified.
    // A row the fitter marked unconstrained (a soft knee, R drifting) is not a measurement of Q: it falls through
    // to the bracket below, which leaves such rows out (docs/result-schema.md, `constrained`).
    for (const xs::model::CapacityPoint& row : p.capacity_table())
      if ((row.num_producers == k || row.num_producers == 0) && row.bound == "fit" && row.constrained) {
        t.point = row.capacity_bytes;
        t.range = {row.ci95_lo, row.ci95_hi};
        t.source = row.num_producers == 0 ? "constant model" : fmt::format("Q fit at K = {}", k);
        return t;
      }
  }
  const xs::model::CapacityBracket b = p.capacity_bracket(k, burst_volume_bytes);
  t.source = "bracket";
  if (!b.consistent) {
    t.range = {0, INFINITY};
    t.why = fmt::format("Q(K = {}) not identified and the isolated bursts contradict each other", k);
    return t;
  }
  t.range = {b.lower_bytes, b.upper_bytes};
  t.why = fmt::format("Q(K = {}) not identified; the isolated bursts bracket it in [{}, {}){}", k, mb(b.lower_bytes),
                      std::isfinite(b.upper_bytes) ? mb(b.upper_bytes) : std::string("inf"),
                      !b.lower_from_drain_branch ? std::string()
                      : b.lower_from_volume_bytes > 0
                          ? fmt::format(" (the low end: the measured isolated burst of {} at K = {}, the drain branch "
                                        "lying below the floor)", mb(b.lower_from_volume_bytes), b.lower_from_k)
                          : fmt::format(" (0: the drain branch at K = {} lies below its floor, and no measured burst "
                                        "bounds Q there)", b.lower_from_k));
  if (b.upper_from_volume_bytes > 0)
    t.why += fmt::format(" (the high end: the fastest repetitions of the measured isolated burst of {} at K = {})",
                         mb(b.upper_from_volume_bytes), b.upper_from_k);
  return t;
}

}  // namespace xs::attention::model
