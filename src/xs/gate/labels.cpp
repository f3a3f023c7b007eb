// xstage gate layer: instance labels (see labels.hpp).
#include "xs/gate/labels.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string_view>

#include "xs/gate/units.hpp"

namespace xs::gate {
using nlohmann::json;

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string value_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

const json* member(const json& element, const char* key) {
  if (!element.is_object()) return nullptr;
  const auto it = element.find(key);
  return it == element.end() ? nullptr : &*it;
}

bool matches_points(const MetricSpec& m) { return m.match_by_names == std::vector<std::string>{"id", "spec"}; }

std::string point_base_label(const json& element) {
  const json* spec = member(element, "spec");
  const json* id = member(element, "id");
  std::string label;
  if (spec && spec->is_object() && member(*spec, "suite") && (*spec)["suite"].is_string()) {
    label = (*spec)["suite"].get<std::string>();
  } else if (id && id->is_string()) {
    label = id->get<std::string>();
  }
  if (spec && spec->is_object()) {
    for (const char* axis : {"K", "B_bytes", "G_s"}) {
      if (const json* v = member(*spec, axis)) label += (label.empty() ? "" : " ") + axis_text(axis, *v);
    }
  }
  return label.empty() ? "?" : label;
}

std::string match_by_label(const json& element, const MetricSpec& m) {
  std::string label;
  for (std::size_t i = 0; i < m.match_by.size(); ++i) {
    const json* v = resolve_path(element, m.match_by[i]);
    label += (i ? " " : "") + (v ? axis_text(m.match_by_names[i], *v) : m.match_by_names[i] + "=?");
  }
  return label;
}

// The spec axes (and "id") whose values differ among `group`.
std::vector<std::string> distinguishing_axes(const std::vector<const json*>& group) {
  std::map<std::string, std::set<std::string>> values;
  std::set<std::string> keys;
  for (const json* e : group) {
    if (const json* spec = member(*e, "spec"); spec && spec->is_object()) {
      for (const auto& item : spec->items()) keys.insert(item.key());
    }
  }
  for (const json* e : group) {
    const json* id = member(*e, "id");
    values["id"].insert(id ? id->dump() : "");
    const json* spec = member(*e, "spec");
    for (const std::string& k : keys) {
      const json* v = spec ? member(*spec, k.c_str()) : nullptr;
      values[k].insert(v ? v->dump() : "");
    }
  }
  std::vector<std::string> out;
  if (values["id"].size() > 1) out.push_back("id");
  for (const std::string& k : keys) {
    if (values[k].size() > 1) out.push_back(k);
  }
  return out;
}

}  // namespace

std::string axis_text(const std::string& name, const json& value) {
  if (value.is_number() && ends_with(name, "_bytes")) {
    return name.substr(0, name.size() - 6) + "=" + compact_bytes(value.get<double>());
  }
  if (value.is_number() && ends_with(name, "_s")) {
    return name.substr(0, name.size() - 2) + "=" + compact_seconds(value.get<double>());
  }
  return name + "=" + value_text(value);
}

std::vector<std::string> element_labels(const std::vector<const json*>& elements, const MetricSpec& m) {
  std::vector<std::string> labels;
  labels.reserve(elements.size());
  if (!matches_points(m)) {
    for (const json* e : elements) labels.push_back(match_by_label(*e, m));
    return labels;
  }
  for (const json* e : elements) labels.push_back(point_base_label(*e));
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < labels.size(); ++i) groups[labels[i]].push_back(i);
  for (const auto& [base, members] : groups) {
    if (members.size() < 2) continue;
    std::vector<const json*> group;
    for (std::size_t i : members) group.push_back(elements[i]);
    const std::vector<std::string> axes = distinguishing_axes(group);
    for (std::size_t i : members) {
      for (const std::string& axis : axes) {
        if (axis == "id") {
          const json* id = member(*elements[i], "id");
          labels[i] += " " + (id ? value_text(*id) : std::string("id=?"));
        } else if (axis != "K" && axis != "B_bytes" && axis != "G_s" && axis != "suite") {
          const json* spec = member(*elements[i], "spec");
          const json* v = spec ? member(*spec, axis.c_str()) : nullptr;
          labels[i] += " " + (v ? axis_text(axis, *v) : axis + "=-");
        }
      }
    }
  }
  return labels;
}

}  // namespace xs::gate
