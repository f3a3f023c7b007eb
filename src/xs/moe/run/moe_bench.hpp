// xstage moe layer (CUDA): the `xstage-bench megamoe` sweep: every point through run_moe_point, journaled
// and written by the shared application-bench layer (bench/app_bench), with the model's prediction
// beside each point when a calibration file is given.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "xs/bench/rank_comm.hpp"
#include "xs/moe/point/moe_point.hpp"

namespace xs::moe {

struct MoeBenchOptions {
  std::vector<MoePointSpec> points;
  std::string model_path;     // calibration file (optional): predictions beside each point
  // F (TFLOP/s) per precision ("bf16", "fp8", or "all") for predictions made before each point runs; a
  // precision without one gets the in-sample prediction from its measured mainloops after the run.
  std::map<std::string, double> tensor_tflops;
  // Re-run a point (up to max_clock_reruns times) whose variants' SM clocks differ by more than
  // clock_spread_limit, or one below clock_floor_fraction of the peak clock; the attempts are recorded.
  double clock_spread_limit = 0.03, clock_floor_fraction = 0.75;
  int max_clock_reruns = 1;
  std::string out_path;
  bool resume = false, progress = true, json = false;
  bool resume_any_build = false;  // with resume: another build's journal is continued (bench/run_journal.hpp)
  std::vector<std::string> argv;
};

// Returns the exit code (0 ok, 1 a point failed verification, 130 interrupted); throws xs::Error otherwise
// (exit 2 also for a peer/nccl pair without peer access). `comm` (null: one rank) runs the sweep on every rank
// (bench/app_bench.hpp's rank-aware loop): with one rank the point emulates the most loaded of its P ranks, as
// before; with P ranks rank r plays EP rank r (its own experts' share of the same routing, the same input
// seed) on its own GPU (points[].device), rank 0 merges (per trial the slowest rank: the most loaded one sets
// the step time) and writes. Several ranks run local/host only (moe/suite.cpp refuses peer/nccl there): each rank's
// Combine stays on its own GPU or host buffer; no data crosses ranks.
int run_moe_bench(const MoeBenchOptions& options, bench::RankComm* comm = nullptr);

}  // namespace xs::moe
