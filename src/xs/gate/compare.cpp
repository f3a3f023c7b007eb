// xstage gate layer: the metric-by-metric comparison (see compare.hpp and docs/gate.md).
#include "xs/gate/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "xs/common/error.hpp"
#include "xs/gate/labels.hpp"
#include "xs/gate/mann_whitney.hpp"
#include "xs/gate/provenance.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/result_file.hpp"

namespace xs::gate {
using nlohmann::json;

namespace {

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
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
  const json* s = member(element, "skipped");
  return s && s->is_boolean() && s->get<bool>();
}

// Where the value sits: its parent object and its own key (empty when the path ends in an index).
struct Site {
  const json* parent = nullptr;
  std::string key;
};

Site site_of(const json& root, const MetricPath& path) {
  if (path.empty() || path.back().kind != PathStep::Kind::kKey) return {};
  const MetricPath parent_path(path.begin(), path.end() - 1);
  return {resolve_path(root, parent_path), path.back().key};
}

// Per-repetition samples stored beside a statistic ("issue_time_s": {"median", ..., "samples": [...]}).
std::vector<double> samples_at(const Site& site) {
  static const std::set<std::string> kStatistics{"median", "mean", "p10", "p90", "min", "max"};
  std::vector<double> out;
  if (!site.parent || !kStatistics.count(site.key)) return out;
  const json* samples = member(*site.parent, "samples");
  if (!samples || !samples->is_array()) return out;
  for (const json& v : *samples) {
    if (!v.is_number() || !std::isfinite(v.get<double>())) return {};  // no test on what the reader would refuse
    out.push_back(v.get<double>());
  }
  return out;
}

// The 95% interval stored beside a model value: "<key>_ci95", "<stem>_ci95" (R_Bps -> R_ci95), or "ci95"
// in an element whose main value this is ("bytes" of a Q row, "s" of a T_iss^0 row).
std::optional<std::pair<double, double>> ci95_at(const Site& site) {
  if (!site.parent) return std::nullopt;
  std::vector<std::string> names{site.key + "_ci95"};
  if (const auto us = site.key.rfind('_'); us != std::string::npos && us > 0) names.push_back(site.key.substr(0, us) + "_ci95");
  if (site.key == "bytes" || site.key == "s" || site.key == "value") names.push_back("ci95");
  for (const std::string& name : names) {
    const json* ci = member(*site.parent, name.c_str());
    if (ci && ci->is_array() && ci->size() == 2 && (*ci)[0].is_number() && (*ci)[1].is_number()) {
      return std::make_pair((*ci)[0].get<double>(), (*ci)[1].get<double>());
    }
  }
  return std::nullopt;
}

// The fitter's identification flag beside a model value: "<key>_bound", "<stem>_bound" (R_Bps -> R_bound),
// or "bound" in an element whose main value this is (a Q row's "bytes"). Only a string counts.
std::optional<std::string> bound_at(const Site& site) {
  if (!site.parent) return std::nullopt;
  std::vector<std::string> names{site.key + "_bound"};
  if (const auto us = site.key.rfind('_'); us != std::string::npos && us > 0) names.push_back(site.key.substr(0, us) + "_bound");
  if (site.key == "bytes" || site.key == "s" || site.key == "value") names.push_back("bound");
  for (const std::string& name : names) {
    const json* b = member(*site.parent, name.c_str());
    if (b && b->is_string()) return b->get<std::string>();
  }
  return std::nullopt;
}

bool is_identified(const std::optional<std::string>& bound) { return !bound || *bound == "fit"; }

// A value whose bound is not "fit" ("not_identified", "lower") is a diagnostic, not a measurement, so the
// gate compares the bounds instead of the values (docs/gate.md). nullopt: both identified, compare values.
std::optional<Comparison> judge_bounds(const MetricSpec& m, const json* b_value, const Site& b_site, const json* c_value,
                                       const Site& c_site) {
  const std::optional<std::string> b = bound_at(b_site);
  const std::optional<std::string> c = bound_at(c_site);
  if (is_identified(b) && is_identified(c)) return std::nullopt;
  Comparison row;
  if (b_value && b_value->is_number()) row.baseline = b_value->get<double>();
  if (c_value && c_value->is_number()) row.candidate = c_value->get<double>();
  if (row.baseline) row.tolerance = std::max(m.abs_tol, m.rel_tol * std::fabs(*row.baseline));
  if (is_identified(b)) {
    row.status = Status::kWorse;
    row.note = fmt::format("bound {} -> {}: no longer identified (values not compared)", b.value_or("fit"), *c);
  } else if (is_identified(c)) {
    row.status = Status::kBetter;
    row.note = fmt::format("bound {} -> {}: newly identified (values not compared)", *b, c.value_or("fit"));
  } else {
    row.status = Status::kNotApplicable;
    row.note = fmt::format("not identified in both (bound {} -> {}; values not compared)", *b, *c);
  }
  return row;
}

// One side of a comparison: the value and what stands beside it.
struct Observed {
  double value = 0;
  std::vector<double> samples;
  std::optional<std::pair<double, double>> ci95;
};

Observed observe(const json& value, const Site& site) {
  return {value.get<double>(), samples_at(site), ci95_at(site)};
}

Comparison judge(const MetricSpec& m, const GateConfig& config, const Observed& b, const Observed& c) {
  Comparison row;
  row.baseline = b.value;
  row.candidate = c.value;
  row.tolerance = std::max(m.abs_tol, m.rel_tol * std::fabs(b.value));
  row.baseline_samples = b.samples.size();
  row.candidate_samples = c.samples.size();
  bool significant = true;  // what the tolerance alone says unless a U test is possible
  if (!b.samples.empty() && !c.samples.empty()) {
    const std::size_t n_min = std::min(b.samples.size(), c.samples.size());
    if (n_min >= config.min_samples && smallest_p_value(b.samples.size(), c.samples.size()) < config.alpha) {
      row.evidence = Evidence::kUTest;
      row.p_value = mann_whitney_u(b.samples, c.samples).p_value;
      significant = *row.p_value < config.alpha;
    } else {
      row.evidence = Evidence::kNotTestable;
    }
  } else if (b.ci95 && c.ci95) {
    row.evidence = Evidence::kCi95;
    row.ci95_overlap = b.ci95->first <= c.ci95->second && c.ci95->first <= b.ci95->second;
  }
  const double change = c.value - b.value;
  if (std::fabs(change) <= row.tolerance) {
    row.status = Status::kSame;
  } else if (!significant) {
    row.status = Status::kNoise;
    row.note = fmt::format("beyond tolerance, not significant (p >= alpha {:g})", config.alpha);
  } else if (m.direction == Direction::kHigher) {
    row.status = change > 0 ? Status::kBetter : Status::kWorse;
  } else if (m.direction == Direction::kLower) {
    row.status = change < 0 ? Status::kBetter : Status::kWorse;
  } else {
    row.status = Status::kWorse;
  }
  return row;
}

Comparison missing(const MetricSpec& m, double baseline, std::string note) {
  Comparison c;
  c.baseline = baseline;
  c.tolerance = std::max(m.abs_tol, m.rel_tol * std::fabs(baseline));
  c.status = Status::kMissing;
  c.note = std::move(note);
  return c;
}

struct Element {
  std::string key;       // match key
  const json* element;   // the array element
};

// Elements of a [*] array with their match keys; two with one key are input_error (`which` file).
std::vector<Element> keyed_elements(const json* array, const MetricSpec& m, const std::string& field,
                                    const char* which, bool require_key) {
  std::vector<Element> out;
  if (!array || !array->is_array()) return out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const json& element = (*array)[i];
    const auto key = match_key(element, m);
    if (!key) {
      if (require_key) throw input_error(field, fmt::format("{} element {} lacks a match_by value", which, i));
      continue;  // cannot be matched; its baseline counterpart shows up as MISSING
    }
    if (!seen.insert(*key).second) {
      throw input_error(field, fmt::format("{} has two elements matching {}", which, *key));
    }
    out.push_back({*key, &element});
  }
  return out;
}

// One metric being compared: its spec, the config field that names it (for errors), and the report its rows go to.
struct MetricRows {
  const MetricSpec& m;
  const GateConfig& config;
  std::size_t index;
  std::string field;
  GateReport& report;
  // Appends a row of this metric for one instance (an element's label; "" for a value without [*]).
  void add(Comparison c, std::string instance) {
    c.metric_index = index;
    c.metric = m.name;
    c.instance = std::move(instance);
    report.rows.push_back(std::move(c));
  }
  // The metric is not in the baseline: input_error unless it is optional, then one N/A row.
  void absent_from_baseline(const std::string& what) {
    if (!m.optional) throw input_error(field, "\"" + m.name + "\" " + what + " (mark the metric \"optional\": true to allow)");
    Comparison c;
    c.status = Status::kNotApplicable;
    c.note = "not in baseline";
    add(c, "");
  }
};

// A metric without [*]: the one value of each file, its bounds compared where either is not identified, else
// its value judged (MISSING where the candidate has no number).
void compare_value(MetricRows& mr, const json& baseline, const json& candidate, const json* b, const json* c) {
  const MetricSpec& m = mr.m;
  if (b && c) {
    if (auto row = judge_bounds(m, b, site_of(baseline, m.prefix), c, site_of(candidate, m.prefix))) return mr.add(*row, "");
  }
  if (!b || b->is_null()) return mr.absent_from_baseline("is not in the baseline");
  if (!b->is_number()) throw input_error(mr.field, fmt::format("baseline value is {}, not a number", report::json_type_name(*b)));
  if (!c || !c->is_number()) return mr.add(missing(m, b->get<double>(), c ? "not a number in candidate" : "not in candidate"), "");
  return mr.add(judge(m, mr.config, observe(*b, site_of(baseline, m.prefix)), observe(*c, site_of(candidate, m.prefix))), "");
}

// The [*] elements of both files with their match keys, the candidate's by key, and labels over every distinct
// element (the baseline's, then the candidate's the baseline lacks), so that no two rows read alike.
struct MatchedElements {
  std::vector<Element> base, cand;
  std::map<std::string, const json*> cand_by_key;
  std::set<std::string> base_keys;
  std::vector<std::string> labels;
};

MatchedElements match_elements(const MetricRows& mr, const json* b, const json* c) {
  MatchedElements me;
  me.base = keyed_elements(b, mr.m, mr.field, "baseline", true);
  me.cand = keyed_elements(c, mr.m, mr.field, "candidate", false);
  for (const Element& e : me.cand) me.cand_by_key[e.key] = e.element;
  for (const Element& e : me.base) me.base_keys.insert(e.key);

  // Labels over every distinct element of both files, so that no two rows read alike.
  std::vector<const json*> labelled;
  for (const Element& e : me.base) labelled.push_back(e.element);
  for (const Element& e : me.cand) {
    if (!me.base_keys.count(e.key)) labelled.push_back(e.element);
  }
  me.labels = element_labels(labelled, mr.m);
  return me;
}

// How many baseline elements were compared, and the rows of those with no candidate element that max_missing may
// allow.
struct ElementTally {
  std::size_t compared = 0;
  std::vector<std::size_t> unmatched;  // rows of baseline elements with no candidate element (max_missing)
};

// A baseline element with no candidate element: MISSING, its row remembered where missing_only_where lets it be
// absent (the baseline element says which kind it is).
void add_unmatched(MetricRows& mr, const json& element, const json& v, const std::string& label, ElementTally& tally) {
  const MetricSpec& m = mr.m;
  bool may_be_absent = true;  // missing_only_where: the baseline element says which kind it is
  for (const auto& [key, value] : m.missing_only_where) {
    const json* f = member(element, key.c_str());
    may_be_absent = may_be_absent && f && f->is_string() && f->get<std::string>() == value;
  }
  if (may_be_absent) tally.unmatched.push_back(mr.report.rows.size());
  mr.add(missing(m, v.get<double>(), may_be_absent || m.max_missing == 0
                                         ? "no matching element in candidate"
                                         : "no matching element in candidate (not one max_missing allows: "
                                           "missing_only_where)"),
         label);
}

// Baseline element i against the candidate's element of the same key: its bounds, or MISSING (no such element,
// skipped there, or no value there), or its value judged. A skipped baseline element or one without the value is
// not compared.
void compare_element(MetricRows& mr, const MatchedElements& me, std::size_t i, ElementTally& tally) {
  const MetricSpec& m = mr.m;
  const MetricPath& suffix = m.suffix;
  const json& element = *me.base[i].element;
  if (is_skipped(element)) return;  // nothing was measured: nothing to hold the candidate to
  const json* v = resolve_path(element, suffix);
  if (!v) return;                   // e.g. completion_s on a point run without completion mode
  const auto it = me.cand_by_key.find(me.base[i].key);
  if (it != me.cand_by_key.end() && !is_skipped(*it->second)) {
    const json* w = resolve_path(*it->second, suffix);
    if (auto row = judge_bounds(m, v, site_of(element, suffix), w, site_of(*it->second, suffix))) {
      ++tally.compared;
      mr.add(*row, me.labels[i]);
      return;
    }
  }
  if (!v->is_number()) {
    throw input_error(mr.field, fmt::format("baseline value of {} is {}, not a number", me.labels[i], report::json_type_name(*v)));
  }
  ++tally.compared;
  if (it == me.cand_by_key.end()) return add_unmatched(mr, element, *v, me.labels[i], tally);
  const json& other = *it->second;
  if (is_skipped(other)) {
    const json* reason = member(other, "skip_reason");
    mr.add(missing(m, v->get<double>(), "skipped in candidate: " + (reason && reason->is_string() ? reason->get<std::string>() : "")), me.labels[i]);
    return;
  }
  const json* w = resolve_path(other, suffix);
  if (!w || !w->is_number()) { mr.add(missing(m, v->get<double>(), "no value in candidate"), me.labels[i]); return; }
  mr.add(judge(m, mr.config, observe(*v, site_of(element, suffix)), observe(*w, site_of(other, suffix))), me.labels[i]);
}

// max_missing: the unmatched rows become N/A where they are few enough and some element matched; else their
// note says why the allowance does not cover them.
void apply_max_missing(MetricRows& mr, const ElementTally& tally) {
  const MetricSpec& m = mr.m;
  const std::vector<std::size_t>& unmatched = tally.unmatched;
  // An allowance covers rows a fit emits in one run and not the next, never a candidate with none of them.
  const std::size_t absent = static_cast<std::size_t>(std::count_if(
      mr.report.rows.begin(), mr.report.rows.end(), [&](const Comparison& row) {
        return row.metric_index == mr.index && row.status == Status::kMissing;
      }));
  const bool some_matched = tally.compared > absent;
  if (!unmatched.empty() && unmatched.size() <= m.max_missing && some_matched) {
    for (std::size_t row : unmatched) {
      mr.report.rows[row].status = Status::kNotApplicable;
      mr.report.rows[row].note = fmt::format("no matching element in candidate ({} of at most {} allowed by max_missing)",
                                             unmatched.size(), m.max_missing);
    }
  } else if (!unmatched.empty() && m.max_missing > 0) {
    for (std::size_t row : unmatched)
      mr.report.rows[row].note = some_matched
                                     ? fmt::format("no matching element in candidate ({} such elements, more than "
                                                   "max_missing {})", unmatched.size(), m.max_missing)
                                     : "no matching element in candidate (none of the baseline's elements is there: "
                                       "max_missing allows none)";
  }
}

// The candidate's elements the baseline lacks, each with a number: NEW rows.
void add_new_elements(MetricRows& mr, const MatchedElements& me) {
  std::size_t label_index = me.base.size();
  for (const Element& e : me.cand) {
    if (me.base_keys.count(e.key)) continue;
    const std::string& label = me.labels[label_index++];
    if (is_skipped(*e.element)) continue;
    const json* w = resolve_path(*e.element, mr.m.suffix);
    if (!w || !w->is_number()) continue;
    Comparison row;
    row.candidate = w->get<double>();
    row.status = Status::kNew;
    row.note = "not in baseline";
    mr.add(row, label);
  }
}

void compare_metric(const json& baseline, const json& candidate, const GateConfig& config, std::size_t index,
                    GateReport& report) {
  const MetricSpec& m = config.metrics[index];
  MetricRows mr{m, config, index, report::index_path("metrics", index) + ".name", report};
  const json* b = resolve_path(baseline, m.prefix);
  const json* c = resolve_path(candidate, m.prefix);
  if (!m.has_wildcard) return compare_value(mr, baseline, candidate, b, c);
  if (!b || b->is_null()) return mr.absent_from_baseline("is not in the baseline");
  if (!b->is_array()) throw input_error(mr.field, fmt::format("baseline value before [*] is {}, not an array", report::json_type_name(*b)));
  const MatchedElements me = match_elements(mr, b, c);
  ElementTally tally;
  for (std::size_t i = 0; i < me.base.size(); ++i) compare_element(mr, me, i, tally);
  apply_max_missing(mr, tally);
  if (tally.compared == 0) {
    report.rows.erase(std::remove_if(report.rows.begin(), report.rows.end(),
                                     [&](const Comparison& row) { return row.metric_index == index; }),
                      report.rows.end());
    return mr.absent_from_baseline("has no value in any baseline element");
  }
  add_new_elements(mr, me);
}

}  // namespace

const char* status_name(Status status) {
  switch (status) {
    case Status::kSame: return "SAME";
    case Status::kBetter: return "BETTER";
    case Status::kWorse: return "WORSE";
    case Status::kNoise: return "NOISE";
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
    compare_metric(baseline, candidate, config, i, report);
  }
  return report;
}

namespace {

// The drain rate of a calibration's model section is a rate: a number > 0 (finite: the reader refuses 1e999).
// The result reader keeps the model section as written, so a hand-edited or broken file with R <= 0 would
// otherwise be gated like any value (and two such files pass). Null only where the fitter says so
// (R_bound "not_identified"). Refused with exit 2 naming the file and the field.
void check_drain_rate(const json& doc, const std::string& path, const char* role) {
  if (!doc.is_object() || !doc.contains("model") || !doc["model"].is_object()) return;
  const json& model = doc["model"];
  const bool not_identified = model.contains("R_bound") && model["R_bound"] == "not_identified";
  const auto check = [&](const json& v, const std::string& field) {
    if (v.is_null() && not_identified) return;
    if (v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0) return;
    throw input_error(field, fmt::format("{} {} holds {}; a drain rate must be a finite number of bytes per second "
                                         "> 0 (null only with R_bound \"not_identified\"): fix or re-fit the file",
                                         role, path, v.dump()));
  };
  if (model.contains("R_Bps")) check(model["R_Bps"], "model.R_Bps");
  if (model.contains("R_ci95") && model["R_ci95"].is_array())
    for (std::size_t i = 0; i < model["R_ci95"].size(); ++i)
      check(model["R_ci95"][i], fmt::format("model.R_ci95[{}]", i));
}

}  // namespace

GateReport compare_files(const std::string& baseline_path, const std::string& candidate_path,
                         const GateConfig& config) {
  // Canonical form: paths resolve against the writer's key names, whatever the files' layout. The raw
  // parse is kept only for the file's own schema version.
  const std::string baseline_text = report::read_text_file(baseline_path);
  const std::string candidate_text = report::read_text_file(candidate_path);
  const json baseline = report::to_json(report::parse_result_text(baseline_text, baseline_path));
  const json candidate = report::to_json(report::parse_result_text(candidate_text, candidate_path));
  check_drain_rate(baseline, baseline_path, "--baseline");
  check_drain_rate(candidate, candidate_path, "--candidate");
  // A calibration gated against a file that is none (model: null) is a misconfiguration, not a regression: every
  // model row would read MISSING and exit 1 (hostile review of 2026-12-07 evening). The reverse is refused already.
  const auto is_calibration = [](const json& d) { return d.is_object() && d.contains("model") && d["model"].is_object(); };
  if (is_calibration(baseline) && !is_calibration(candidate))
    throw input_error("--candidate", fmt::format("{} has no model section (model: null): it is not a calibration, and "
                                                 "the baseline {} is; give a calibration file written by "
                                                 "xstage-calibrate", candidate_path, baseline_path));
  GateReport report;
  try {
    report = compare(baseline, candidate, config);
  } catch (const Error& e) {
    throw Error(e.code(), e.domain(), e.field(), "gate config vs baseline " + baseline_path + ": " + e.what());
  }
  report.warnings = provenance_warnings(provenance_of(report::parse_json_text(baseline_text, baseline_path), baseline, baseline_path),
                                        provenance_of(report::parse_json_text(candidate_text, candidate_path), candidate, candidate_path));
  report.identical_inputs = baseline_text == candidate_text;
  return report;
}

}  // namespace xs::gate
