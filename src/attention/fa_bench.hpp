// xstage attention layer (CUDA): the `xstage-bench fa_a2a` sweep: M x target points of run_fa_a2a_point,
// each journaled as it finishes (report::Journal beside the output: a header naming device, git sha and the
// points' config hash, locked for the run; --resume keeps only this run's points and refuses another run's
// journal), then one result file (schema xstage.result, the points under extra.fa_a2a) with the model's
// predictions beside each point.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace xs::attention {

struct FaBenchOptions {
  std::vector<long long> seq_lens;       // M
  std::vector<std::string> targets;      // local | host | peer:N
  std::vector<long long> num_heads{8};   // heads per rank (after the pre-attention All-to-All)
  int num_ranks = 8, num_ctas = 0, repetitions = 10, launches_per_graph = 5;
  bool verify = true, resume = false, progress = true;
  std::string model_path;                // calibration file for the predictions (optional)
  std::string out_path;
  std::vector<std::string> argv;
};

// Returns the process exit code (0 ok, 1 a point failed verification, a resumed one included); throws
// xs::Error otherwise (exit 2: an existing journal without --resume, another run's journal, a locked one).
int run_fa_bench(const FaBenchOptions& options);

}  // namespace xs::attention
