// xstage gate layer: strict reader of the gate config and the metric-path grammar (see gate_config.hpp).
#include "xs/gate/gate_config.hpp"

#include <fmt/format.h>

#include <set>

#include "xs/common/error.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/json_read.hpp"

namespace xs::gate {
using nlohmann::json;
using report::ObjectReader;

namespace {

constexpr const char* kPathGrammar =
    "a dotted path of keys with optional [N] indices and at most one [*], e.g. points[*].issue_time_s.median";

bool is_ident_char(char c, bool first) {
  const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return alpha || (!first && c >= '0' && c <= '9');
}

Direction parse_direction(const json& j, const std::string& path) {
  const std::string text = report::read_string(j, path);
  if (text == "higher") return Direction::kHigher;
  if (text == "lower") return Direction::kLower;
  if (text == "either") return Direction::kEither;
  throw input_error(path, "unknown direction \"" + text + "\"; accepted: higher, lower, either");
}

// Returns the file's minor version.
unsigned check_gate_schema(const json& j) {
  const ObjectReader r(j, "schema", {"name", "version"});
  const std::string name = report::read_string(r.required("name"), r.path("name"));
  if (name != kGateSchemaName) {
    throw input_error(r.path("name"), fmt::format("expected \"{}\", got \"{}\"", kGateSchemaName, name));
  }
  const std::string version = report::read_string(r.required("version"), r.path("version"));
  unsigned major = 0, minor = 0;
  if (!report::parse_schema_version(version, major, minor)) {
    throw input_error(r.path("version"), "expected \"MAJOR.MINOR\" such as \"1.0\", got \"" + version + "\"");
  }
  if (major != static_cast<unsigned>(kGateSchemaMajor)) {
    throw input_error(r.path("version"), fmt::format("major version {} is not supported; accepted: 1.x", major));
  }
  return minor;
}

MetricSpec metric_from_json(const json& j, const std::string& path) {
  const ObjectReader r(j, path, {"name", "direction", "rel_tol", "abs_tol", "match_by", "optional", "max_missing",
                                       "missing_only_where", "description"});
  MetricSpec m;
  m.name = report::read_string(r.required("name"), r.path("name"));
  const MetricPath full = parse_metric_path(m.name, r.path("name"), true);
  for (const PathStep& step : full) {
    if (step.kind == PathStep::Kind::kWildcard) {
      m.has_wildcard = true;
    } else {
      (m.has_wildcard ? m.suffix : m.prefix).push_back(step);
    }
  }
  if (m.has_wildcard && m.suffix.empty()) {
    throw input_error(r.path("name"), "a [*] must be followed by the value's path inside each element");
  }
  m.direction = parse_direction(r.required("direction"), r.path("direction"));
  const json* rel = r.optional("rel_tol");
  const json* abs = r.optional("abs_tol");
  if (!rel && !abs) throw input_error(path, "needs rel_tol and/or abs_tol (non-negative numbers; 0 = exact)");
  if (rel) m.rel_tol = report::read_non_negative(*rel, r.path("rel_tol"));
  if (abs) m.abs_tol = report::read_non_negative(*abs, r.path("abs_tol"));
  if (const json* o = r.optional("optional")) m.optional = report::read_bool(*o, r.path("optional"));
  if (const json* d = r.optional("description")) m.description = report::read_string(*d, r.path("description"));
  if (const json* mm = r.optional("max_missing")) {
    if (!m.has_wildcard) throw input_error(r.path("max_missing"), "only a metric with [*] has elements that can be missing");
    if (m.prefix.size() == 1 && m.prefix[0].kind == PathStep::Kind::kKey && m.prefix[0].key == "points")
      throw input_error(r.path("max_missing"), "not for points[*]: a measured point absent from the candidate is "
                                               "always MISSING (max_missing is for rows a fit emits, e.g. model.tiss0[*])");
    m.max_missing = static_cast<std::size_t>(report::read_integer(*mm, r.path("max_missing"), 0, 1000000));
  }
  if (const json* w = r.optional("missing_only_where")) {
    if (!r.optional("max_missing"))
      throw input_error(r.path("missing_only_where"), "needs max_missing (it narrows which absent elements it allows)");
    const json& obj = report::read_object(*w, r.path("missing_only_where"));
    if (obj.empty()) throw input_error(r.path("missing_only_where"), "expected an object of member: \"string\" pairs");
    for (const auto& [key, value] : obj.items())
      m.missing_only_where.emplace_back(key, report::read_string(value, report::join_path(r.path("missing_only_where"), key)));
  }

  const bool is_points = m.prefix.size() == 1 && m.prefix[0].kind == PathStep::Kind::kKey && m.prefix[0].key == "points";
  if (const json* mb = r.optional("match_by")) {
    if (!m.has_wildcard) throw input_error(r.path("match_by"), "only a metric with [*] matches elements");
    const json& list = report::read_array(*mb, r.path("match_by"));
    if (list.empty()) throw input_error(r.path("match_by"), "expected a non-empty array of element paths");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string item_path = report::index_path(r.path("match_by"), i);
      m.match_by_names.push_back(report::read_string(list[i], item_path));
      m.match_by.push_back(parse_metric_path(m.match_by_names.back(), item_path, false));
    }
  } else if (m.has_wildcard) {
    // Points are matched by what they are (id + spec), never by position: sweeps may reorder or grow.
    if (!is_points) throw input_error(r.path("match_by"), "required for a [*] metric outside points[*] (e.g. [\"K\"])");
    m.match_by_names = {"id", "spec"};
    m.match_by = {parse_metric_path("id", "", false), parse_metric_path("spec", "", false)};
  }
  return m;
}

}  // namespace

const char* direction_name(Direction direction) {
  switch (direction) {
    case Direction::kHigher: return "higher";
    case Direction::kLower: return "lower";
    case Direction::kEither: return "either";
  }
  return "either";
}

MetricPath parse_metric_path(const std::string& text, const std::string& field, bool allow_wildcard) {
  MetricPath path;
  std::size_t pos = 0;
  int wildcards = 0;
  auto fail = [&](const std::string& what) {
    return input_error(field, fmt::format("bad metric path \"{}\" ({} at offset {}); expected {}", text, what, pos,
                                          kPathGrammar));
  };
  for (;;) {
    const std::size_t start = pos;
    while (pos < text.size() && is_ident_char(text[pos], pos == start)) ++pos;
    if (pos == start) throw fail("expected a key");
    path.push_back({PathStep::Kind::kKey, text.substr(start, pos - start), 0});
    while (pos < text.size() && text[pos] == '[') {
      ++pos;
      if (pos < text.size() && text[pos] == '*') {
        ++pos;
        if (!allow_wildcard) throw fail("[*] is not allowed here");
        if (++wildcards > 1) throw fail("more than one [*]");
        path.push_back({PathStep::Kind::kWildcard, "", 0});
      } else {
        const std::size_t digits = pos;
        std::size_t index = 0;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && pos - digits < 9) {
          index = index * 10 + static_cast<std::size_t>(text[pos++] - '0');
        }
        if (pos == digits) throw fail("expected an index or *");
        path.push_back({PathStep::Kind::kIndex, "", index});
      }
      if (pos >= text.size() || text[pos] != ']') throw fail("expected ]");
      ++pos;
    }
    if (pos == text.size()) return path;
    if (text[pos] != '.') throw fail("expected . or [");
    ++pos;
  }
}

const json* resolve_path(const json& root, const MetricPath& path) {
  const json* at = &root;
  for (const PathStep& step : path) {
    if (step.kind == PathStep::Kind::kKey) {
      if (!at->is_object()) return nullptr;
      const auto it = at->find(step.key);
      if (it == at->end()) return nullptr;
      at = &*it;
    } else if (step.kind == PathStep::Kind::kIndex) {
      if (!at->is_array() || step.index >= at->size()) return nullptr;
      at = &(*at)[step.index];
    } else {
      return nullptr;  // wildcards are expanded by the comparer, never resolved
    }
  }
  return at;
}

namespace {

// Everything but the schema (checked by gate_config_from_json).
GateConfig gate_config_body(const json& j) {
  const ObjectReader r(j, "", {"schema", "description", "alpha", "min_samples", "metrics"});
  GateConfig config;
  if (const json* d = r.optional("description")) config.description = report::read_string(*d, "description");
  if (const json* a = r.optional("alpha")) {
    config.alpha = report::read_finite(*a, "alpha");
    if (!(config.alpha > 0 && config.alpha <= 1)) {
      throw input_error("alpha", fmt::format("expected a significance level in (0, 1] such as 0.05, got {}", config.alpha));
    }
  }
  if (const json* n = r.optional("min_samples")) {
    config.min_samples = static_cast<std::size_t>(report::read_integer(*n, "min_samples", 2, 1000000));
  }
  const json& metrics = report::read_array(r.required("metrics"), "metrics");
  if (metrics.empty()) throw input_error("metrics", "expected at least one metric");
  std::set<std::string> names;
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    config.metrics.push_back(metric_from_json(metrics[i], report::index_path("metrics", i)));
    if (!names.insert(config.metrics.back().name).second) {
      throw input_error(report::index_path("metrics", i) + ".name", "metric \"" + config.metrics.back().name +
                                                                       "\" is listed twice");
    }
  }
  return config;
}

}  // namespace

GateConfig gate_config_from_json(const json& j) {
  report::read_object(j, "(document)");
  const auto schema = j.find("schema");
  if (schema == j.end()) throw input_error("schema", "required field is missing (expected {\"name\": \"xstage.gate\", \"version\": \"1.0\"})");
  const unsigned minor = check_gate_schema(*schema);
  try {
    return gate_config_body(j);
  } catch (const Error& e) {
    constexpr auto kMajor = static_cast<unsigned>(kGateSchemaMajor);
    constexpr auto kMinor = static_cast<unsigned>(kGateSchemaMinor);
    throw report::with_schema_version(e, {kGateSchemaName, kMajor, minor, kMajor, kMinor});
  }
}

GateConfig read_gate_config(const std::string& path) {
  const json j = report::parse_json_text(report::read_text_file(path), path);
  try {
    return gate_config_from_json(j);
  } catch (const Error& e) {
    throw Error(e.code(), e.domain(), e.field(), path + ": " + e.what());
  }
}

}  // namespace xs::gate
