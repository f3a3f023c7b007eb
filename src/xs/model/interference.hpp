// xstage model layer: the interference term (issue 28). What outstanding remote stores cost the computation
// beside them: a multiplicative slowdown of a mainloop tile's time, as a function of the load the stores put
// on the path. The Burst-Gap model (burst_gap.hpp) times the stores; this term times the compute next to them.
// Plain data and evaluation only: the fitter (src/xs/fit/) fills an InterferenceTerm from a calibration's
// `remote_store.loaded` points, and loading files is not this layer's job.
//
// Form "full_path_wait" (docs/interference-model.md, eq. I1):
//   s = s_free + u * W(K) * (n_kb / n_kb_cal) / T0,      W(K) = W_ref * (K / K_ref)^gamma
// u is the fraction of the tile's time during which the path is full (the storers stalled, eq. 3's drain
// branch): 0 below R, 1 above, unknown in [0, 1] inside the knee band |rho/R - 1| < knee_band. W is the time
// a tile's operand loads wait behind the stores queued on a full path (additive: it does not scale with T0).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace xs::model {

// The load a mainloop tile sees while it runs. Every field is a property of the configuration or of the
// Burst-Gap replay of its stores, never a measurement of the launch being predicted.
struct LoadState {
  double offered_rate_bps = 0;    // stores offered by all K_SM storing CTAs together, bytes/s
  double outstanding_bytes = 0;   // q(t): bytes issued and not yet drained (X-Stage occupancy)
  double drain_rate_bps = 0;      // R of the path the stores go to (0: local control, no remote path)
  double capacity_bytes = 0;      // Q(K) of that path
  int num_sms = 0;                // K_SM: CTAs computing (and storing)
  bool operands_in_l2 = true;     // false: operands streamed from HBM
  // Added for "full_path_wait" (all optional):
  double tile_time_s = 0;         // T0: the tile's time without stores (0: the calibration's tile, same working set)
  int k_blocks_per_tile = 0;      // n_kb: 64-wide k-blocks a tile loads (0: as calibrated)
  double burst_bytes_per_sm = 0;  // B: bytes one storing CTA issues per burst (0: not given, not checked)
  double full_fraction = -1;      // u in [0, 1] from a replay (< 0: derived from offered rate vs R, or q >= Q)
};

// A slowdown factor s (tile time under load = s x tile time without stores) as a bracket.
struct SlowdownBracket {
  double lo = 1, mid = 1, hi = 1;
};

enum class InterferenceStatus {
  kNotCalibrated,  // the calibration file has no remote_store.loaded block (older files)
  kNotIdentified,  // the block exists, but its data are flat, contradictory or too few for this term
  kIdentified,
};
const char* interference_status_name(InterferenceStatus status);  // "not calibrated" / "not identified" / ...
// File vocabulary: "not_calibrated", "not_identified", "identified" (parse throws input_error otherwise).
const char* interference_status_id(InterferenceStatus status);
InterferenceStatus parse_interference_status(const std::string& id);

inline constexpr const char* kFullPathWaitForm = "full_path_wait";
// Form "epilogue_per_byte" (docs/interference-model.md, eq. I2), fitted from the loaded suite's epilogue
// injection (each tile's math warps store V bytes after the tile, the applications' pattern):
//   T(tile followed by V stored bytes) = T0 + a(K) V,      a(K) = a_ref (K / K_ref)^gamma
// s = 1 + a(K) V / T0. V is LoadState::burst_bytes_per_sm (the bytes this CTA stores beside the tile). The drain
// bound (K V / R per tile once the path is full) is not in s: the replay's queue (R, Q) times it.
inline constexpr const char* kEpiloguePerByteForm = "epilogue_per_byte";

// The fitted term. `parameters` are named so that files, tables and docs use one vocabulary; the form of the
// function is fixed by `form` (see docs/interference-model.md for the equation beside the paper's).
struct InterferenceParameter {
  std::string name;               // e.g. "alpha"
  double value = 0, lo = 0, hi = 0;
  bool constrained = false;       // false: a bound or unconstrained; never used as a point value
  std::string note;
};
struct InterferenceTerm {
  InterferenceStatus status = InterferenceStatus::kNotCalibrated;
  std::string why;                // for kNotCalibrated / kNotIdentified: what is missing, in one sentence
  std::string form;               // id of the functional form, e.g. "saturation_knee"
  std::vector<InterferenceParameter> parameters;
  // The slowdown at `load`. Status other than kIdentified: {1, 1, 1} is NOT returned as a prediction; callers
  // check `status` first and report `why`.
  SlowdownBracket slowdown(const LoadState& load) const;

  // Added (issue 28 item 2):
  const InterferenceParameter* find(const std::string& name) const;  // nullptr if absent
  const InterferenceParameter& parameter(const std::string& name) const;  // throws std::logic_error if absent
  // Where `load` leaves what the calibration measured (K outside the calibrated range, another burst volume
  // per SM, another tile depth): one sentence per reason, "; "-joined. Empty: inside. slowdown() still answers
  // outside (an extrapolation); callers report this beside it.
  std::string outside_calibration(const LoadState& load) const;
  // eq. I2 below its calibrated range (fewer bytes per tile than v_min, or B / T0 below the calibrated minimum):
  // slowdown() is then only the bracket [1, the law's high end at the minimum], its middle an assumption.
  // Callers that want a point check how much such loads can add (see OutsideCalibration::below_extra_s).
  bool below_calibration(const LoadState& load) const;
  // u as slowdown() uses it: {lo, mid, hi} in [0, 1].
  SlowdownBracket full_fraction(const LoadState& load) const;
};

// The calibration file's `extra.interference` block <-> the term. to_json writes {status, why, form,
// parameters[{name, value, lo, hi, constrained, note}]} (non-finite numbers as null); the fitter adds its
// own keys beside them, which from_json ignores. from_json throws input_error naming the bad field.
nlohmann::json to_json(const InterferenceTerm& term);
InterferenceTerm interference_term_from_json(const nlohmann::json& block);
// From a whole calibration file's JSON (already read): its extra.interference, or a kNotCalibrated term
// ("interference not calibrated: ...") when the file has none (files before issue 28, no loaded points).
InterferenceTerm interference_term_of_calibration(const nlohmann::json& file);

}  // namespace xs::model
