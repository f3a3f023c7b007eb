// xstage attention judge layer: one fa_a2a point judged (issue 27): the frozen prediction, the measured
// residual with its interval, the outcome of the model and of the trivial predictors through one scorer, and,
// kept apart, the diagnostics: measured decompositions of the judged launches, each labelled as measured and
// saying what the model missed. Diagnostics never change an outcome. Plain C++.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "attention/fa_runner.hpp"
#include "attention/judge/fa_calibration.hpp"
#include "attention/judge/fa_frozen_prediction.hpp"
#include "attention/judge/fa_score.hpp"

namespace xs::attention::judge {

// The rule this code applies, and when it was written: a rule scored on data measured before it was written
// is in-sample for those data.
// v1 (2026-12-05T08:30Z) decided any interval narrower than the unhidden cost; v2 adds the sharpness rule
// (fa_frozen_prediction.hpp), written after v1 was scored on the committed H200 files and on the H100 run of
// 09:03Z: both are in-sample for v2.
inline constexpr const char* kFaRuleId = "fa_frozen_aligned_v2";
inline constexpr const char* kFaRuleWrittenUtc = "2026-12-05T09:25:00Z";

struct FaJudgement {
  FaFrozenInputs inputs;
  FaFrozenPrediction prediction;
  MeasuredResidual measured;
  Outcome model, zero, unhidden;  // the model and the two trivial predictors (fa_score.hpp)
  nlohmann::json diagnostics;     // fa_diagnostics.hpp
};

FaPointConfig point_config(const FaA2aPointSpec& spec, const FaA2aPointResult& result);
FaJudgement judge_point(const FaA2aPointSpec& spec, const FaA2aPointResult& result, const FaCalibration& calibration);

// Writes `prediction` (inputs + frozen prediction), `judgement` (measured, outcomes, rule) and `diagnostics`
// into the fa_point_json object, and `agreement`, a one-line summary.
void add_judgement_json(const FaJudgement& j, nlohmann::json& point);

// Measured, not predicted: what the judged launches show beside the prediction (sigma under load, the burst
// alignment, the critical path, the clock-normalized residual), each with what the model missed.
nlohmann::json fa_diagnostics(const FaA2aPointResult& result, const FaPointConfig& config,
                              const FaFrozenPrediction& prediction, const MeasuredResidual& measured);

}  // namespace xs::attention::judge
