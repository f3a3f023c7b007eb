// xstage model layer: the calibrated platform model M_X = (T_iss^0(K,V), R, Q(K)) as tables, its JSON form
// (a result file's `model` section) and the interpolation documented in platform_model.hpp.
#include "model/platform_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <cmath>
#include <fstream>
#include <map>
#include <utility>

#include "common/error.hpp"
#include "report/file_io.hpp"
#include "report/json_read.hpp"
#include "report/result_file.hpp"

namespace xs::model {
namespace {

using nlohmann::json;
using report::ObjectReader;


double number_field(const ObjectReader& r, const char* key, bool positive) {
  const std::string field = r.path(key);
  const double x = report::read_finite(r.required(key), field);
  if (positive ? x <= 0 : x < 0)
    throw input_error(field, fmt::format("expected a number {} 0, got {}", positive ? ">" : ">=", x));
  return x;
}

int producer_count(const ObjectReader& r, bool constant) {
  return static_cast<int>(report::read_integer(r.required("K"), r.path("K"), constant ? 0 : 1, 1'000'000));
}

// [lo, hi] with lo <= hi; absent or null means "no interval recorded" (both ends at the value).
std::pair<double, double> ci95(const ObjectReader& r, const char* key, double value) {
  const json* v = r.optional(key);
  if (!v || v->is_null()) return {value, value};
  const std::string field = r.path(key);
  if (!v->is_array() || v->size() != 2)
    throw input_error(field, fmt::format("expected [lo, hi] or null, got {}", v->dump()));
  const double lo = report::read_finite((*v)[0], field + "[0]"), hi = report::read_finite((*v)[1], field + "[1]");
  if (lo > hi) throw input_error(field, fmt::format("expected [lo, hi] with lo <= hi, got {}", v->dump()));
  return {lo, hi};
}

std::string bound_field(const ObjectReader& r, const char* key) {
  const json* v = r.optional(key);
  if (!v) return "fit";
  const std::string bound = v->is_string() ? v->get<std::string>() : "";
  if (bound != "fit" && bound != "lower" && bound != "not_identified")
    throw input_error(r.path(key), fmt::format("expected \"fit\", \"lower\" or \"not_identified\", got {}", v->dump()));
  return bound;
}

// Optional diagnostics the fitter writes beside a row: type-checked, not used.
void check_row_extras(const ObjectReader& r) {
  for (const char* key : {"constrained"})
    if (const json* v = r.optional(key)) report::read_bool(*v, r.path(key));
  if (const json* v = r.optional("source")) report::read_string(*v, r.path("source"));
  if (const json* v = r.optional("num_plateau_points")) report::read_integer(*v, r.path("num_plateau_points"), 0, 1'000'000'000);
  for (const char* key : {"B_bytes", "knee_V_bytes"})
    if (const json* v = r.optional(key); v && !v->is_null()) report::read_non_negative(*v, r.path(key));
}

const json& array_field(const ObjectReader& r, const char* key) {
  const json& v = r.required(key);
  if (!v.is_array()) throw input_error(r.path(key), "expected an array [ {...}, ... ] (may be empty)");
  return v;
}

// Piecewise-linear interpolation over sorted (x, y) points, clamped to the end values outside.
double interpolate(const std::vector<std::pair<double, double>>& xy, double x, bool& extrapolated) {
  if (x < xy.front().first || x > xy.back().first) {
    extrapolated = true;
    return x < xy.front().first ? xy.front().second : xy.back().second;
  }
  auto hi = std::lower_bound(xy.begin(), xy.end(), x, [](const auto& p, double v) { return p.first < v; });
  if (hi->first == x || hi == xy.begin()) return hi->second;
  auto lo = hi - 1;
  const double w = (x - lo->first) / (hi->first - lo->first);
  return lo->second + w * (hi->second - lo->second);
}

}  // namespace

PlatformModel PlatformModel::constant(double drain_rate_bps, double tiss0_s, double capacity_bytes) {
  PlatformModel m;
  m.constant_ = true;
  m.drain_rate_bps_ = drain_rate_bps;
  m.drain_rate_ci95_lo_ = m.drain_rate_ci95_hi_ = drain_rate_bps;
  m.tiss0_.push_back({0, 0, tiss0_s});  // K = 0, V = 0: "any", never extrapolated
  if (capacity_bytes > 0) m.capacity_.push_back({0, capacity_bytes, capacity_bytes, capacity_bytes, "fit"});
  return m;
}

// The keys of a calibration file's model section and its rows are closed (docs/result-schema.md): `fit`,
// the fitter's free-form diagnostics block, is never read; anything else unknown is refused.
PlatformModel PlatformModel::from_json(const json& section) {
  if (!section.is_object()) throw input_error("model", "expected an object with R_Bps, R_ci95, tiss0 and Q");
  const ObjectReader r(section, "model", {"R_Bps", "R_ci95", "R_bound", "R_constrained", "tiss0", "Q", "fit", "constant"});
  PlatformModel m;
  if (const json* c = r.optional("constant")) m.constant_ = report::read_bool(*c, r.path("constant"));
  if (const json* c = r.optional("R_constrained")) report::read_bool(*c, r.path("R_constrained"));
  m.drain_rate_bound_ = bound_field(r, "R_bound");
  if (m.drain_rate_bound_ == "not_identified") {
    // Kept readable (the fitter builds its model through here); load() refuses it for prediction.
    const json& v = r.required("R_Bps");
    m.drain_rate_bps_ = v.is_null() ? std::nan("") : report::read_finite(v, r.path("R_Bps"));
    if (const json* c = r.optional("R_ci95"); c && !c->is_null()) ci95(r, "R_ci95", 0);
    m.drain_rate_ci95_lo_ = m.drain_rate_ci95_hi_ = m.drain_rate_bps_;
  } else {
    m.drain_rate_bps_ = number_field(r, "R_Bps", true);
    std::tie(m.drain_rate_ci95_lo_, m.drain_rate_ci95_hi_) = ci95(r, "R_ci95", m.drain_rate_bps_);
  }

  const json& tiss0 = array_field(r, "tiss0");
  for (std::size_t i = 0; i < tiss0.size(); ++i) {
    const ObjectReader row(tiss0[i], fmt::format("model.tiss0[{}]", i), {"K", "B_bytes", "V_bytes", "s", "ci95", "constrained", "source", "num_plateau_points"});
    check_row_extras(row);
    Tiss0Point pt;
    pt.num_producers = producer_count(row, m.constant_);
    pt.volume_bytes = number_field(row, "V_bytes", !m.constant_);
    pt.issue_time_s = number_field(row, "s", true);
    ci95(row, "ci95", pt.issue_time_s);
    for (const auto& q : m.tiss0_)
      if (q.num_producers == pt.num_producers && q.volume_bytes == pt.volume_bytes)
        throw input_error(fmt::format("model.tiss0[{}]", i),
                          fmt::format("duplicate entry for K={} V_bytes={}", pt.num_producers, pt.volume_bytes));
    m.tiss0_.push_back(pt);
  }
  if (m.constant_ && m.tiss0_.size() > 1) throw input_error("model.tiss0", "a constant model has one entry");

  const json& capacity = array_field(r, "Q");
  std::vector<int> seen_k;
  for (std::size_t i = 0; i < capacity.size(); ++i) {
    const std::string p = fmt::format("model.Q[{}]", i);
    const ObjectReader row(capacity[i], p, {"K", "bytes", "ci95", "bound", "knee_V_bytes", "constrained"});
    check_row_extras(row);
    CapacityPoint pt;
    pt.num_producers = producer_count(row, m.constant_);
    if (std::find(seen_k.begin(), seen_k.end(), pt.num_producers) != seen_k.end())
      throw input_error(p, fmt::format("duplicate entry for K={}", pt.num_producers));
    seen_k.push_back(pt.num_producers);
    pt.bound = bound_field(row, "bound");
    if (pt.bound == "not_identified") {
      // No Q at this K: kept out of interpolation, as if the K had not been measured.
      if (const json* b = row.optional("bytes"); b && !b->is_null()) report::read_finite(*b, row.path("bytes"));
      m.unidentified_capacity_k_.push_back(pt.num_producers);
      continue;
    }
    pt.capacity_bytes = number_field(row, "bytes", true);
    std::tie(pt.ci95_lo, pt.ci95_hi) = ci95(row, "ci95", pt.capacity_bytes);
    m.capacity_.push_back(pt);
  }
  if (m.constant_ && m.capacity_.size() > 1) throw input_error("model.Q", "a constant model has at most one entry");
  // The fitter's diagnostics stay free-form; only the capacity evidence of its Q rows is read, leniently (a
  // missing or non-numeric field is no evidence).
  if (const json* fit = r.optional("fit"); fit && fit->is_object())
    if (auto q = fit->find("Q"); q != fit->end() && q->is_array())
      for (const json& row : *q) {
        if (!row.is_object() || !row.contains("K") || !row["K"].is_number_integer()) continue;
        auto num = [&](const char* key) {
          auto it = row.find(key);
          return it != row.end() && it->is_number() && std::isfinite(it->get<double>()) && it->get<double>() > 0
                     ? it->get<double>() : 0.0;
        };
        CapacityEvidence e{row["K"].get<int>(), num("floor_lower_bound_bytes"), num("drain_start_V_bytes")};
        if (e.num_producers > 0 && (e.floor_lower_bound_bytes > 0 || e.drain_start_volume_bytes > 0))
          m.capacity_evidence_.push_back(e);
      }
  std::sort(m.capacity_evidence_.begin(), m.capacity_evidence_.end(),
            [](const CapacityEvidence& a, const CapacityEvidence& b) { return a.num_producers < b.num_producers; });

  std::sort(m.tiss0_.begin(), m.tiss0_.end(), [](const Tiss0Point& a, const Tiss0Point& b) {
    return std::pair(a.num_producers, a.volume_bytes) < std::pair(b.num_producers, b.volume_bytes);
  });
  std::sort(m.capacity_.begin(), m.capacity_.end(),
            [](const CapacityPoint& a, const CapacityPoint& b) { return a.num_producers < b.num_producers; });
  std::sort(m.unidentified_capacity_k_.begin(), m.unidentified_capacity_k_.end());
  return m;
}

CapacityBracket PlatformModel::capacity_bracket(int num_producers) const {
  CapacityBracket b;
  b.upper_bytes = std::numeric_limits<double>::infinity();
  auto raise_lower = [&](double bytes, int k) {
    if (bytes > b.lower_bytes) { b.lower_bytes = bytes; b.lower_from_k = k; }
  };
  auto cut_upper = [&](double bytes, int k) {
    if (bytes < b.upper_bytes) { b.upper_bytes = bytes; b.upper_from_k = k; }
  };
  for (const CapacityEvidence& e : capacity_evidence_) {
    if (e.num_producers <= num_producers && e.floor_lower_bound_bytes > 0)
      raise_lower(e.floor_lower_bound_bytes, e.num_producers);
    if (e.num_producers >= num_producers && e.drain_start_volume_bytes > 0 && std::isfinite(drain_rate_bps_)) {
      // A drained burst bounds Q only where it had something outstanding (V > R T_iss^0). T_iss^0 at a
      // drained V is the floor's clamped end value (the floor stops below the drain), as the fitter used.
      const double v = e.drain_start_volume_bytes;
      const double bound = v - drain_rate_bps_ * tiss0_s(e.num_producers, v).value;
      if (bound > 0) cut_upper(bound, e.num_producers);
    }
  }
  for (const CapacityPoint& c : capacity_) {
    if (c.num_producers <= num_producers) raise_lower(c.bound == "lower" ? c.capacity_bytes : c.ci95_lo, c.num_producers);
    if (c.num_producers >= num_producers && c.bound == "fit") cut_upper(c.ci95_hi, c.num_producers);
  }
  b.consistent = b.lower_bytes < b.upper_bytes;
  return b;
}

PlatformModel PlatformModel::load(const std::string& path) {
  return from_result_text(report::read_text_file(path), path);
}

PlatformModel PlatformModel::from_result_text(std::string_view text, const std::string& path) {
  // The one strict reader of result files: duplicate or unknown keys, NaN/inf/overflowing numbers, invalid
  // points and another schema are input errors naming the JSON path.
  const report::ResultFile file = report::parse_result_text(text, path);
  if (!file.model.is_object())
    throw input_error("model", path + ": model: null; expected a fitted model section (a calibration file "
                               "written by xstage-calibrate)");
  PlatformModel m;
  try {
    m = from_json(file.model);
  } catch (const Error& e) {
    throw Error(e.code(), e.domain(), e.field(), path + ": " + e.what());
  }
  if (!m.drain_rate_identified())
    throw input_error("model.R_bound", path + ": R not identified by this calibration (R_bound \"not_identified\"): "
                                       "it cannot predict; recalibrate with zero-gap periodic points over several V");
  return m;
}

Lookup PlatformModel::tiss0_s(int num_producers, double volume_bytes) const {
  if (tiss0_.empty()) throw input_error("model.tiss0", "the model has no T_iss^0 entries to look up");
  if (constant_) return {tiss0_.front().issue_time_s, false, false};
  // Group rows by K: within a K, T_iss^0 as a function of V.
  std::map<int, std::vector<std::pair<double, double>>> by_k;
  for (const auto& p : tiss0_) by_k[p.num_producers].emplace_back(p.volume_bytes, p.issue_time_s);
  Lookup out;
  const auto at_row = [&](const std::vector<std::pair<double, double>>& row) {
    return interpolate(row, volume_bytes, out.extrapolated);
  };
  auto hi = by_k.lower_bound(num_producers);
  if (hi == by_k.end() || (hi == by_k.begin() && hi->first != num_producers)) {
    out.extrapolated = true;  // outside the K range: nearest K row
    out.value = at_row(hi == by_k.end() ? std::prev(hi)->second : hi->second);
  } else if (hi->first == num_producers) {
    out.value = at_row(hi->second);
  } else {
    auto lo = std::prev(hi);
    const double w = double(num_producers - lo->first) / double(hi->first - lo->first);
    out.value = (1 - w) * at_row(lo->second) + w * at_row(hi->second);
  }
  return out;
}

Lookup PlatformModel::capacity_bytes(int num_producers) const {
  if (capacity_.empty()) throw input_error("model.Q", "the model has no Q(K) entries to look up");
  Lookup out;
  if (constant_) {
    out.value = capacity_.front().capacity_bytes;
    out.is_lower_bound = capacity_.front().bound == "lower";
    return out;
  }
  std::vector<std::pair<double, double>> xy;
  for (const auto& p : capacity_) xy.emplace_back(p.num_producers, p.capacity_bytes);
  out.value = interpolate(xy, num_producers, out.extrapolated);
  // A value that leans on a "lower" entry (the one used, or either neighbour) is itself only a lower bound.
  auto hi = std::lower_bound(capacity_.begin(), capacity_.end(), num_producers,
                             [](const CapacityPoint& p, int k) { return p.num_producers < k; });
  if (hi == capacity_.end()) --hi;
  out.is_lower_bound = hi->bound == "lower";
  if (hi != capacity_.begin() && hi->num_producers > num_producers)
    out.is_lower_bound = out.is_lower_bound || std::prev(hi)->bound == "lower";
  return out;
}

nlohmann::json PlatformModel::to_json() const {
  json j;
  if (drain_rate_identified()) {
    j["R_Bps"] = drain_rate_bps_;
    j["R_ci95"] = {drain_rate_ci95_lo_, drain_rate_ci95_hi_};
  } else {
    j["R_Bps"] = std::isfinite(drain_rate_bps_) ? json(drain_rate_bps_) : json(nullptr);
    j["R_ci95"] = nullptr;
  }
  j["tiss0"] = json::array();
  for (const auto& p : tiss0_)
    j["tiss0"].push_back({{"K", p.num_producers}, {"V_bytes", p.volume_bytes}, {"s", p.issue_time_s}});
  j["Q"] = json::array();
  for (const auto& p : capacity_)
    j["Q"].push_back({{"K", p.num_producers},
                      {"bytes", p.capacity_bytes},
                      {"ci95", {p.ci95_lo, p.ci95_hi}},
                      {"bound", p.bound}});
  for (int k : unidentified_capacity_k_)
    j["Q"].push_back({{"K", k}, {"bytes", nullptr}, {"ci95", nullptr}, {"bound", "not_identified"}});
  if (drain_rate_bound_ != "fit") j["R_bound"] = drain_rate_bound_;
  if (constant_) j["constant"] = true;
  return j;
}

}  // namespace xs::model
