// xstage bench layer: the point loop every application suite (fa_a2a, megamoe) shares. Each point has a
// canonical JSON spec (its axes: the journal key and, hashed in order, the run's config hash); the suite's
// callback measures one point (variants timed round-robin, backends/gpu/variant_timer.hpp) and returns it in the
// common application-point form (report/app_point.hpp). The loop owns what the micro runner owns: journal
// and --resume (bench/run_journal.hpp), the progress line, SIGINT/SIGTERM (bench/run_control.hpp), the
// result file's points[] written atomically, and exit 1 when a point failed verification.
// Over several ranks (bench/rank_comm.hpp) every rank runs every point with the same seed, rank 0 merges the
// points (bench/rank_merge.hpp) and alone writes the journal and the result file; one rank behaves as before.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/bench/rank_comm.hpp"
#include "xs/common/stats.hpp"
#include "xs/report/app_point.hpp"
#include "xs/report/journal.hpp"

namespace xs::bench {

// Same-round differences a[i] - b[i] of two variants timed in one round-robin (the residual E_res =
// T_fused - T_FA per round), summarized with signed values: median, p10, p90, min, max, samples.
// input_error when the rounds differ in number.
Summary paired_difference(const std::vector<double>& a_s, const std::vector<double>& b_s);

struct AppPointSpec {
  std::string id;        // stable dotted id "<suite>.<target>", e.g. "fa_a2a.host"
  std::string target;    // listed in the journal header
  nlohmann::json axes;   // canonical spec: every value that shapes the measurement (repetitions, verify ...)
  std::string label;     // progress and failure text, e.g. "M=8192 heads=8 target=host"
};

struct AppBenchPlan {
  std::string suite;                                   // "fa_a2a"
  std::vector<AppPointSpec> points;                    // in run order
  // Hashed ahead of the axes: what else shapes every record (e.g. {"model": path}: the journaled points
  // carry that model's predictions). A journal of another identity is refused on --resume.
  nlohmann::json run_identity = nlohmann::json::object();
  // Backend, device and git sha of the run (bench::journal_header_for(backend, {})); target, config_hash
  // and num_points are filled from the points.
  report::JournalHeader identity;
  std::string output_path;                             // result file; the journal sits beside it
  bool resume = false;
  bool resume_any_build = false;                       // with resume: another build's journal is continued
  bool progress = true;                                // drawn only when stderr is a terminal
  bool point_polls_stop = false;                       // the callback calls throw_if_stopping()
  // This rank's device, UUID, driver, NVLink/PCIe topology (the GPU backend fills it; tests fake it). When set
  // or when there are several ranks, every rank's description is gathered into the result's meta.ranks.
  std::function<nlohmann::json()> describe_rank;
};

struct AppBenchOutcome {
  std::vector<report::AppPoint> points;                // plan order, resumed points included
  std::size_t num_resumed = 0;
  std::string resumed_from_build;                      // the journal's build (--resume-any-build), else ""
  std::size_t num_failed = 0;                          // report::failed_verification
  bool interrupted = false;                            // stopped by a signal: points hold the finished ones
  double wall_s = 0;
  std::shared_ptr<report::Journal> journal;            // locked until the outcome is destroyed (rank 0 only)
  bool writes_output = true;                           // false on ranks other than 0: they write nothing
  nlohmann::json ranks;                                // rank 0: meta.ranks (null: none, as with one rank)
  nlohmann::json launch;                               // rank 0 of several: meta.launch {model, num_ranks}
};

// Measures plan.points[point_index]; returns the point with that spec's id and axes.
using AppPointRunner = std::function<report::AppPoint(std::size_t point_index, const AppPointSpec& spec)>;

// What a rank-aware point callback gets besides its spec.
struct PointContext {
  RankComm& comm;          // its rank; barrier() between timed rounds (after a stream sync) keeps ranks in step
  std::uint64_t seed = 0;  // drawn on rank 0 for this point, the same on every rank (never 0): seed the inputs
};
using RankPointRunner =
    std::function<report::AppPoint(std::size_t point_index, const AppPointSpec& spec, const PointContext& context)>;

// The header --resume compares: plan.identity with the points' targets, hash and count; with several ranks
// the number of ranks is hashed too (a journal of another world size is refused).
report::JournalHeader app_journal_header(const AppBenchPlan& plan, int num_ranks = 1);
// --dry-run's share of the checks the run makes on its outputs before measuring (check_journal_for_dry_run
// with this suite's journal reader): the same refusals, nothing created or changed.
void check_app_outputs_for_dry_run(const std::string& suite, const std::string& output_path, bool resume);

// Checks the output paths, opens the journal (created, restarted or resumed: run_journal's rules; a line
// that is not an application point is input_error "<journal>:<line>"), then runs every point the journal
// does not hold, appending each as it ends. The first SIGINT stops before the next point (a point that
// polls is abandoned after kStopGraceS); the callback's xs::Error propagates (finished points stay
// journaled). A returned point whose id differs from its spec's is input_error (a suite bug).
AppBenchOutcome run_app_points(const AppBenchPlan& plan, const AppPointRunner& run_point);

// The same loop on every rank of `comm` (every rank calls it with the same plan). Per point: rank 0 decides
// whether to go on (signals are handled on rank 0) and draws the seed, all ranks meet at a barrier, run the
// point, and rank 0 gathers, merges (merge_rank_points), journals and sends the merged point back, so every
// rank's outcome holds the same points. A throw on any rank (or a refused merge) becomes RankAgreedError on
// every rank (bench/rank_agree.hpp): no rank is left waiting. Before any point, rank 0 also refuses a point
// whose "P" axis is not the number of ranks (input_error "--P"). With one rank this is run_app_points above.
AppBenchOutcome run_app_points(const AppBenchPlan& plan, RankComm& comm, const RankPointRunner& run_point);

struct AppResultSections {
  nlohmann::json meta = nlohmann::json::object();      // report::make_meta(...); "suite", "wall_s" added
  nlohmann::json config = nlohmann::json::object();    // the suite's config section
  nlohmann::json extra = nlohmann::json::object();     // suite-specific sections
};

// Ends the run: interrupted -> message naming the journal on stderr, no result file, kInterruptedExitCode;
// otherwise writes the result file atomically (points[] = outcome.points; meta.ranks and meta.launch when the
// outcome has them) and returns 1 when any point failed verification, else 0. On a rank other than 0 it
// writes and prints nothing and returns the same code as rank 0.
int write_app_result(const AppBenchPlan& plan, const AppBenchOutcome& outcome, AppResultSections sections);

}  // namespace xs::bench
