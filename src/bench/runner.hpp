// xstage bench layer: runs an expanded sweep on a backend. The harness owns measurement hygiene and
// durability: every point is checked before the first launch, each finished point is appended to the
// JSON-lines journal at once (fsync), SIGINT/SIGTERM stop cleanly between points, and --resume skips
// the points the journal already holds.
#pragma once
#include <string>
#include <vector>

#include "bench/backend.hpp"
#include "bench/sweep.hpp"

namespace xs::bench {

struct RunOptions {
  std::string output_path;     // final result file; the journal is report::journal_path_for(output_path)
  bool resume = false;         // keep the journal's finished points and run only the rest
  bool progress = true;        // progress line on stderr (only drawn when stderr is a terminal)
};

struct SweepOutcome {
  std::vector<PointRecord> records;  // in sweep order (resumed points included)
  std::size_t num_resumed = 0;
  std::size_t num_skipped = 0;
  bool interrupted = false;          // stopped by a signal: records hold only finished points
  double wall_s = 0;
};

// Checks every point first: Backend::unavailable_reason strings that start with "unavailable" make
// the point `skipped` (recorded with its reason); any other reason is bad input (input_error, exit 2),
// raised before anything is launched.
SweepOutcome run_sweep(Backend& backend, const std::vector<ExpandedPoint>& points, const RunOptions& options);

// Exit code for an interrupted run (128 + SIGINT), as shells report it.
inline constexpr int kInterruptedExitCode = 130;

}  // namespace xs::bench
