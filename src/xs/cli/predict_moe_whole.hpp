// xstage cli layer: `xstage-predict moe-whole`, MegaMoE whole-kernel time predictions (transfer from the local
// control, ab initio from a GEMM rate) with the interference term, scored on committed megamoe result files
// beside the constant predictors (issue 28 items 3, 4). Nothing is measured.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace xs::cli {

struct PredictMoeWholeOptions {
  std::vector<std::string> results;
  std::string model_path;         // the Burst-Gap calibration (R, Q) of the judged target
  std::string interference_path;  // a calibration with the remote_store.loaded block (the interference term)
  std::string gemm_rates_path;    // optional: per-shape GEMM rates (xstage.gemm_rates)
  std::string out_path, markdown_path;
  bool no_reference = false;      // skip the leave-one-shape-out application-data fit
  std::vector<std::string> argv;
};

void add_predict_moe_whole(CLI::App& app, PredictMoeWholeOptions& o);
// input_error (exit 2), before anything is written, for a missing flag, an output that is an input, or an
// unreadable file. A term that is not calibrated is not an error: the predictions that need it say so.
void run_predict_moe_whole(const PredictMoeWholeOptions& o);

}  // namespace xs::cli
