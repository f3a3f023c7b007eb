// xstage model layer: the interference term's evaluation (see interference.hpp) and its JSON block. Pure
// computation: the fitter (src/xs/fit/interference*.cpp) decides the parameters and their intervals.
#include "xs/model/interference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "xs/common/error.hpp"

namespace xs::model {
namespace {

// Two-sided 95% normal quantile: the scatter parameters (free_log_sd, misfit_log_sd) are standard deviations
// of log slowdowns / log waits between points, widened by this factor into a prediction bracket.
constexpr double kZ95 = 1.96;

double min4(double a, double b, double c, double d) { return std::min(std::min(a, b), std::min(c, d)); }
double max4(double a, double b, double c, double d) { return std::max(std::max(a, b), std::max(c, d)); }
double finite_or(double x, double fallback) { return std::isfinite(x) ? x : fallback; }

}  // namespace

const char* interference_status_name(InterferenceStatus status) {
  switch (status) {
    case InterferenceStatus::kNotCalibrated: return "interference not calibrated";
    case InterferenceStatus::kNotIdentified: return "interference not identified";
    case InterferenceStatus::kIdentified: return "identified";
  }
  return "?";
}

const char* interference_status_id(InterferenceStatus status) {
  switch (status) {
    case InterferenceStatus::kNotCalibrated: return "not_calibrated";
    case InterferenceStatus::kNotIdentified: return "not_identified";
    case InterferenceStatus::kIdentified: return "identified";
  }
  return "?";
}

InterferenceStatus parse_interference_status(const std::string& id) {
  if (id == "not_calibrated") return InterferenceStatus::kNotCalibrated;
  if (id == "not_identified") return InterferenceStatus::kNotIdentified;
  if (id == "identified") return InterferenceStatus::kIdentified;
  throw input_error("interference.status", "'" + id + "' is not one of not_calibrated, not_identified, identified");
}

const InterferenceParameter* InterferenceTerm::find(const std::string& name) const {
  for (const auto& p : parameters)
    if (p.name == name) return &p;
  return nullptr;
}

const InterferenceParameter& InterferenceTerm::parameter(const std::string& name) const {
  if (const auto* p = find(name)) return *p;
  throw std::logic_error("InterferenceTerm: form '" + form + "' has no parameter '" + name + "'");
}

SlowdownBracket InterferenceTerm::full_fraction(const LoadState& load) const {
  if (load.full_fraction >= 0) {
    const double u = std::min(1.0, load.full_fraction);
    return {u, u, u};
  }
  if (form == kEpiloguePerByteForm) return {0, 0, 0};  // eq. I2 has no full-path share: the replay's queue times it
  if (!(load.drain_rate_bps > 0)) return {0, 0, 0};  // local control: no remote path to fill
  if (load.capacity_bytes > 0 && load.outstanding_bytes >= load.capacity_bytes) return {1, 1, 1};
  const double band = parameter("knee_band").value;
  const double x = load.offered_rate_bps / load.drain_rate_bps;
  if (x >= 1 + band) return {1, 1, 1};
  if (x <= 1 - band) return {0, 0, 0};
  return {0, 0.5, 1};  // inside the knee band the share of time the path is full is not known
}

namespace {

// eq. I2's a(K) bracket: the (a_ref, gamma) interval corners, widened by the between-point misfit.
SlowdownBracket epilogue_cost_per_byte(const InterferenceTerm& t, int num_sms) {
  const auto& a = t.parameter("cost_s_per_byte_at_kref");
  const auto& gamma = t.parameter("k_exponent");
  const double r = num_sms / t.parameter("k_ref").value;
  const double g_lo = finite_or(gamma.lo, gamma.value), g_hi = finite_or(gamma.hi, gamma.value);
  const double a_lo0 = std::max(0.0, finite_or(a.lo, a.value)), a_hi0 = finite_or(a.hi, a.value);
  const double misfit = std::exp(kZ95 * finite_or(t.parameter("misfit_log_sd").value, 0.0));
  SlowdownBracket c;
  c.mid = std::max(0.0, a.value) * std::pow(r, gamma.value);
  c.lo = min4(a_lo0 * std::pow(r, g_lo), a_lo0 * std::pow(r, g_hi), a_hi0 * std::pow(r, g_lo), a_hi0 * std::pow(r, g_hi)) / misfit;
  c.hi = max4(a_lo0 * std::pow(r, g_lo), a_lo0 * std::pow(r, g_hi), a_hi0 * std::pow(r, g_lo), a_hi0 * std::pow(r, g_hi)) * misfit;
  return c;
}

std::string epilogue_outside(const InterferenceTerm& t, const LoadState& load) {
  std::vector<std::string> why;
  const double k_min = t.parameter("k_min").value, k_max = t.parameter("k_max").value;
  if (load.num_sms < k_min || load.num_sms > k_max)
    why.push_back(fmt::format("K_SM {} is outside the calibrated {:g}-{:g}", load.num_sms, k_min, k_max));
  // A parameter the fitter left unconstrained is no point to predict with (adversarial review of 2026-12-07: a gamma
  // "not identified: fixed at 0" scored as exact between k_min and k_max): the cost per byte anywhere, gamma away
  // from K_ref (where K^gamma is 1 whatever gamma is).
  const InterferenceParameter& cost = t.parameter("cost_s_per_byte_at_kref");
  if (!cost.constrained)
    why.push_back("the cost per byte is not constrained by the calibration" + (cost.note.empty() ? "" : ": " + cost.note));
  const InterferenceParameter& gamma = t.parameter("k_exponent");
  const double k_ref = t.parameter("k_ref").value;
  if (!gamma.constrained && load.num_sms != k_ref)
    why.push_back(fmt::format("gamma (K exponent) is not constrained{}: the cost is known at K_SM {:g} only, not {}",
                              gamma.note.empty() ? "" : " (" + gamma.note + ")", k_ref, load.num_sms));
  // Below the calibrated range is no extrapolation: slowdown() brackets it between s = 1 (nothing stored) and the
  // law at the calibrated minimum. Above it is.
  // A range bound the file leaves null (NaN) would make every comparison false: no range recorded, no check.
  for (const char* name : {"k_min", "k_max", "v_min", "v_max"})
    if (!std::isfinite(t.parameter(name).value))
      why.push_back(fmt::format("the calibration records no {} (null): its range cannot be checked", name));
  for (const char* name : {"store_load_min_Bps", "store_load_max_Bps"})
    if (const InterferenceParameter* p = t.find(name); p && !std::isfinite(p->value))
      why.push_back(fmt::format("the calibration records no {} (null): its range cannot be checked", name));
  const double v_min = t.parameter("v_min").value, v_max = t.parameter("v_max").value;
  if (load.burst_bytes_per_sm > 0 && load.burst_bytes_per_sm > v_max)
    why.push_back(fmt::format("{:g} B stored per tile is above the calibrated {:g}-{:g} B", load.burst_bytes_per_sm,
                              v_min, v_max));
  // The law's regressor, B / T0 (files fitted before 2026-12-06 evening do not carry its range: not checked there).
  const InterferenceParameter* x_lo = t.find("store_load_min_Bps");
  const InterferenceParameter* x_hi = t.find("store_load_max_Bps");
  if (x_lo && x_hi && load.burst_bytes_per_sm > 0 && load.tile_time_s > 0) {
    const double x = load.burst_bytes_per_sm / load.tile_time_s;
    if (x > x_hi->value)
      why.push_back(fmt::format("B / T0 = {:.3g} B/s per CTA is above the calibrated {:.3g}-{:.3g} B/s (the "
                                "slowdown is linear in it by assumption there)", x, x_lo->value, x_hi->value));
  }
  std::string out;
  for (const auto& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

}  // namespace

std::string InterferenceTerm::outside_calibration(const LoadState& load) const {
  if (status == InterferenceStatus::kIdentified && form == kEpiloguePerByteForm) return epilogue_outside(*this, load);
  if (status != InterferenceStatus::kIdentified || form != kFullPathWaitForm) return {};
  std::vector<std::string> why;
  const double k_min = parameter("k_min").value, k_max = parameter("k_max").value;
  if (load.num_sms < k_min || load.num_sms > k_max)
    why.push_back(fmt::format("K_SM {} is outside the calibrated {:g}-{:g}", load.num_sms, k_min, k_max));
  const double b = parameter("burst_bytes_per_sm").value;
  if (load.burst_bytes_per_sm > 0 && load.burst_bytes_per_sm != b)
    why.push_back(fmt::format("burst volume per SM {:g} B differs from the calibrated {:g} B (the wait depends on "
                              "it and the form has no term for that)", load.burst_bytes_per_sm, b));
  const double n_kb = parameter("k_blocks_per_tile").value;
  if (load.k_blocks_per_tile > 0 && load.k_blocks_per_tile != n_kb)
    why.push_back(fmt::format("{} k-blocks per tile, calibrated {:g} (the wait is scaled linearly, untested)",
                              load.k_blocks_per_tile, n_kb));
  if (!load.operands_in_l2 && load.tile_time_s <= 0 && !std::isfinite(parameter("tile_time_s_hbm").value))
    why.push_back("no HBM-streamed tile time was calibrated");
  std::string out;
  for (const auto& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

bool InterferenceTerm::below_calibration(const LoadState& load) const {
  if (status != InterferenceStatus::kIdentified || form != kEpiloguePerByteForm) return false;
  if (!(load.drain_rate_bps > 0) || !(load.burst_bytes_per_sm > 0) || !(load.tile_time_s > 0)) return false;
  const InterferenceParameter* v_min = find("v_min");
  const InterferenceParameter* x_min = find("store_load_min_Bps");
  return (v_min && load.burst_bytes_per_sm < v_min->value) ||
         (x_min && load.burst_bytes_per_sm / load.tile_time_s < x_min->value);
}

SlowdownBracket InterferenceTerm::slowdown(const LoadState& load) const {
  if (status != InterferenceStatus::kIdentified)
    throw std::logic_error(std::string("InterferenceTerm::slowdown: ") + interference_status_name(status) +
                           (why.empty() ? "" : ": " + why));
  if (form != kFullPathWaitForm && form != kEpiloguePerByteForm)
    throw std::logic_error("InterferenceTerm::slowdown: unknown form '" + form + "'");
  if (!(load.num_sms > 0)) throw input_error("num_sms", "K_SM must be > 0");
  if (load.offered_rate_bps < 0 || load.drain_rate_bps < 0 || load.tile_time_s < 0)
    throw input_error("load", "rates and the tile time must be >= 0");
  if (form == kEpiloguePerByteForm) {
    // No remote path (the local control) or nothing stored beside the tile: no cost.
    if (!(load.drain_rate_bps > 0) || !(load.burst_bytes_per_sm > 0)) return {1, 1, 1};
    if (!(load.tile_time_s > 0))
      throw input_error("tile_time_s", "the epilogue_per_byte term needs the tile's time without stores (T0 > 0)");
    const SlowdownBracket a = epilogue_cost_per_byte(*this, load.num_sms);
    const double x = load.burst_bytes_per_sm / load.tile_time_s;
    // Below what was calibrated (fewer bytes per tile than v_min, or a lower B / T0): s = 1 with nothing stored, and s
    // is taken to grow with the bytes stored, so s lies in [1, the law's high end at the calibrated minimum]; the
    // linear law stays the middle. (Above the range is an extrapolation: outside_calibration() says so.)
    double x_hi = x;
    bool below = false;
    if (const InterferenceParameter* v_min = find("v_min"); v_min && load.burst_bytes_per_sm < v_min->value) {
      x_hi = std::max(x_hi, v_min->value / load.tile_time_s);
      below = true;
    }
    if (const InterferenceParameter* x_min = find("store_load_min_Bps"); x_min && x < x_min->value) {
      x_hi = std::max(x_hi, x_min->value);
      below = true;
    }
    return {below ? 1.0 : 1 + a.lo * x, 1 + a.mid * x, 1 + a.hi * x_hi};
  }

  // s_free: the slowdown below the knee (median over the calibration's free points, CI) x its scatter.
  const auto& free = parameter("free_slowdown");
  const double free_sd = finite_or(parameter("free_log_sd").value, 0.0);
  const double free_lo = finite_or(free.lo, free.value) * std::exp(-kZ95 * free_sd);
  const double free_hi = finite_or(free.hi, free.value) * std::exp(kZ95 * free_sd);

  // W(K) = W_ref (K/K_ref)^gamma: every corner of the (W_ref, gamma) intervals, then the between-point misfit.
  const auto& w = parameter("wait_s_at_kref");
  const auto& gamma = parameter("k_exponent");
  const double r = load.num_sms / parameter("k_ref").value;
  const double g_lo = finite_or(gamma.lo, gamma.value), g_hi = finite_or(gamma.hi, gamma.value);
  const double w_lo0 = finite_or(w.lo, w.value), w_hi0 = finite_or(w.hi, w.value);
  const double misfit = std::exp(kZ95 * finite_or(parameter("misfit_log_sd").value, 0.0));
  const double w_mid = w.value * std::pow(r, gamma.value);
  double w_lo = min4(w_lo0 * std::pow(r, g_lo), w_lo0 * std::pow(r, g_hi), w_hi0 * std::pow(r, g_lo), w_hi0 * std::pow(r, g_hi));
  double w_hi = max4(w_lo0 * std::pow(r, g_lo), w_lo0 * std::pow(r, g_hi), w_hi0 * std::pow(r, g_lo), w_hi0 * std::pow(r, g_hi));
  w_lo = w_lo > 0 ? w_lo / misfit : w_lo * misfit;  // widen away from the median on both sides
  w_hi = w_hi > 0 ? w_hi * misfit : w_hi / misfit;

  // The tile: its own T0, or the calibration's for the same working set; the wait scales with its k-blocks.
  double t0 = load.tile_time_s;
  if (!(t0 > 0)) t0 = parameter(load.operands_in_l2 ? "tile_time_s_l2" : "tile_time_s_hbm").value;
  if (!(t0 > 0) || !std::isfinite(t0))
    throw input_error("tile_time_s", std::string("the calibration has no ") + (load.operands_in_l2 ? "L2" : "HBM") +
                                         "-resident tile time; give the tile's time without stores");
  const double n_kb_cal = parameter("k_blocks_per_tile").value;
  const double scale = (load.k_blocks_per_tile > 0 ? load.k_blocks_per_tile / n_kb_cal : 1.0) / t0;

  const SlowdownBracket u = full_fraction(load);
  SlowdownBracket s;
  s.lo = free_lo + scale * min4(u.lo * w_lo, u.hi * w_lo, u.lo * w_hi, u.hi * w_hi);
  s.hi = free_hi + scale * max4(u.lo * w_lo, u.hi * w_lo, u.lo * w_hi, u.hi * w_hi);
  s.mid = free.value + scale * u.mid * w_mid;
  return s;
}

nlohmann::json to_json(const InterferenceTerm& term) {
  auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : term.parameters)
    params.push_back({{"name", p.name}, {"value", num(p.value)}, {"lo", num(p.lo)}, {"hi", num(p.hi)},
                      {"constrained", p.constrained}, {"note", p.note}});
  return {{"status", interference_status_id(term.status)}, {"why", term.why}, {"form", term.form},
          {"parameters", params}};
}

InterferenceTerm interference_term_from_json(const nlohmann::json& block) {
  if (!block.is_object()) throw input_error("interference", "must be an object");
  auto str = [&](const nlohmann::json& j, const char* key, const std::string& path) {
    if (!j.contains(key) || !j.at(key).is_string()) throw input_error(path + "." + key, "missing or not a string");
    return j.at(key).get<std::string>();
  };
  auto num = [&](const nlohmann::json& j, const char* key, const std::string& path) {
    if (!j.contains(key)) throw input_error(path + "." + key, "missing");
    const auto& v = j.at(key);
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!v.is_number()) throw input_error(path + "." + key, "not a number or null");
    return v.get<double>();
  };
  InterferenceTerm term;
  term.status = parse_interference_status(str(block, "status", "interference"));
  term.why = str(block, "why", "interference");
  term.form = str(block, "form", "interference");
  if (!block.contains("parameters") || !block.at("parameters").is_array())
    throw input_error("interference.parameters", "missing or not an array");
  const auto& arr = block.at("parameters");
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string path = fmt::format("interference.parameters[{}]", i);
    const auto& j = arr[i];
    if (!j.is_object()) throw input_error(path, "not an object");
    InterferenceParameter p;
    p.name = str(j, "name", path);
    p.value = num(j, "value", path);
    p.lo = num(j, "lo", path);
    p.hi = num(j, "hi", path);
    if (!j.contains("constrained") || !j.at("constrained").is_boolean())
      throw input_error(path + ".constrained", "missing or not a boolean");
    p.constrained = j.at("constrained").get<bool>();
    p.note = j.value("note", "");
    term.parameters.push_back(std::move(p));
  }
  if (term.status == InterferenceStatus::kIdentified && term.form == kEpiloguePerByteForm) {
    for (const char* name : {"cost_s_per_byte_at_kref", "k_ref", "k_exponent", "misfit_log_sd", "k_min", "k_max",
                             "v_min", "v_max"})
      if (!term.find(name)) throw input_error("interference.parameters", std::string("no parameter '") + name + "'");
    if (!std::isfinite(term.parameter("cost_s_per_byte_at_kref").value) || !(term.parameter("k_ref").value > 0))
      throw input_error("interference.parameters", "cost_s_per_byte_at_kref and k_ref must be finite (k_ref > 0)");
  }
  if (term.status == InterferenceStatus::kIdentified && term.form == kFullPathWaitForm) {
    for (const char* name : {"free_slowdown", "free_log_sd", "wait_s_at_kref", "k_ref", "k_exponent", "misfit_log_sd",
                             "k_blocks_per_tile", "tile_time_s_l2", "tile_time_s_hbm", "knee_band", "k_min", "k_max",
                             "burst_bytes_per_sm"})
      if (!term.find(name)) throw input_error("interference.parameters", std::string("no parameter '") + name + "'");
    if (!std::isfinite(term.parameter("wait_s_at_kref").value) || !(term.parameter("k_ref").value > 0))
      throw input_error("interference.parameters", "wait_s_at_kref and k_ref must be finite (k_ref > 0)");
  }
  return term;
}

InterferenceTerm interference_term_of_calibration(const nlohmann::json& file) {
  if (file.is_object() && file.contains("extra") && file.at("extra").is_object() &&
      file.at("extra").contains("interference"))
    return interference_term_from_json(file.at("extra").at("interference"));
  InterferenceTerm term;
  term.status = InterferenceStatus::kNotCalibrated;
  term.why = "interference not calibrated: the calibration file has no interference block (no remote_store.loaded "
             "points, or written before issue 28)";
  return term;
}

}  // namespace xs::model
