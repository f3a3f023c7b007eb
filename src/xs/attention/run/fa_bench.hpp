// xstage attention layer (CUDA): the `xstage-bench fa_a2a` sweep: target x heads x M points of
// run_fa_a2a_point through the application-suite loop (bench/app_bench.hpp: journal beside the output,
// --resume, Ctrl-C between points), then one result file (schema xstage.result) whose points[] hold the
// common application points (fa_app_point.hpp) and extra.fa_a2a the per-point objects of fa_point_json,
// each with the model's predictions beside the measurement.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "xs/attention/point/fa_point.hpp"
#include "xs/bench/rank_comm.hpp"

namespace xs::attention {

struct FaBenchOptions {
  std::vector<long long> seq_lens;       // M
  std::vector<std::string> targets;      // local | host | peer:N
  std::vector<long long> num_heads{8};   // heads per rank (after the pre-attention All-to-All)
  // Every point but its M, heads and target (fa_sweep_points): P, CTAs, head dim, the kernel's knobs, launches per
  // graph, repetitions, verify, and device (the sending GPU; peer:N: its rank in the All-to-All).
  FaA2aPointSpec point;
  bool resume = false, progress = true;
  bool resume_any_build = false;  // with resume: another build's journal is continued (bench/run_journal.hpp)
  bool json = false;                     // print the result file on stdout instead of the table
  std::string model_path;                // calibration file for the predictions (optional)
  std::string out_path;
  std::vector<std::string> argv;
};

// Returns the process exit code (0 ok, 1 a point failed verification, a resumed one included, 130
// interrupted); throws xs::Error otherwise (exit 2: an existing journal without --resume, another run's
// journal, a locked one, a peer pair without peer access; 3 CUDA failure; 77 no GPU).
// `comm` (null: one rank) runs the sweep on every rank of a run (bench/app_bench.hpp's rank-aware loop): each
// rank measures every point on options.point.device (its own GPU) with the seed rank 0 drew, rank 0 merges the
// points (per trial the slowest rank), writes the result with every rank's device in meta.ranks and prints
// the table. Several ranks run local/host only (attention/suite.cpp refuses peer/nccl there): each rank is an
// independent sender, no data crosses ranks. Runs with a peer/nccl target get meta.topology
// (bench/topology_record.hpp) and are refused (exit 2) when a pair they store across has no peer access.
int run_fa_bench(const FaBenchOptions& options, bench::RankComm* comm = nullptr);

}  // namespace xs::attention
