// xstage gate layer: table, JUnit XML and JSON renderings of a gate report (see gate_output.hpp).
#include "xs/gate/gate_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "xs/gate/units.hpp"

namespace xs::gate {
using nlohmann::json;

namespace {

constexpr std::array<Status, 7> kStatuses{Status::kWorse, Status::kMissing, Status::kNoise,        Status::kSame,
                                          Status::kBetter, Status::kNew,    Status::kNotApplicable};

Unit unit_of(const Comparison& c) { return unit_of_metric(c.metric); }

std::string value_text(const std::optional<double>& v, Unit unit) { return v ? format_value(*v, unit) : "-"; }

std::string delta_text(const Comparison& c) {
  if (!c.baseline || !c.candidate) return "-";
  return format_delta(*c.candidate - *c.baseline, unit_of(c));
}

// Relative change where the baseline is non-zero.
std::string rel_text(const Comparison& c) {
  if (!c.baseline || !c.candidate || *c.baseline == 0) return "-";
  return fmt::format("{:+.2f}%", 100.0 * (*c.candidate - *c.baseline) / std::fabs(*c.baseline));
}

std::string tolerance_text(const Comparison& c) {
  if (!c.baseline) return "-";
  return format_value(c.tolerance, unit_of(c));
}

bool shown(const Comparison& c, const TableOptions& options) { return !options.only_failures || is_failure(c.status); }

std::vector<std::string> human_cells(const Comparison& c) {
  return {status_name(c.status), c.metric, c.instance.empty() ? "-" : c.instance, value_text(c.baseline, unit_of(c)),
          value_text(c.candidate, unit_of(c)), delta_text(c), rel_text(c), tolerance_text(c), evidence_text(c), c.note};
}

const std::vector<std::string> kHumanHeader = {"verdict", "metric", "instance", "baseline", "candidate", "delta",
                                               "rel", "tolerance", "noise", "note"};

std::string junit_detail(const Comparison& c, const GateConfig& config) {
  return fmt::format("{}: baseline {}, candidate {}, delta {} ({}), tolerance {}, direction {}, noise {}{}{}",
                     status_name(c.status), value_text(c.baseline, unit_of(c)), value_text(c.candidate, unit_of(c)),
                     delta_text(c), rel_text(c), tolerance_text(c), direction_name(config.metrics[c.metric_index].direction),
                     evidence_text(c), c.note.empty() ? "" : "; ", c.note);
}

}  // namespace

std::string evidence_text(const Comparison& c) {
  switch (c.evidence) {
    case Evidence::kNone: return "-";
    case Evidence::kNotTestable: return fmt::format("not testable (n={}/{})", c.baseline_samples, c.candidate_samples);
    case Evidence::kUTest:
      return fmt::format("p={} ({}/{})", c.p_value ? fmt::format("{:.2g}", *c.p_value) : "?", c.baseline_samples,
                         c.candidate_samples);
    case Evidence::kCi95: return c.ci95_overlap ? "ci95 overlap" : "ci95 disjoint";
  }
  return "-";
}

std::string summary_line(const GateReport& report) {
  std::string counts;
  for (Status s : kStatuses) {
    if (const auto n = report.count(s)) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, status_name(s));
  }
  const std::size_t failures = report.count(Status::kWorse) + report.count(Status::kMissing);
  std::string head = failures == 0 ? "PASS" : fmt::format("FAIL: {} failing", failures);
  std::string line = fmt::format("{} ({} rows: {}); WORSE and MISSING fail the gate", head, report.rows.size(),
                                 counts.empty() ? "none" : counts);
  if (!report.warnings.empty()) {
    line += fmt::format("; {} WARNING{}: baseline and candidate differ in provenance", report.warnings.size(),
                        report.warnings.size() == 1 ? "" : "S");
  }
  return line;
}

std::string format_table(const GateReport& report, const GateConfig& /*config*/, const TableOptions& options) {
  std::vector<std::vector<std::string>> cells = {kHumanHeader};
  for (const Comparison& c : report.rows) {
    if (shown(c, options)) cells.push_back(human_cells(c));
  }
  std::string out;
  if (cells.size() > 1) {
    std::vector<std::size_t> widths(kHumanHeader.size(), 0);
    for (const auto& row : cells) {
      for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    }
    for (const auto& row : cells) {
      std::string line;
      for (std::size_t i = 0; i < row.size(); ++i) line += fmt::format("{:<{}}  ", row[i], widths[i]);
      line.erase(line.find_last_not_of(' ') + 1);
      out += line + "\n";
    }
  } else if (options.only_failures) {
    out += "no failing rows\n";
  }
  return out + summary_line(report) + "\n";
}

report::Table comparison_table(const GateReport& report, const GateConfig& config, bool human,
                               const TableOptions& options) {
  report::Table table;
  if (human) {
    table.columns = kHumanHeader;
    for (const Comparison& c : report.rows) {
      if (!shown(c, options)) continue;
      std::vector<report::Cell> row;
      for (std::string& text : human_cells(c)) row.emplace_back(std::move(text));
      table.add_row(std::move(row));
    }
    return table;
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  table.columns = {"verdict", "metric", "instance", "baseline", "candidate", "unit", "delta", "rel_delta",
                   "tolerance", "p_value", "n_baseline", "n_candidate", "ci95_overlap", "note"};
  for (const Comparison& c : report.rows) {
    if (!shown(c, options)) continue;
    const bool both = c.baseline && c.candidate;
    table.add_row({std::string(status_name(c.status)), c.metric, c.instance, c.baseline.value_or(nan),
                   c.candidate.value_or(nan), std::string(unit_symbol(unit_of(c))),
                   both ? *c.candidate - *c.baseline : nan,
                   both && *c.baseline != 0 ? (*c.candidate - *c.baseline) / std::fabs(*c.baseline) : nan,
                   c.baseline ? c.tolerance : nan, c.p_value.value_or(nan),
                   c.evidence == Evidence::kNone || c.evidence == Evidence::kCi95 ? nan : double(c.baseline_samples),
                   c.evidence == Evidence::kNone || c.evidence == Evidence::kCi95 ? nan : double(c.candidate_samples),
                   std::string(c.evidence == Evidence::kCi95 ? (c.ci95_overlap ? "yes" : "no") : ""), c.note});
  }
  (void)config;
  return table;
}

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 allows no control characters but tab/LF/CR, not even as &#N;, nor U+FFFE/U+FFFF
        // (UTF-8 EF BF BE/BF). Strings reach here UTF-8-checked by the JSON parser.
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += '?';
        } else if (c == 0xEF && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0xBF &&
                   (static_cast<unsigned char>(text[i + 2]) | 1) == 0xBF) {
          out += '?';
          i += 2;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string to_junit_xml(const GateReport& report, const GateConfig& config) {
  std::size_t total_failures = 0;
  for (const Comparison& c : report.rows) total_failures += is_failure(c.status) ? 1 : 0;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"xstage-gate\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n",
                     report.rows.size(), total_failures);
  for (std::size_t m = 0; m < config.metrics.size(); ++m) {
    std::vector<const Comparison*> rows;
    for (const Comparison& c : report.rows) {
      if (c.metric_index == m) rows.push_back(&c);
    }
    const auto failures = std::count_if(rows.begin(), rows.end(), [](const Comparison* c) { return is_failure(c->status); });
    const auto skipped = std::count_if(rows.begin(), rows.end(),
                                       [](const Comparison* c) { return c->status == Status::kNotApplicable; });
    const std::string name = xml_escape(config.metrics[m].name);
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n", name,
                       rows.size(), failures, skipped);
    for (const Comparison* c : rows) {
      const std::string detail = junit_detail(*c, config);
      out += fmt::format("    <testcase classname=\"xstage-gate.{}\" name=\"{}\" time=\"0\"", name,
                         xml_escape(c->instance.empty() ? c->metric : c->metric + " " + c->instance));
      if (is_failure(c->status)) {
        out += fmt::format(">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                           status_name(c->status), xml_escape(detail), xml_escape(detail));
      } else if (c->status == Status::kNotApplicable) {
        out += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", xml_escape(detail));
      } else {
        out += fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml_escape(detail));
      }
    }
    out += "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

json report_to_json(const GateReport& report, const GateConfig& config) {
  auto number = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json counts = json::object();
  for (Status s : kStatuses) counts[status_name(s)] = report.count(s);
  json rows = json::array();
  for (const Comparison& c : report.rows) {
    json change = nullptr, rel_change = nullptr;
    if (c.baseline && c.candidate) {
      change = *c.candidate - *c.baseline;
      if (*c.baseline != 0) rel_change = (*c.candidate - *c.baseline) / std::fabs(*c.baseline);
    }
    const bool sampled = c.evidence == Evidence::kUTest || c.evidence == Evidence::kNotTestable;
    rows.push_back({{"metric", c.metric}, {"instance", c.instance}, {"unit", unit_symbol(unit_of(c))},
                    {"direction", direction_name(config.metrics[c.metric_index].direction)},
                    {"baseline", number(c.baseline)}, {"candidate", number(c.candidate)}, {"change", change},
                    {"rel_change", rel_change}, {"tolerance", c.tolerance},
                    {"n_baseline", sampled ? json(c.baseline_samples) : json(nullptr)},
                    {"n_candidate", sampled ? json(c.candidate_samples) : json(nullptr)},
                    {"p_value", number(c.p_value)},
                    {"ci95_overlap", c.evidence == Evidence::kCi95 ? json(c.ci95_overlap) : json(nullptr)},
                    {"status", status_name(c.status)}, {"note", c.note}});
  }
  return {{"passed", report.passed()}, {"warnings", report.warnings}, {"identical_inputs", report.identical_inputs},
          {"alpha", config.alpha},
          {"min_samples", config.min_samples}, {"counts", counts}, {"rows", rows}};
}

}  // namespace xs::gate
