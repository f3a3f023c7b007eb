// xstage attention judge layer: what a calibration file says about the three parameters an FA-A2A prediction
// needs at one burst shape, as intervals that honour the fitter's flags (issue 27 item 4). A value the fitter
// marked unconstrained, a bound, or a value outside the measured table is never handed out as a point: the
// term then carries only the bracket the calibration's own measurements support, and why. Plain C++.
#pragma once
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "xs/model/platform_model.hpp"

namespace xs::attention::model {

// [lo, hi]; hi may be +inf (nothing bounds it from above).
struct Interval {
  double lo = 0, hi = INFINITY;
  bool bounded() const { return std::isfinite(lo) && std::isfinite(hi); }
};

// One model parameter at one shape: `point` only where the calibration measured it there (NaN otherwise),
// `range` always (the ci95 of a measured value, else the bracket), `why` says where a point is missing.
struct Term {
  double point = NAN;
  Interval range;
  std::string source;  // how the value or bracket was obtained
  std::string why;     // empty where `point` is set
  bool has_point() const { return std::isfinite(point); }
};

// A T_iss^0 row of the calibration's model section, with the fitter's flag.
struct Tiss0Row {
  int num_producers = 0;
  double volume_bytes = 0, issue_time_s = 0, ci_lo_s = 0, ci_hi_s = 0;
  bool constrained = true;
  std::string source;
};
// A measured burst of the calibration (isolated or periodic): its median issue time is >= T_iss^0(K, V)
// (backpressure only adds), so it bounds T_iss^0 from above at its (K, V) and, T_iss^0 being nondecreasing
// in V at fixed K, at every smaller V of the same K.
struct BurstObservation {
  int num_producers = 0;
  double volume_bytes = 0, issue_time_median_s = 0;
  std::string suite;
};

struct FaCalibration {
  xs::model::PlatformModel platform;
  std::string path, fnv1a64, target, git_sha, date_utc, backend;
  std::string device;  // meta.devices[0].name (empty where not recorded)
  std::vector<Tiss0Row> tiss0_rows;
  std::vector<BurstObservation> bursts;
  double copy_engine_bps = 0;  // extra.reference.copy_engine_Bps where measured; 0 otherwise
};

// From a calibration file's bytes (the strict result-file reader first; `path` names it in errors).
FaCalibration load_fa_calibration(std::string_view text, const std::string& path);
// From a `model` section alone (no measured bursts, no provenance): tests and constant models.
FaCalibration fa_calibration_from_model(const nlohmann::json& model_section, const std::string& name);
// A calibration from three numbers (xstage-predict --R/--tiss0/--Q): every term is a point.
FaCalibration constant_fa_calibration(double drain_rate_bps, double tiss0_s, double capacity_bytes);

// R: the fit with its ci95. Not a point where the calibration does not identify it, or where even its ci95
// lies above the copy-engine rate measured on the same link (what drains faster than the copy engine is
// absorption, not R).
Term drain_rate_term(const FaCalibration& c);
// T_iss^0(K, V): a point only from a constrained row at this (K, V) or between two constrained rows of this
// K; otherwise the bracket that monotonicity in V gives: below by the constrained rows of this K at smaller
// V, above by every measured burst and row of this K at larger or equal V. No row at this K: [0, inf).
Term tiss0_term(const FaCalibration& c, int num_producers, double volume_bytes);
// Q(K) for a burst of burst_volume_bytes: a point only where the fitter identified it at this K; else the bracket of
// xs::model::PlatformModel::capacity_bracket(K, V)
// (an inconsistent one is [0, inf)).
Term capacity_term(const FaCalibration& c, int num_producers, double burst_volume_bytes);

}  // namespace xs::attention::model
