// xstage cli layer: `xstage-predict fa-whole`, FA-A2A E_res(M) predicted with the interference term from the
// calibration and the FA-only variant of each point, scored per M beside the constant predictors (issue 28
// items 3, 4). Nothing is measured and no result file is changed.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace xs::cli {

struct PredictFaWholeOptions {
  std::vector<std::string> result_paths;
  std::string model_path, interference_path, out_path;
  bool no_reference = false;
  std::vector<std::string> argv;
};

void add_predict_fa_whole(CLI::App& app, PredictFaWholeOptions& o);
// input_error (exit 2) before anything is written for a missing flag, --out naming an input, or a file that
// is not an fa_a2a result or a calibration. A term that is not calibrated is not an error: the predictions say so.
void run_predict_fa_whole(const PredictFaWholeOptions& o);

}  // namespace xs::cli
