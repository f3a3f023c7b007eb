// xstage bench layer: runs an expanded sweep on a backend. The harness owns measurement hygiene and
// durability: every output path and every point is checked before the first launch, each finished point
// is appended to the JSON-lines journal at once (fsync), SIGINT/SIGTERM stop cleanly (a long point is
// abandoned between repetitions), and --resume continues only the run the journal's header names.
// Over several ranks (bench/rank_comm.hpp) every rank measures every point on its own backend, rank 0 merges
// (bench/rank_merge.hpp, merge_rank_records) and alone writes the journal; one rank behaves as before.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "xs/bench/backend.hpp"
#include "xs/bench/rank_comm.hpp"
#include "xs/bench/sweep.hpp"
#include "xs/report/journal.hpp"

namespace xs::bench {

struct RunOptions {
  std::string output_path;     // final result file; the journal is report::journal_path_for(output_path)
  bool resume = false;         // keep the journal's finished points and run only the rest
  bool progress = true;        // progress line on stderr (only drawn when stderr is a terminal)
  bool resume_any_build = false;  // with resume: a journal of another build is continued (run_journal.hpp)
};

struct SweepOutcome {
  std::vector<PointRecord> records;  // in sweep order (resumed points included)
  std::size_t num_resumed = 0;
  std::string resumed_from_build;    // the journal's build where --resume-any-build continued another build's
  std::size_t num_skipped = 0;
  bool interrupted = false;          // stopped by a signal: records hold only finished points
  double wall_s = 0;
  // The open journal: its lock keeps other runs off this output while the caller fits and writes the
  // result. Released when the outcome is destroyed.
  std::shared_ptr<report::Journal> journal;
  // Several ranks: meta.launch {model, num_ranks} and meta.ranks[] (each rank's backend, device or simulator
  // seed: rank_description); null with one rank.
  nlohmann::json launch, ranks;
};

// What meta.ranks[r] says of rank r's backend: {rank, backend, device {index, name, uuid}} for a GPU,
// {rank, backend, seed} for the simulator.
nlohmann::json rank_description(const Backend& backend, int rank);

// In order, before anything is measured or created:
//  1. output_path and its journal must be writable regular-file paths (io_error, exit 2); the CLIs check
//     their other outputs (--csv) themselves, before the backend starts;
//  2. every point: Backend::unavailable_reason strings that start with "unavailable" make the point
//     `skipped` (recorded with its reason); any other reason is input_error (exit 2);
//  3. the journal: without --resume an existing journal is refused ("use --resume or remove it") unless
//     it holds every point of a run whose result file exists (then it is started over); with --resume
//     its header must equal this run's (backend, target, seed, simulator parameters, device, git sha,
//     sweep hash) or the first difference is named (exit 2); a journal locked by another process is
//     "another run holds <path>" (exit 2).
// Only then are the output's folders and the journal created. Prints "resuming N/M points" on stderr.
SweepOutcome run_sweep(Backend& backend, const std::vector<ExpandedPoint>& points, const RunOptions& options);

// The same on every rank of `comm` (every rank calls it with the same points and options, each with its own
// backend). Rank 0 checks the outputs and opens the journal; every rank checks the points on its backend. Per
// point: rank 0 decides whether to go on (signals are handled on rank 0), all ranks meet at a barrier, measure,
// and rank 0 gathers, merges (merge_rank_records: per repetition the slowest rank), journals and sends the merged
// record back, so every rank's outcome holds the same records. A throw on any rank becomes RankAgreedError on
// every rank (bench/rank_agree.hpp); a rank that never answers ends the others' wait after the comm's timeout.
// With one rank this is run_sweep above.
SweepOutcome run_sweep(Backend& backend, const std::vector<ExpandedPoint>& points, const RunOptions& options,
                       RankComm& comm);

// Step 2 above on its own (run_sweep calls it; a --dry-run on a backend at hand does too, so that it refuses
// what the run refuses): the skip reason of each point ("" to run it), or input_error for a point the
// backend refuses.
std::vector<std::string> check_points(const Backend& backend, const std::vector<ExpandedPoint>& points);

// The journal header this run would write: the identity --resume compares. With several ranks their number
// is hashed into config_hash too (a journal of 4 ranks is refused by a run of 2).
report::JournalHeader journal_header_for(const Backend& backend, const std::vector<ExpandedPoint>& points,
                                         int num_ranks = 1);

// Exit code for an interrupted run (128 + SIGINT), as shells report it.
inline constexpr int kInterruptedExitCode = 130;

}  // namespace xs::bench
