// xstage moe io layer: the advisor score's inputs read from committed megamoe result files, and its summary
// written as JSON and a short Markdown table. Judged launches: points on the judged target (host) that ran,
// verified and measured a fused expert_wave or interleaved variant. Compute-only inputs: the same
// configuration's local control (its tile mainloop medians) or, where none ran, the GEMM rate F the host
// point recorded as a before-run input. Nothing a judged launch measured reaches a prediction.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/moe/advisor/advisor_score.hpp"
#include "xs/moe/advisor/frozen_prediction.hpp"
#include "xs/moe/advisor/moe_advisor.hpp"

namespace xs::moe {

struct ScoreConfigInputs {
  AdvisorConfig config;
  JudgedConfig judged;                     // the judged launches' measurements
  std::optional<TileTimeInputs> local_tiles;  // from the local control
  std::vector<MeasuredOption> local_options;  // the local control's whole-kernel times per option (a compute-only
                                              // input of the whole-kernel transfer, src/xs/moe/whole_kernel_score)
  std::optional<double> tensor_flops_per_s;   // F recorded before the run (prediction.tensor_flops_per_s)
  std::string flops_source;
};

struct ScoreInputs {
  std::vector<ScoreConfigInputs> configs;  // in order of first appearance
  std::vector<std::string> skipped;        // "file#i: why" for points not used
};

// docs: (file name, parsed result file). judged_target: the calibration's target ("host").
ScoreInputs read_score_inputs(const std::vector<std::pair<std::string, nlohmann::json>>& docs,
                              const std::string& judged_target);

// Everything the score needs besides the result files.
struct ScoreCalibration {
  std::string file, fnv1a64;
  nlohmann::json doc;  // the calibration file
};

struct ScoreResult {
  std::vector<FrozenPrediction> predictions;  // one per scored configuration
  std::vector<std::size_t> scored;            // index into ScoreInputs::configs
  std::vector<std::string> not_scored;        // configuration label: why (no compute-only input)
  std::vector<PolicyScore> policies;          // advisor first, then the three constants
  std::vector<std::string> statements;
};

// Freezes every configuration's prediction and scores the advisor and the constant policies.
ScoreResult score_advisor(const ScoreInputs& inputs, const ScoreCalibration& calibration);

// The summary file (schema xstage.moe_advisor_score) and its Markdown table.
nlohmann::json score_json(const ScoreInputs& inputs, const ScoreResult& result, const nlohmann::json& provenance);
std::string score_markdown(const ScoreResult& result, const nlohmann::json& provenance);

}  // namespace xs::moe
