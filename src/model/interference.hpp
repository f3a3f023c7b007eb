// xstage model layer: the interference term (issue 28). What outstanding remote stores cost the computation
// beside them: a multiplicative slowdown of a mainloop tile's time, as a function of the load the stores put
// on the path. The Burst-Gap model (burst_gap.hpp) times the stores; this term times the compute next to them.
// Plain data and evaluation only: the fitter (src/fit/) fills an InterferenceTerm from a calibration's
// `remote_store.loaded` points, and loading files is not this layer's job.
#pragma once
#include <string>
#include <vector>

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
};

}  // namespace xs::model
