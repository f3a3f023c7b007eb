// xstage gate layer: result-file provenance and baseline/candidate mismatch warnings (see provenance.hpp).
#include "xs/gate/provenance.hpp"

#include <fmt/format.h>

#include <set>

#include "xs/report/measured_device.hpp"

namespace xs::gate {
using nlohmann::json;

namespace {

std::string string_at(const json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string major_of(const std::string& version) { return version.substr(0, version.find('.')); }

}  // namespace

Provenance provenance_of(const json& raw, const json& canonical, const std::string& path) {
  Provenance p;
  const json meta = canonical.value("meta", json::object());
  p.backend = string_at(meta, "backend");
  p.target = string_at(canonical.value("config", json::object()), "target");
  if (p.target.empty() && canonical.contains("points") && canonical["points"].is_array()) {
    std::set<std::string> targets;
    for (const json& point : canonical["points"]) {
      const std::string t = string_at(point.value("spec", json::object()), "target");
      if (!t.empty()) targets.insert(t);
    }
    for (const std::string& t : targets) p.target += (p.target.empty() ? "" : ",") + t;
  }
  const report::MeasuredDevice device = report::measured_device(meta, path);
  p.device_name = device.name;
  p.device_uuid = device.uuid;
  p.schema_version = string_at(raw.value("schema", json::object()), "version");
  return p;
}

std::vector<std::string> provenance_warnings(const Provenance& baseline, const Provenance& candidate) {
  std::vector<std::string> out;
  auto check = [&](const char* what, const std::string& b, const std::string& c) {
    if (b == c) return;
    out.push_back(fmt::format("{} differs: baseline {}, candidate {}", what, b.empty() ? "(none)" : b,
                              c.empty() ? "(none)" : c));
  };
  check("backend", baseline.backend, candidate.backend);
  check("target", baseline.target, candidate.target);
  check("device name", baseline.device_name, candidate.device_name);
  check("device UUID", baseline.device_uuid, candidate.device_uuid);
  if (major_of(baseline.schema_version) != major_of(candidate.schema_version)) {
    check("schema major version", baseline.schema_version, candidate.schema_version);
  }
  return out;
}

}  // namespace xs::gate
