// xstage gate layer: the renderings of a gate report: the terminal table, the comparison as a
// report::Table (--csv, --md), JUnit XML for CI, and JSON (--json) for scripts.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "xs/gate/compare.hpp"
#include "xs/report/table.hpp"

namespace xs::gate {

struct TableOptions {
  bool only_failures = false;  // keep WORSE and MISSING rows only (the summary still counts every row)
};

// Aligned columns (verdict, metric, instance, baseline, candidate, delta, rel, tolerance, noise, note)
// with values in their units (52.6 GB/s, 190 ns), then the summary line (summary_line).
std::string format_table(const GateReport& report, const GateConfig& config, const TableOptions& options = {});

// "FAIL: 1 WORSE (of 523 compared: 515 SAME, 3 BETTER, 4 NOISE, 1 WORSE); WORSE and MISSING fail the gate"
// or "PASS: ...", plus "; N WARNINGS" when the files' provenance differs.
std::string summary_line(const GateReport& report);

// "p=0.011 (7/7)", "not testable (n=2/2)", "ci95 overlap", "ci95 disjoint" or "-".
std::string evidence_text(const Comparison& row);

// The comparison as a table. For CSV (`human` false): raw SI numbers (empty where absent) beside a
// unit column: verdict, metric, instance, baseline, candidate, unit, delta, rel_delta, tolerance,
// p_value, n_baseline, n_candidate, ci95_overlap, note. For Markdown (`human` true): the terminal
// table's text cells (values with units), honouring options.only_failures.
report::Table comparison_table(const GateReport& report, const GateConfig& config, bool human,
                               const TableOptions& options = {});

// <testsuites> with one <testsuite> per configured metric and one <testcase> per row; WORSE and MISSING
// are <failure>, N/A is <skipped>. Text is XML-escaped; characters XML 1.0 forbids become '?'.
std::string to_junit_xml(const GateReport& report, const GateConfig& config);
std::string xml_escape(const std::string& text);

// {"passed", "warnings", "alpha", "min_samples", "counts": {SAME, ...}, "rows": [{metric, instance,
//  unit, direction, baseline, candidate, change, rel_change, tolerance, n_baseline, n_candidate,
//  p_value, ci95_overlap, status, note}]}; absent numbers are null.
nlohmann::json report_to_json(const GateReport& report, const GateConfig& config);

}  // namespace xs::gate
