// xstage model layer: the calibrated platform model M_X = (T_iss^0(K,V), R, Q(K)) as tables, its JSON form
// (a result file's `model` section) and the interpolation documented in platform_model.hpp.
#include "model/platform_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <utility>

#include "common/error.hpp"

namespace xs::model {
namespace {

using nlohmann::json;

constexpr const char* kSchemaName = "xstage.result";
constexpr int kSchemaMajor = 1;

double finite_number(const json& j, const std::string& key, const std::string& path, bool positive) {
  const std::string field = path + "." + key;
  if (!j.contains(key)) throw input_error(field, "missing; expected a number");
  const json& v = j.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    throw input_error(field, fmt::format("expected a finite number, got {}", v.dump()));
  const double x = v.get<double>();
  if (positive ? x <= 0 : x < 0)
    throw input_error(field, fmt::format("expected a number {} 0, got {}", positive ? ">" : ">=", x));
  return x;
}

int producer_count(const json& j, const std::string& path) {
  const double k = finite_number(j, "K", path, true);
  if (k != std::floor(k) || k > 1e9)
    throw input_error(path + ".K", fmt::format("expected an integer >= 1, got {}", k));
  return static_cast<int>(k);
}

// [lo, hi] with lo <= hi; absent means "no interval recorded" (both ends at the value).
std::pair<double, double> ci95(const json& j, const std::string& key, const std::string& path, double value) {
  if (!j.contains(key)) return {value, value};
  const json& v = j.at(key);
  const std::string field = path + "." + key;
  if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number() ||
      v[0].get<double>() > v[1].get<double>())
    throw input_error(field, fmt::format("expected [lo, hi] with lo <= hi, got {}", v.dump()));
  return {v[0].get<double>(), v[1].get<double>()};
}

const json& array_field(const json& j, const std::string& key, const std::string& path) {
  if (!j.contains(key) || !j.at(key).is_array())
    throw input_error(path + "." + key, "missing or not an array; expected [ {...}, ... ] (may be empty)");
  return j.at(key);
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

PlatformModel PlatformModel::from_json(const json& section) {
  const std::string path = "model";
  if (!section.is_object()) throw input_error(path, "expected an object with R_Bps, R_ci95, tiss0 and Q");
  PlatformModel m;
  if (section.contains("constant") && !section["constant"].is_boolean())
    throw input_error(path + ".constant", "expected true or false");
  m.constant_ = section.value("constant", false);
  m.drain_rate_bps_ = finite_number(section, "R_Bps", path, true);
  std::tie(m.drain_rate_ci95_lo_, m.drain_rate_ci95_hi_) = ci95(section, "R_ci95", path, m.drain_rate_bps_);

  const json& tiss0 = array_field(section, "tiss0", path);
  for (std::size_t i = 0; i < tiss0.size(); ++i) {
    const std::string p = fmt::format("{}.tiss0[{}]", path, i);
    if (!tiss0[i].is_object())
      throw input_error(p, "expected {\"K\": int, \"V_bytes\": number, \"s\": number}");
    Tiss0Point pt;
    pt.num_producers = m.constant_ ? 0 : producer_count(tiss0[i], p);
    pt.volume_bytes = finite_number(tiss0[i], "V_bytes", p, !m.constant_);
    pt.issue_time_s = finite_number(tiss0[i], "s", p, true);
    for (const auto& q : m.tiss0_)
      if (q.num_producers == pt.num_producers && q.volume_bytes == pt.volume_bytes)
        throw input_error(
            p, fmt::format("duplicate entry for K={} V_bytes={}", pt.num_producers, pt.volume_bytes));
    m.tiss0_.push_back(pt);
  }
  if (m.constant_ && m.tiss0_.size() > 1)
    throw input_error(path + ".tiss0", "a constant model has one entry");

  const json& capacity = array_field(section, "Q", path);
  for (std::size_t i = 0; i < capacity.size(); ++i) {
    const std::string p = fmt::format("{}.Q[{}]", path, i);
    if (!capacity[i].is_object())
      throw input_error(
          p, "expected {\"K\": int, \"bytes\": number, \"ci95\": [lo, hi], \"bound\": \"fit\"|\"lower\"}");
    CapacityPoint pt;
    pt.num_producers = m.constant_ ? 0 : producer_count(capacity[i], p);
    pt.capacity_bytes = finite_number(capacity[i], "bytes", p, true);
    std::tie(pt.ci95_lo, pt.ci95_hi) = ci95(capacity[i], "ci95", p, pt.capacity_bytes);
    const json bound = capacity[i].value("bound", json("fit"));
    if (bound != "fit" && bound != "lower")
      throw input_error(p + ".bound", fmt::format("expected \"fit\" or \"lower\", got {}", bound.dump()));
    pt.bound = bound.get<std::string>();
    for (const auto& q : m.capacity_)
      if (q.num_producers == pt.num_producers)
        throw input_error(p, fmt::format("duplicate entry for K={}", pt.num_producers));
    m.capacity_.push_back(pt);
  }
  if (m.constant_ && m.capacity_.size() > 1)
    throw input_error(path + ".Q", "a constant model has at most one entry");

  std::sort(m.tiss0_.begin(), m.tiss0_.end(), [](const Tiss0Point& a, const Tiss0Point& b) {
    return std::pair(a.num_producers, a.volume_bytes) < std::pair(b.num_producers, b.volume_bytes);
  });
  std::sort(m.capacity_.begin(), m.capacity_.end(),
            [](const CapacityPoint& a, const CapacityPoint& b) { return a.num_producers < b.num_producers; });
  return m;
}

PlatformModel PlatformModel::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw input_error(path, "cannot open the model file (expected an xstage.result JSON file)");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw input_error(path, fmt::format("malformed JSON at byte {}: {}", e.byte, e.what()));
  }
  const auto fail = [&](const std::string& field, const std::string& message) {
    return input_error(path + ": " + field, message);
  };
  if (!j.is_object() || !j.contains("schema") || !j["schema"].is_object())
    throw fail("schema", "missing; expected {\"name\": \"xstage.result\", \"version\": \"1.x\"}");
  const json& schema = j["schema"];
  if (!schema.contains("name") || schema["name"] != kSchemaName)
    throw fail("schema.name",
               fmt::format("expected \"{}\", got {}", kSchemaName, schema.value("name", json()).dump()));
  const json version = schema.value("version", json());
  int major = -1;
  if (version.is_string()) {
    const std::string v = version.get<std::string>();
    const auto dot = v.find('.');
    try {
      if (dot != std::string::npos && dot > 0) major = std::stoi(v.substr(0, dot));
    } catch (const std::exception&) {
      major = -1;
    }
  }
  if (major != kSchemaMajor)
    throw fail("schema.version", fmt::format("expected \"{}.x\", got {}", kSchemaMajor, version.dump()));
  if (!j.contains("model") || !j["model"].is_object())
    throw fail("model", "missing or null; expected a fitted model section (a calibration result file)");
  try {
    return from_json(j["model"]);
  } catch (const Error& e) {
    throw Error(e.code(), e.domain(), e.field(), path + ": " + e.what());
  }
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
  j["R_Bps"] = drain_rate_bps_;
  j["R_ci95"] = {drain_rate_ci95_lo_, drain_rate_ci95_hi_};
  j["tiss0"] = json::array();
  for (const auto& p : tiss0_)
    j["tiss0"].push_back({{"K", p.num_producers}, {"V_bytes", p.volume_bytes}, {"s", p.issue_time_s}});
  j["Q"] = json::array();
  for (const auto& p : capacity_)
    j["Q"].push_back({{"K", p.num_producers},
                      {"bytes", p.capacity_bytes},
                      {"ci95", {p.ci95_lo, p.ci95_hi}},
                      {"bound", p.bound}});
  if (constant_) j["constant"] = true;
  return j;
}

}  // namespace xs::model
