// xstage cli layer: `xstage-predict fa-score`, every fa_a2a point of the given result files judged against
// every given calibration with the frozen-prediction rule (attention/judge/), scored beside the trivial
// predictors, tallied, and written as one summary file. Nothing is measured and no result file is changed.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace xs::cli {

struct PredictFaScoreOptions {
  std::vector<std::string> result_paths, model_paths;
  std::string out_path;
  std::vector<std::string> argv;
};

void add_predict_fa_score(CLI::App& app, PredictFaScoreOptions& o);
// Bad input (a missing flag, --out naming an input, a file that is not an fa_a2a result or a calibration) is an
// input_error (exit 2) before anything is written.
void run_predict_fa_score(const PredictFaScoreOptions& o);

}  // namespace xs::cli
