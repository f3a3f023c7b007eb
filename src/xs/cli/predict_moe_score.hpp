// xstage cli layer: `xstage-predict moe-score`, the MegaMoE advisor scored beside the constant policies on
// committed megamoe result files (issue 27 item 3): flags into moe::read_score_inputs / score_advisor, the
// summary written as JSON and Markdown. Nothing is measured.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace xs::cli {

struct PredictMoeScoreOptions {
  std::vector<std::string> results;
  std::string model_path, out_path, markdown_path;  // markdown_path: default out_path with .md
  std::vector<std::string> argv;
};

void add_predict_moe_score(CLI::App& app, PredictMoeScoreOptions& o);
// Writes both outputs atomically and prints the policy table. input_error (exit 2), before anything is
// written, for a missing flag, an output that is an input (or the other output), or an unreadable file.
void run_predict_moe_score(const PredictMoeScoreOptions& o);

}  // namespace xs::cli
