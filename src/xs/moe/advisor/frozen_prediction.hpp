// xstage moe model layer: the advisor's frozen prediction for one MegaMoE configuration (issue 27 item 1):
// the schedule replay's whole-kernel time of every schedule option (interleaved at each candidate D, eq. 16's
// and the advisor's among them; expert-wave at each experts_per_wave candidate), the advisor's choice, and the
// expert-wave / interleaved speedup with an interval. Computed only from the calibration file, the
// configuration and a compute-only input (the local control's tile mainloop times, or a GEMM rate F), never
// from the launches it is judged on. The interval is the range over the corners of the input brackets: R and
// T_iss^0 from the calibration (ci95, or a bracket where the row is flagged), the tile times' spread.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/model/platform_model.hpp"
#include "xs/moe/advisor/advisor_platform.hpp"
#include "xs/moe/advisor/advisor_score.hpp"
#include "xs/moe/advisor/moe_advisor.hpp"

namespace xs::moe {

// One input with its range and where it came from. flag: "" where [low, high] is the calibration's own
// interval (or a measured spread); else why the value is only a bracket (e.g. "unconstrained row").
struct InputBracket {
  double value = 0, low = 0, high = 0;
  std::string flag;
  std::string source;
};

// M_X at (K_SM, K_SM V_t) as brackets. Q enters no replayed time (the wave stall per L2 tile is
// [max(T_iss^0, V/R) - T_L2]+); it is recorded with its state for the reader.
struct CalibrationInputs {
  std::string file, fnv1a64, target;
  InputBracket drain_rate_bps;  // R
  InputBracket tiss0_s;         // T_iss^0(K_SM, K_SM V_t)
  std::string capacity;         // Q(K_SM) as the calibration states it ("not identified at K=66", a value, ...)
  AdvisorPlatform platform;     // M_X as the advisor reads it (advisor_platform_from: PlatformModel's lookups)
};

// Reads R (R_ci95, R_bound) and the T_iss^0 row(s) around (K_SM, K_SM b_m b_n 2 B) from the calibration's
// `model` section. A T_iss^0 row marked constrained = false is an upper bound (the point may include
// backpressure): bracket [the largest constrained value at a smaller V of the same K, its ci95 high]. A V past
// the K's last row is extrapolated: bracket [the last row's value, that value x V / V_last] (T_iss^0
// nondecreasing and at most proportional in V, which every row of the committed calibrations satisfies).
// input_error naming the path for a missing or malformed field.
CalibrationInputs calibration_inputs(const nlohmann::json& calibration_doc, const model::PlatformModel& model,
                                     const std::string& file, const std::string& fnv1a64, int num_sms, int block_n);

// The advisor at the ends of the calibration's brackets, the one home of "advise at the bracket ends" (issue 27
// item 4) for xstage-predict moe and moe-score's frozen predictions. Where R or T_iss^0 is flagged (has_flag),
// the advice (schedule and D) is taken at every R the corners take (R's ends, and interior points where R itself
// is flagged) and at T_iss^0's two ends, on cal.platform otherwise. Returns "" where every end gives `advice`'s
// schedule and D (or nothing is flagged), else the first end that differs, as "at R ... the advisor says ...".
bool has_flag(const CalibrationInputs& cal);
std::string advice_differs_at_bracket_ends(const AdvisorConfig& config, const CalibrationInputs& cal,
                                           const AdvisorThroughput& throughput, const MoeProblem& problem,
                                           const Advice& advice);

// Tile mainloop times T_L1, T_L2 (compute only).
struct TileTimeInputs {
  InputBracket l1_s, l2_s;
  std::string from;  // "local control" | "GEMM rate"
};
// From a GEMM rate F (FLOP/s over device_sms SMs): T_L = 2 b_m b_n k / (F / device_sms); no spread.
TileTimeInputs tile_times_from_rate(const AdvisorConfig& config, double tensor_flops_per_s, const std::string& source);

struct PredictedOption {
  ScheduleOption option;
  double time_s = 0, low_s = 0, high_s = 0;  // replayed whole-kernel time; its range over the input corners
};

// One corner of the input brackets (corner 0: every input at its value).
struct InputCorner {
  double rate_bps = 0, tiss0_s = 0, l1_s = 0, l2_s = 0;
};

struct FrozenPrediction {
  std::string label;
  CalibrationInputs calibration;
  TileTimeInputs tiles;
  int eq16_lead_rows = 1;   // max(1, ceil(D_knee)), eq. 16
  int advisor_lead_rows = 1;
  std::string advisor_schedule;  // interleaved | either | expert_wave (moe::advise)
  std::string advisor_reason;
  PolicyAnswer answer;           // the choice scored (speedups filled by speedup_answers)
  std::vector<PredictedOption> options;
  std::vector<std::string> flagged;  // inputs whose bracket comes from a flag, as "T_iss^0: unconstrained row ..."
  std::vector<InputCorner> corners;
  // Per option, its time at every corner.
  std::vector<std::vector<double>> corner_times_s;

  // No flagged input: the options' times and the speedups have point values. Otherwise only their brackets
  // (time_s and SpeedupPrediction::value are NaN, null in JSON), and an answer the brackets do not decide is
  // "not decided" (issue 27 item 4).
  bool point_values() const { return flagged.empty(); }
  const PredictedOption* find(const ScheduleOption& o) const;
  // Expert-wave (w) over interleaved (D), its value and [min, max] over the corners, `why` naming how far each
  // input alone moves it (and the flagged inputs); nullopt when either option was not predicted.
  std::optional<SpeedupPrediction> speedup(int lead_rows, int experts_per_wave) const;
};

// The D candidates replayed and the experts_per_wave candidates (1, 2, 4, ... and E/P itself).
std::vector<int> lead_row_candidates(int eq16_lead_rows);
std::vector<int> experts_per_wave_candidates(int num_local_experts);

// The whole prediction. `problem` must be built from the configuration's routing (advise checks it).
FrozenPrediction freeze_prediction(const AdvisorConfig& config, const CalibrationInputs& calibration,
                                   const TileTimeInputs& tiles, const MoeProblem& problem);

// The answer with the predicted speedup at each measured pair of `judged` filled in.
PolicyAnswer speedup_answers(const FrozenPrediction& p, const JudgedConfig& judged);

nlohmann::json to_json(const InputBracket& b);
// The prediction (inputs as [value, low, high] with their source, options, choice); `judged` selects which
// options are written (eq. 16's D, the advisor's D, every D measured, every w) so the file stays small. The
// calibration's brackets with their flags and sources are written once per (K_SM, b_n) by the caller.
nlohmann::json to_json(const FrozenPrediction& p, const JudgedConfig& judged);

}  // namespace xs::moe
