// xstage gate layer: the gate config (docs/gate.md): which metrics of a result file to compare, which
// direction is better, and how much change is tolerated. Read strictly: a bad config is exit 2.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace xs::gate {

inline constexpr const char* kGateSchemaName = "xstage.gate";
inline constexpr int kGateSchemaMajor = 1;
inline constexpr int kGateSchemaMinor = 0;  // a newer minor only adds fields (docs/result-schema.md, "Versioning")

enum class Direction {
  kHigher,  // larger is better (R_Bps): a drop beyond tolerance is WORSE, a rise BETTER
  kLower,   // smaller is better (issue time, relative error)
  kEither,  // two-sided: any change beyond tolerance is WORSE
};
const char* direction_name(Direction direction);

// A metric name is a path into the result JSON: "model.R_Bps", "model.R_ci95[0]",
// "points[*].issue_time_s.median". One step is a key, an array index, or the one allowed wildcard.
struct PathStep {
  enum class Kind { kKey, kIndex, kWildcard } kind = Kind::kKey;
  std::string key;
  std::size_t index = 0;
};
using MetricPath = std::vector<PathStep>;
// Throws input_error(field, ...) naming the grammar; `allow_wildcard` false for match_by paths.
MetricPath parse_metric_path(const std::string& text, const std::string& field, bool allow_wildcard);
// The value at `path` (no wildcard), or nullptr.
const nlohmann::json* resolve_path(const nlohmann::json& root, const MetricPath& path);

struct MetricSpec {
  std::string name;                 // as written in the config
  MetricPath prefix;                // steps before [*] (the whole path when there is no wildcard)
  bool has_wildcard = false;
  MetricPath suffix;                // steps after [*], applied to each element
  std::vector<std::string> match_by_names;  // element paths that identify an element across files
  std::vector<MetricPath> match_by;
  Direction direction = Direction::kEither;
  double rel_tol = 0;               // |change| <= max(abs_tol, rel_tol * |baseline|) is SAME
  double abs_tol = 0;
  bool optional = false;            // absent from the baseline: reported N/A instead of exit 2
  // [*] metrics: up to this many baseline elements with no matching candidate element are N/A (the element's
  // existence is a fit's classification that moves run to run, e.g. a T_iss^0 row at the knee); more than
  // this many are all MISSING. 0 (the default): every absent element is MISSING.
  std::size_t max_missing = 0;
  // With max_missing: only baseline elements whose member `first` equals `second` (a string) may be absent
  // (e.g. {"source": "isolated_floor"}); any other absent element is MISSING. Empty: any element.
  std::vector<std::pair<std::string, std::string>> missing_only_where;
  std::string description;
};

struct GateConfig {
  std::string description;
  // Noise test (docs/gate.md): a value beyond tolerance is WORSE/BETTER only if the Mann-Whitney U test
  // on both files' per-repetition samples gives p < alpha, where both sides have >= min_samples samples
  // and that many samples can reach p < alpha at all; otherwise the tolerance alone decides.
  double alpha = 0.05;
  std::size_t min_samples = 4;
  std::vector<MetricSpec> metrics;
};

GateConfig gate_config_from_json(const nlohmann::json& j);
GateConfig read_gate_config(const std::string& path);

}  // namespace xs::gate
