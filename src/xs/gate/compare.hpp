// xstage gate layer: compares a candidate result file with a baseline, metric by metric, under the gate
// config's directions and tolerances. One row per metric instance (a scalar, or one matched element).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/gate/gate_config.hpp"

namespace xs::gate {

enum class Status {
  kSame,     // |change| within tolerance
  kBetter,   // beyond tolerance in the good direction (and significant where the U test applies)
  kWorse,    // beyond tolerance in the bad direction (or any direction for "either") and, where the U
             // test applies, significant (p < alpha): fails the gate
  kNoise,    // beyond tolerance, but the U test on the samples finds no significant shift (p >= alpha)
  kMissing,  // in the baseline, not in the candidate (absent, skipped, not a number): fails the gate
  kNew,      // only in the candidate: shown, never fails
  kNotApplicable,  // an `optional` metric the baseline does not have, or a value not identified in both files
};
const char* status_name(Status status);  // "SAME", "BETTER", "WORSE", "NOISE", "MISSING", "NEW", "N/A"
inline bool is_failure(Status status) { return status == Status::kWorse || status == Status::kMissing; }

// What backs a verdict beyond the fixed tolerance.
enum class Evidence {
  kNone,         // no samples and no interval (a plain number)
  kNotTestable,  // samples on both sides, but too few for the U test to reach p < alpha
  kUTest,        // Mann-Whitney U test on the per-repetition samples: p_value is set
  kCi95,         // model-level value with a 95% interval in both files: ci95_overlap is set
};

struct Comparison {
  std::size_t metric_index = 0;     // into GateConfig::metrics
  std::string metric;               // the metric's name
  std::string instance;             // "" for a scalar; the matched element's label for [*]
  std::optional<double> baseline;
  std::optional<double> candidate;
  double tolerance = 0;             // max(abs_tol, rel_tol * |baseline|)
  Status status = Status::kSame;
  std::string note;                 // why MISSING / N/A / NOISE
  Evidence evidence = Evidence::kNone;
  std::size_t baseline_samples = 0;   // per-repetition samples found beside the value
  std::size_t candidate_samples = 0;
  std::optional<double> p_value;      // two-sided Mann-Whitney U, when evidence == kUTest
  bool ci95_overlap = false;          // when evidence == kCi95
};

struct GateReport {
  std::vector<Comparison> rows;
  // Baseline and candidate come from different backends, targets, devices or schema versions: the
  // comparison still runs (exit code unchanged) but is probably not like with like.
  std::vector<std::string> warnings;
  // The two files hold the same bytes: every row is SAME by construction, and a PASS says nothing.
  bool identical_inputs = false;
  std::size_t count(Status status) const;
  bool passed() const;
};

// Both documents in canonical form (warnings are left to compare_files, which sees the raw schema) (report::to_json of a strictly read ResultFile). A config that does
// not fit the baseline (metric absent and not optional, a non-number, duplicate match keys) is
// input_error naming the metric: the gate cannot decide, so exit 2 rather than pass or fail.
GateReport compare(const nlohmann::json& baseline, const nlohmann::json& candidate, const GateConfig& config);

// Reads both result files strictly, then compares.
GateReport compare_files(const std::string& baseline_path, const std::string& candidate_path,
                         const GateConfig& config);

}  // namespace xs::gate
