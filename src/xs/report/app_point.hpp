// xstage report layer: one point of an application suite (fa_a2a, megamoe) in the result file's points[]:
// its axes, per-variant times, same-round paired differences, verification, prediction and status. Plain
// data beside PointRecord (the micro-benchmark point); docs/result-schema.md "Application-suite points".
#pragma once
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "xs/common/stats.hpp"

namespace xs::report {

struct AppVerification {
  bool checked = false;                            // the outputs were compared with a reference
  bool passed = false;                             // checked and within tolerance
  std::string detail;                              // worst element, first wrong index ...; "" when none
  nlohmann::json values = nlohmann::json::object();  // suite's figures (errors, wrong counts, seed): free-form
};

struct AppPoint {
  std::string id;                                  // stable dotted id "<suite>.<target>", e.g. "fa_a2a.host"
  std::string suite;                               // "fa_a2a"
  nlohmann::json axes = nlohmann::json::object();  // canonical spec: everything that shapes the measurement
  std::string status = "ok";                       // ok | skipped | failed
  std::string reason;                              // why skipped/failed ("" when ok)
  std::map<std::string, Summary> variants;         // seconds per launch, one sample per round (>= 0)
  std::map<std::string, Summary> paired;           // same-round differences "<a>_minus_<b>", seconds (signed)
  AppVerification verification;
  nlohmann::json prediction = nlohmann::json();    // null or the model's prediction (free-form object)
  nlohmann::json extra = nlohmann::json::object(); // suite-specific derived quantities (free-form)
};

// A point that makes the run exit 1: it failed, or it was checked and did not pass.
bool failed_verification(const AppPoint& point);

// Writers refuse what the reader refuses (NaN/inf, empty id/suite, a status outside ok|skipped|failed, a
// skipped/failed point without a reason, negative variant times); input_error names the JSON path.
nlohmann::json to_json(const AppPoint& point);
AppPoint app_point_from_json(const nlohmann::json& j, const std::string& path);
// points[i] is an application point when it has "axes" (a micro-benchmark point has "spec" instead).
bool is_app_point_json(const nlohmann::json& j);
// Compact JSON of id and axes: what --resume matches finished points by.
std::string app_point_key(const std::string& id, const nlohmann::json& axes);

}  // namespace xs::report
