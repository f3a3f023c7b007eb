// xstage gate layer: the three renderings of a gate report: the terminal table, JUnit XML for CI, and
// JSON (--json) for scripts.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "gate/compare.hpp"

namespace xs::gate {

// One line per row (status, metric, instance, baseline, candidate, change, tolerance, note) and a
// closing verdict line ("PASS" / "FAIL: 1 WORSE, 2 MISSING").
std::string format_table(const GateReport& report, const GateConfig& config);

// <testsuites> with one <testsuite> per configured metric and one <testcase> per row; WORSE and MISSING
// are <failure>, N/A is <skipped>. Text is XML-escaped; characters XML 1.0 forbids become '?'.
std::string to_junit_xml(const GateReport& report, const GateConfig& config);
std::string xml_escape(const std::string& text);

// {"passed", "counts": {SAME, ...}, "rows": [{metric, instance, direction, baseline, candidate,
//  change, rel_change, tolerance, status, note}]}; absent numbers are null.
nlohmann::json report_to_json(const GateReport& report, const GateConfig& config);

}  // namespace xs::gate
