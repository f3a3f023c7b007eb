// xstage gate layer: compares a candidate result file with a baseline, metric by metric, under the gate
// config's directions and tolerances. One row per metric instance (a scalar, or one matched element).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/gate_config.hpp"

namespace xs::gate {

enum class Status {
  kSame,     // |change| within tolerance
  kBetter,   // beyond tolerance in the good direction
  kWorse,    // beyond tolerance in the bad direction (or any direction for "either"): fails the gate
  kMissing,  // in the baseline, not in the candidate (absent, skipped, not a number): fails the gate
  kNew,      // only in the candidate: shown, never fails
  kNotApplicable,  // an `optional` metric the baseline does not have
};
const char* status_name(Status status);  // "SAME", "BETTER", "WORSE", "MISSING", "NEW", "N/A"
inline bool is_failure(Status status) { return status == Status::kWorse || status == Status::kMissing; }

struct Comparison {
  std::size_t metric_index = 0;     // into GateConfig::metrics
  std::string metric;               // the metric's name
  std::string instance;             // "" for a scalar; the matched element's label for [*]
  std::optional<double> baseline;
  std::optional<double> candidate;
  double tolerance = 0;             // max(abs_tol, rel_tol * |baseline|)
  Status status = Status::kSame;
  std::string note;                 // why MISSING / N/A
};

struct GateReport {
  std::vector<Comparison> rows;
  std::size_t count(Status status) const;
  bool passed() const;
};

// Both documents in canonical form (report::to_json of a strictly read ResultFile). A config that does
// not fit the baseline (metric absent and not optional, a non-number, duplicate match keys) is
// input_error naming the metric: the gate cannot decide, so exit 2 rather than pass or fail.
GateReport compare(const nlohmann::json& baseline, const nlohmann::json& candidate, const GateConfig& config);

// Reads both result files strictly, then compares.
GateReport compare_files(const std::string& baseline_path, const std::string& candidate_path,
                         const GateConfig& config);

}  // namespace xs::gate
