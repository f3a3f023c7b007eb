// xstage cli layer: `xstage-predict interference`, the calibrated interference term (issue 28) at one load:
// the mainloop slowdown bracket, or why the calibration cannot give one ("interference not calibrated" / "not
// identified"). Flags into model::LoadState; the term comes from the calibration file's extra.interference.
#pragma once
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace xs::cli {

struct PredictInterferenceOptions {
  std::string calibration, rate, drain_rate, outstanding, capacity, tile_time, burst_bytes, working_set = "l2";
  std::optional<long long> num_sms, k_blocks;
  std::optional<double> full_fraction;
  bool json = false;
};

void add_predict_interference(CLI::App& app, PredictInterferenceOptions& o);
// Prints the bracket (or the status and why); input_error (exit 2) naming the flag on bad input.
void run_predict_interference(const PredictInterferenceOptions& o);

}  // namespace xs::cli
