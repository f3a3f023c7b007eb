// xstage gate layer: table, JUnit XML and JSON renderings of a gate report (see gate_output.hpp).
#include "gate/gate_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace xs::gate {
using nlohmann::json;

namespace {

constexpr std::array<Status, 6> kStatuses{Status::kSame,    Status::kBetter, Status::kWorse,
                                          Status::kMissing, Status::kNew,    Status::kNotApplicable};

std::string number_text(const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : "-"; }

// Relative change where the baseline is non-zero, else the absolute change.
std::string change_text(const Comparison& c) {
  if (!c.baseline || !c.candidate) return "-";
  const double change = *c.candidate - *c.baseline;
  if (*c.baseline != 0) return fmt::format("{:+.2f}%", 100.0 * change / std::fabs(*c.baseline));
  return fmt::format("{:+.3g}", change);
}

std::string verdict(const GateReport& report) {
  std::string counts;
  for (Status s : kStatuses) {
    if (const auto n = report.count(s)) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, status_name(s));
  }
  return fmt::format("{} ({}); WORSE and MISSING fail the gate", report.passed() ? "PASS" : "FAIL", counts);
}

}  // namespace

std::string format_table(const GateReport& report, const GateConfig& config) {
  const std::vector<std::string> header = {"status", "metric", "instance", "baseline", "candidate",
                                           "change", "tolerance", "direction", "note"};
  std::vector<std::vector<std::string>> cells = {header};
  for (const Comparison& c : report.rows) {
    cells.push_back({status_name(c.status), c.metric, c.instance, number_text(c.baseline), number_text(c.candidate),
                     change_text(c), fmt::format("{:.3g}", c.tolerance),
                     direction_name(config.metrics[c.metric_index].direction), c.note});
  }
  std::vector<std::size_t> widths(header.size(), 0);
  for (const auto& row : cells) {
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) line += fmt::format("{:<{}}  ", row[i], widths[i]);
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out + verdict(report) + "\n";
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
      const std::string detail =
          fmt::format("{}: baseline {}, candidate {}, change {}, tolerance {:.3g}, direction {}{}{}", status_name(c->status),
                      number_text(c->baseline), number_text(c->candidate), change_text(*c), c->tolerance,
                      direction_name(config.metrics[m].direction), c->note.empty() ? "" : "; ", c->note);
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
    rows.push_back({{"metric", c.metric}, {"instance", c.instance},
                    {"direction", direction_name(config.metrics[c.metric_index].direction)},
                    {"baseline", number(c.baseline)}, {"candidate", number(c.candidate)}, {"change", change},
                    {"rel_change", rel_change}, {"tolerance", c.tolerance}, {"status", status_name(c.status)},
                    {"note", c.note}});
  }
  return {{"passed", report.passed()}, {"counts", counts}, {"rows", rows}};
}

}  // namespace xs::gate
