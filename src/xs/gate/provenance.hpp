// xstage gate layer: where a result file came from (backend, target, device name and UUID, schema
// version), and the warnings the gate prints when baseline and candidate do not come from the same place.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace xs::gate {

struct Provenance {
  std::string backend;         // meta.backend ("gpu", "sim")
  std::string target;          // config.target, else the points' spec.target values joined by ","
  std::string device_name;     // meta.devices[meta.device_index].name
  std::string device_uuid;     // ... .uuid
  std::string schema_version;  // the file's own "schema".version, as written ("1.0")
};

// `raw` is the file as parsed (for its schema version: the canonical form always says the reader's);
// `canonical` is report::to_json of the strictly read file. Absent fields stay empty; a meta.device_index that is
// not an index into meta.devices is bad input (input_error naming `path`).
Provenance provenance_of(const nlohmann::json& raw, const nlohmann::json& canonical, const std::string& path);

// One line per field that differs, e.g. "device UUID differs: baseline GPU-a8aa..., candidate GPU-77c1...".
// A field empty on both sides is not compared; empty on one side counts as a difference ("(none)").
std::vector<std::string> provenance_warnings(const Provenance& baseline, const Provenance& candidate);

}  // namespace xs::gate
