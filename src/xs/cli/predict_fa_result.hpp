// xstage cli layer: `xstage-predict fa-result`, a measured fa_a2a result file judged again against another
// calibration: each point's prediction and agreement recomputed from its measured quantities
// (attention/io/fa_result_reader.hpp, then add_prediction_json), written to a new file. Nothing is measured.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace xs::cli {

struct PredictFaResultOptions {
  std::string result_path, model_path, out_path;
  bool json = false;
  std::vector<std::string> argv;  // the command line, recorded in extra.rejudged
};

void add_predict_fa_result(CLI::App& app, PredictFaResultOptions& o);
// Writes o.out_path atomically and prints one row per fa_a2a point (or a JSON object). Bad input (a missing
// flag, --out naming the input, a file that is not an fa_a2a result, a point without a needed key, a bad
// calibration) is an input_error (exit 2) naming it, before anything is written.
void run_predict_fa_result(const PredictFaResultOptions& o);

}  // namespace xs::cli
