// xstage moe layer (CUDA): the `xstage-bench megamoe` sweep: every point through run_moe_point, journaled
// and written by the shared application-bench layer (bench/app_bench), with the model's prediction
// beside each point when a calibration file is given.
#pragma once
#include <string>
#include <vector>

#include "moe/moe_point.hpp"

namespace xs::moe {

struct MoeBenchOptions {
  std::vector<MoePointSpec> points;
  std::string model_path;     // calibration file (optional): predictions beside each point
  double tensor_tflops = 0;   // F for the prediction; 0: from each point's measured mainloops
  std::string out_path;
  bool resume = false, progress = true, json = false;
  std::vector<std::string> argv;
};

// Returns the exit code (0 ok, 1 a point failed verification, 130 interrupted); throws xs::Error otherwise.
int run_moe_bench(const MoeBenchOptions& options);

}  // namespace xs::moe
