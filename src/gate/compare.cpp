// xstage gate layer: the metric-by-metric comparison (see compare.hpp and docs/gate.md).
#include "gate/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/error.hpp"
#include "report/json_read.hpp"
#include "report/result_file.hpp"

namespace xs::gate {
using nlohmann::json;

namespace {

struct Instance {
  std::string label;
  double value = 0;
};

// "remote_store.periodic.host {K=132 B_bytes=32768 G_s=0.0}": K, B and G always, other axes only where
// they differ from the defaults, so the label stays short yet tells two points apart.
std::string spec_label(const json& spec) {
  static const json defaults = report::to_json(PointSpec{});
  std::string label;
  for (const auto& item : spec.items()) {
    const bool always = item.key() == "K" || item.key() == "B_bytes" || item.key() == "G_s";
    const auto d = defaults.find(item.key());
    if (!always && d != defaults.end() && *d == item.value()) continue;
    label += fmt::format("{}{}={}", label.empty() ? "" : " ", item.key(),
                         item.value().is_string() ? item.value().get<std::string>() : item.value().dump());
  }
  return "{" + label + "}";
}

std::string element_label(const json& element, const MetricSpec& m) {
  const json* id = element.is_object() ? resolve_path(element, {{PathStep::Kind::kKey, "id", 0}}) : nullptr;
  const json* spec = element.is_object() ? resolve_path(element, {{PathStep::Kind::kKey, "spec", 0}}) : nullptr;
  if (m.match_by_names == std::vector<std::string>{"id", "spec"} && id && id->is_string() && spec &&
      spec->is_object()) {
    return id->get<std::string>() + " " + spec_label(*spec);
  }
  std::string label;
  for (std::size_t i = 0; i < m.match_by.size(); ++i) {
    const json* v = resolve_path(element, m.match_by[i]);
    label += fmt::format("{}{}={}", i ? " " : "", m.match_by_names[i], v ? v->dump() : "?");
  }
  return label;
}

// The element's identity across files: the compact JSON of its match_by values, or nullopt if one is absent.
std::optional<std::string> match_key(const json& element, const MetricSpec& m) {
  json key = json::array();
  for (const MetricPath& path : m.match_by) {
    const json* v = resolve_path(element, path);
    if (!v) return std::nullopt;
    key.push_back(*v);
  }
  return key.dump();
}

bool is_skipped(const json& element) {
  const auto it = element.is_object() ? element.find("skipped") : element.end();
  return element.is_object() && it != element.end() && it->is_boolean() && it->get<bool>();
}

Comparison judge(const MetricSpec& m, double baseline, double candidate) {
  Comparison c;
  c.baseline = baseline;
  c.candidate = candidate;
  c.tolerance = std::max(m.abs_tol, m.rel_tol * std::fabs(baseline));
  const double change = candidate - baseline;
  if (std::fabs(change) <= c.tolerance) {
    c.status = Status::kSame;
  } else if (m.direction == Direction::kHigher) {
    c.status = change > 0 ? Status::kBetter : Status::kWorse;
  } else if (m.direction == Direction::kLower) {
    c.status = change < 0 ? Status::kBetter : Status::kWorse;
  } else {
    c.status = Status::kWorse;
  }
  return c;
}

Comparison missing(const MetricSpec& m, double baseline, std::string note) {
  Comparison c;
  c.baseline = baseline;
  c.tolerance = std::max(m.abs_tol, m.rel_tol * std::fabs(baseline));
  c.status = Status::kMissing;
  c.note = std::move(note);
  return c;
}

// Baseline instances of a [*] metric keyed by match key; the baseline must fit the config exactly.
std::map<std::string, Instance> baseline_instances(const json& array, const MetricSpec& m, const std::string& field) {
  std::map<std::string, Instance> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const json& element = array[i];
    const auto key = match_key(element, m);
    if (!key) throw input_error(field, fmt::format("baseline element {} lacks a match_by value", i));
    if (!seen.insert(*key).second) {
      throw input_error(field, fmt::format("baseline has two elements matching {}", element_label(element, m)));
    }
    if (is_skipped(element)) continue;  // nothing was measured: nothing to hold the candidate to
    const json* v = resolve_path(element, m.suffix);
    if (!v) continue;                   // e.g. completion_s on a point run without completion mode
    if (!v->is_number()) throw input_error(field, fmt::format("baseline value of {} is {}, not a number",
                                                              element_label(element, m), report::json_type_name(*v)));
    out[*key] = {element_label(element, m), v->get<double>()};
  }
  return out;
}

void compare_metric(const json& baseline, const json& candidate, const MetricSpec& m, std::size_t index,
                    GateReport& report) {
  const std::string field = report::index_path("metrics", index) + ".name";
  auto add = [&](Comparison c, std::string instance) {
    c.metric_index = index;
    c.metric = m.name;
    c.instance = std::move(instance);
    report.rows.push_back(std::move(c));
  };
  auto absent_from_baseline = [&](const std::string& what) {
    if (!m.optional) throw input_error(field, "\"" + m.name + "\" " + what + " (mark the metric \"optional\": true to allow)");
    Comparison c;
    c.status = Status::kNotApplicable;
    c.note = "not in baseline";
    add(c, "");
  };

  const json* b = resolve_path(baseline, m.prefix);
  const json* c = resolve_path(candidate, m.prefix);
  if (!m.has_wildcard) {
    if (!b || b->is_null()) return absent_from_baseline("is not in the baseline");
    if (!b->is_number()) throw input_error(field, fmt::format("baseline value is {}, not a number", report::json_type_name(*b)));
    if (!c || !c->is_number()) return add(missing(m, b->get<double>(), c ? "not a number in candidate" : "not in candidate"), "");
    return add(judge(m, b->get<double>(), c->get<double>()), "");
  }
  if (!b || b->is_null()) return absent_from_baseline("is not in the baseline");
  if (!b->is_array()) throw input_error(field, fmt::format("baseline value before [*] is {}, not an array", report::json_type_name(*b)));
  const auto instances = baseline_instances(*b, m, field);
  if (instances.empty()) return absent_from_baseline("has no value in any baseline element");

  std::map<std::string, const json*> candidates;
  if (c && c->is_array()) {
    for (const json& element : *c) {
      const auto key = match_key(element, m);
      if (!key) continue;  // cannot be matched; its baseline counterpart shows up as MISSING
      if (!candidates.emplace(*key, &element).second) {
        throw input_error(field, "candidate has two elements matching " + element_label(element, m));
      }
    }
  }
  for (const auto& [key, inst] : instances) {
    const auto it = candidates.find(key);
    if (it == candidates.end()) { add(missing(m, inst.value, "no matching element in candidate"), inst.label); continue; }
    const json& element = *it->second;
    if (is_skipped(element)) {
      const json* reason = resolve_path(element, {{PathStep::Kind::kKey, "skip_reason", 0}});
      add(missing(m, inst.value, "skipped in candidate: " + (reason && reason->is_string() ? reason->get<std::string>() : "")), inst.label);
      continue;
    }
    const json* v = resolve_path(element, m.suffix);
    if (!v || !v->is_number()) { add(missing(m, inst.value, "no value in candidate"), inst.label); continue; }
    add(judge(m, inst.value, v->get<double>()), inst.label);
  }
  for (const auto& [key, element] : candidates) {
    if (instances.count(key) || is_skipped(*element)) continue;
    const json* v = resolve_path(*element, m.suffix);
    if (!v || !v->is_number()) continue;
    Comparison row;
    row.candidate = v->get<double>();
    row.status = Status::kNew;
    row.note = "not in baseline";
    add(row, element_label(*element, m));
  }
}

}  // namespace

const char* status_name(Status status) {
  switch (status) {
    case Status::kSame: return "SAME";
    case Status::kBetter: return "BETTER";
    case Status::kWorse: return "WORSE";
    case Status::kMissing: return "MISSING";
    case Status::kNew: return "NEW";
    case Status::kNotApplicable: return "N/A";
  }
  return "?";
}

std::size_t GateReport::count(Status status) const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [&](const Comparison& c) { return c.status == status; }));
}

bool GateReport::passed() const {
  return std::none_of(rows.begin(), rows.end(), [](const Comparison& c) { return is_failure(c.status); });
}

GateReport compare(const json& baseline, const json& candidate, const GateConfig& config) {
  GateReport report;
  for (std::size_t i = 0; i < config.metrics.size(); ++i) {
    compare_metric(baseline, candidate, config.metrics[i], i, report);
  }
  return report;
}

GateReport compare_files(const std::string& baseline_path, const std::string& candidate_path,
                         const GateConfig& config) {
  // Canonical form: paths resolve against the writer's key names, whatever the files' layout.
  const json baseline = report::to_json(report::read_result_file(baseline_path));
  const json candidate = report::to_json(report::read_result_file(candidate_path));
  try {
    return compare(baseline, candidate, config);
  } catch (const Error& e) {
    throw Error(e.code(), e.domain(), e.field(), "gate config vs baseline " + baseline_path + ": " + e.what());
  }
}

}  // namespace xs::gate
