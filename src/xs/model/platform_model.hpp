// xstage model layer: the platform model M_X = (T_iss^0(K,V), R, Q(K)) held as calibrated tables and
// loaded from a calibration file's `model` section (schema in docs/result-schema.md).
//
// Interpolation (documented contract):
//  - T_iss^0(K, V): rows grouped by K. Within a K, piecewise-linear in V between measured volumes, clamped
//    to the end values outside. Between two measured K, linear in K of the two rows' values at the same
//    V; outside the K range, the nearest K row. `extrapolated` is set when a query leaves the table.
//  - Q(K): piecewise-linear in K, clamped outside. An entry whose `bound` is "lower" means the sweep
//    found no knee: Q(K) is reported with is_lower_bound = true, never as a measured value; a value
//    interpolated between a "lower" and a "fit" entry is flagged the same way.
//  - A Q row whose `bound` is "not_identified" is kept out of the table: a lookup at that K behaves as if
//    the K had not been measured, and with no identified row has_capacity() is false.
//  - Lookups on an empty table throw input_error ("model.tiss0" / "model.Q").
// Reading is strict (docs/result-schema.md): unknown keys in the section or its rows, duplicate rows, bad
// numbers are input_error naming the path; of `fit` (the fitter's diagnostics) only the Q rows' capacity
// evidence is read, leniently (capacity_evidence()); ci95/R_ci95 may
// be null; a model with R_bound "not_identified" is read by from_json (drain_rate_identified() false, R
// NaN) but refused by fit::load_platform_model(): "R not identified by this calibration".
#pragma once
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace xs::model {

struct Tiss0Point {
  int num_producers = 0;       // K
  double volume_bytes = 0;     // V
  double issue_time_s = 0;     // T_iss^0
  double ci95_lo = 0, ci95_hi = 0;  // the recorded interval; both at the value when none was recorded
  // false: the row only bounds T_iss^0 from above (the fitter marked it unconstrained, its bound is
  // "upper", or its note says it is an upper bound or T_iss^iso); `caveat` says why.
  bool is_point = true;
  std::string caveat;
};
struct CapacityPoint {
  int num_producers = 0;       // K
  double capacity_bytes = 0;   // Q(K), or its lower bound
  double ci95_lo = 0, ci95_hi = 0;
  std::string bound = "fit";   // "fit" (knee inside the sweep) or "lower" (no knee: Q >= value)
  bool constrained = true;     // false: the fitter says the data do not pin it down (soft knee, R unconstrained)
};
// What the isolated bursts at one K say about Q(K) where the fitter could not identify it (its `fit.Q[]`
// diagnostics, docs/result-schema.md): a burst whose outstanding bytes q = V - R T_iss^0 issued on the floor
// (no backpressure) shows Q(K) >= q (floor_lower_bound_bytes); the smallest V issued on the drain branch
// shows Q(K) < V - R T_iss^0(K, V) under a hard knee and no per-point offset (drain_start_volume_bytes: recorded,
// not used as a bound; capacity_bracket says why); the drain branch's weighted V - R T_iss (the fitter's
// branch_estimate_bytes) below the floor's says the bursts past the knee wait behind more than the floor allows
// (a soft knee, the H100 host path). 0: that side not measured; has_branch_estimate false where the file has none.
struct CapacityEvidence {
  int num_producers = 0;                 // K
  double floor_lower_bound_bytes = 0;
  double drain_start_volume_bytes = 0;
  bool has_branch_estimate = false;
  double branch_estimate_bytes = 0;      // clamped at 0 (noise can drive V - R T below it)
};
// One measured isolated burst of a calibration file (fit::load_platform_model reads them from its points): K, V and
// the p10 and the maximum of its slowest producer's issue span over the repetitions. V - R T of the burst is the capacity
// the burst behaved as (eq. 7's Q where it was backpressured).
struct IsolatedBurst {
  int num_producers = 0;
  double volume_bytes = 0;
  double span_lo_s = 0, span_hi_s = 0;
};
// Q(K) in [lower_bytes, upper_bytes): upper_bytes = +inf where nothing bounds it from above.
struct CapacityBracket {
  double lower_bytes = 0;
  double upper_bytes = 0;               // set by capacity_bracket (+inf when unbounded)
  int lower_from_k = 0, upper_from_k = 0;  // the K whose measurement gave each side (0: none)
  // true: the lower end is 0 because the drain branch (the bursts past the knee) lies below the floor: Q(K) was
  // not identified because the two disagree, and past the knee the data do not resolve Q (capacity_bracket).
  bool lower_from_drain_branch = false;
  double lower_from_volume_bytes = 0;  // then: the measured isolated burst (K = lower_from_k) that gave it; 0: none
  // Past the floor's bound, where the lower end came from the drain branch: the upper end from the fastest
  // repetitions of the nearest measured burst at or below V (highest_measured_capacity; 0: none, the upper end kept).
  double upper_from_volume_bytes = 0;
  bool consistent = true;  // false: lower >= upper, the evidence contradicts itself (or Q falls with K)
};

// One parameter looked up for a prediction. `value` is what the table gives; only where usable_as_point is
// it a point value a prediction may use as such. Otherwise not_point_reason names the parameter, K, V and
// why (a row the fitter marked unconstrained or an upper bound, a lower-bound or unidentified Q, a value
// outside the table), and the prediction becomes a bracket over [bracket_lo, bracket_hi] where the data
// support one (has_bracket(); bracket_hi may be +inf), or "not decided". A point value carries its
// interpolated ci95 as its bracket.
struct Lookup {
  double value = 0;
  bool extrapolated = false;
  bool is_lower_bound = false;
  bool is_upper_bound = false;   // value bounds the parameter from above only
  bool usable_as_point = true;
  std::string not_point_reason;  // "" when usable_as_point
  double bracket_lo = std::numeric_limits<double>::quiet_NaN();
  double bracket_hi = std::numeric_limits<double>::quiet_NaN();
  bool has_bracket() const { return !std::isnan(bracket_lo) && !std::isnan(bracket_hi); }
  void refuse_point(const std::string& why) {  // keeps the first reason, appends later ones
    usable_as_point = false;
    not_point_reason += (not_point_reason.empty() ? "" : "; ") + why;
  }
};

class PlatformModel {
 public:
  PlatformModel() = default;
  // Constant model from three numbers (xstage-predict --R/--tiss0/--Q): every (K, V) gets the same
  // T_iss^0 and Q, never flagged extrapolated. capacity_bytes <= 0 leaves Q unset (has_capacity() false).
  // to_json marks it "constant": true with K = 0 entries, which from_json reads back.
  static PlatformModel constant(double drain_rate_bps, double tiss0_s, double capacity_bytes);
  // From a calibration file's `model` object; throws input_error naming the missing/bad field.
  static PlatformModel from_json(const nlohmann::json& model_section);
  // A whole calibration file on disk is read by xs::fit::load_platform_model (xs/fit/calibration_file.hpp): this
  // floor computes and reads no files.

  double drain_rate_bps() const { return drain_rate_bps_; }
  // R with its flags: a point only when R_bound is "fit" and R_constrained (a lower bound, an unidentified
  // R, or one the fitter flagged, e.g. above the copy-engine rate, is not); bracket: its ci95, or
  // [value, +inf) for a lower bound.
  Lookup drain_rate() const;
  // T_iss^0(K, V), interpolated as documented above. A point (bracket: the rows' ci95 interpolated the same
  // way) only when every row it leans on is a point and it stays inside the table. Otherwise the bracket
  // at a measured K comes from every row of that K, assuming only that T_iss^0 grows with V (each producer
  // issues more bytes): T_iss^0(V) >= lo' of each row at V' <= V (0 if none), <= hi' of each row at V' >= V
  // (+inf if none), with [lo', hi'] a point row's ci95 and [0, value] an upper-bound row; rows whose
  // intervals contradict that order give the span between them. (T_iss^0/V nonincreasing would be tighter,
  // but the H200 host breaks it: K=12 rises 1.47x from 16 to 20 KiB.) Between two measured K: the hull of
  // their brackets (T_iss^0 monotone in K between them). Outside the K range: no bracket.
  Lookup tiss0_s(int num_producers, double volume_bytes) const;
  // Q(K). Not a point when it leans on a "lower" row, an unconstrained row, a K whose Q was not
  // identified, or leaves the table; bracket: capacity_bracket(K) (upper end +inf when unbounded).
  Lookup capacity_bytes(int num_producers) const;
  bool has_capacity() const { return !capacity_.empty(); }

  nlohmann::json to_json() const;  // same shape from_json reads

  const std::vector<Tiss0Point>& tiss0_table() const { return tiss0_; }       // sorted by (K, V)
  const std::vector<CapacityPoint>& capacity_table() const { return capacity_; }  // sorted by K
  // K values whose Q row says "not_identified" (not in capacity_table()).
  const std::vector<int>& unidentified_capacity_k() const { return unidentified_capacity_k_; }
  // Capacity evidence per K, from the fitter's diagnostics (`fit.Q[]`: floor_lower_bound_bytes,
  // drain_start_V_bytes), sorted by K; empty for files without them.
  const std::vector<CapacityEvidence>& capacity_evidence() const { return capacity_evidence_; }
  // The file's isolated bursts (not in the model section: fit::load_platform_model sets them from its points),
  // sorted by (K, V). Empty for a model read from a section alone.
  void set_isolated_bursts(std::vector<IsolatedBurst> bursts);
  const std::vector<IsolatedBurst>& isolated_bursts() const { return isolated_bursts_; }
  // Q(K) bracketed by every K' measured, assuming Q(K) nondecreasing in K (the knee is per producer,
  // section 3.5; every calibration so far has it so): a floor burst of K' <= K producers bounds Q(K) from
  // below; an identified Q(K') (ci95) bounds it from below (K' <= K) and above (K' >= K). For a K whose Q is not
  // identified, so a design test can still be decided where the burst lies outside the bracket. Drained bursts
  // bound nothing from above (platform_model.cpp says why): the upper end is +inf unless an identified Q at
  // K' >= K cuts it. Where Q(K) is not identified and the drain branch of the largest measured K' <= K lies below
  // that K's floor, the lower end is 0 (lower_from_drain_branch): the floor says what small bursts absorb, bursts
  // past the knee wait behind more, by an amount the data do not resolve (the H100's soft knee,
  // docs/lab-notes/2026-12-07-night.md; platform_model.cpp says why not the branch's own estimate).
  // burst_volume_bytes: the volume of the burst the bracket is for. A burst no larger than K''s floor bound is
  // smaller than a floor burst measured there (no backpressure), so the floor stays the lower end for it. A larger
  // one, where the branch contradicts the floor, takes the lowest V'' - R_hi T_max of the measured isolated bursts
  // at that K' (isolated_bursts(); T_max the slowest repetition, R_hi R's ci95 top) past the floor's bound and up
  // to max(2 V, the first V'' >= V): nonincreasing in V, and wide enough for c's non-monotone steps (the H100
  // knee tables). No V'' >= V measured, R without an interval, or +inf (the default): 0. In-sample and one call:
  // between calls the same burst has measured 4x slower (docs/lab-notes/2026-12-07-late.md).
  CapacityBracket capacity_bracket(int num_producers,
                                   double burst_volume_bytes = std::numeric_limits<double>::infinity()) const;
  const std::string& drain_rate_bound() const { return drain_rate_bound_; }  // "fit", "lower", "not_identified"
  bool drain_rate_identified() const { return drain_rate_bound_ != "not_identified"; }

 private:
  // The lowest V'' - R_hi T_max of the measured isolated bursts capacity_bracket uses past the floor (0 and no
  // burst where none applies).
  struct MeasuredCapacity {
    double bytes = 0;
    const IsolatedBurst* burst = nullptr;
  };
  MeasuredCapacity lowest_measured_capacity(int num_producers, double burst_volume_bytes, double floor_bytes) const;
  // V'' - R_lo T_p10 of the nearest measured isolated burst at or below V past the floor's bound, at the smallest
  // K' >= K with bursts (+inf and no burst where none applies, or where it is negative).
  MeasuredCapacity highest_measured_capacity(int num_producers, double burst_volume_bytes, double floor_bytes) const;

  bool constant_ = false;
  double drain_rate_bps_ = 0;
  double drain_rate_ci95_lo_ = 0, drain_rate_ci95_hi_ = 0;
  bool drain_rate_constrained_ = true;
  std::string drain_rate_caveat_;
  std::vector<Tiss0Point> tiss0_;
  std::vector<CapacityPoint> capacity_;
  std::vector<int> unidentified_capacity_k_;
  std::vector<CapacityEvidence> capacity_evidence_;
  std::vector<IsolatedBurst> isolated_bursts_;
  std::string drain_rate_bound_ = "fit";
};

}  // namespace xs::model
