// xstage-bench: runs one registered benchmark suite over a sweep and writes the common result format, each
// point with its measured times beside the model's prediction (from --model, no refitting). The suites come
// from the registry (bench/suite_registry.hpp): the remote_store suites, which read this tool's shared flags, and
// one register_suites per application of XS_APPS (cli/common/app_suites.hpp); this file names no application.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "xs/bench/rank_agree.hpp"
#include "xs/bench/rank_launch.hpp"
#include "xs/bench/suite_registry.hpp"
#include "xs/cli/common/app_suites.hpp"
#include "xs/cli/common/cli_main.hpp"
#include "xs/cli/common/suite_options.hpp"
#include "xs/cli/common/sweep_options.hpp"
#include "xs/common/error.hpp"
#include "xs/remote_store/suite.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/journal.hpp"
#if defined(XS_HAVE_CUDA)
#include "xs/backends/cuda/devices.hpp"
#endif

namespace {

struct BenchOptions {
  std::string suite_id;
  xs::remote_store::RemoteStoreFlags flags;  // backend, sweep and table flags, shared with xstage-calibrate
  std::string model_path, out_path;
  bool list = false, dry_run = false, resume = false, no_progress = false, json = false;
  bool resume_any_build = false;
  int gpus = 1;  // ranks as threads of this process (0: all local GPUs)
};

int run(const xs::bench::SuiteRegistry& registry, const BenchOptions& o, const std::vector<std::string>& argv,
        const xs::bench::RankContext& rank, xs::bench::RankComm& comm) {
  if (o.list) {
    fmt::print("{}", registry.list_text());
    return 0;
  }
  const xs::bench::SuiteDefinition* found = nullptr;
  xs::bench::agree(comm, [&] {  // the same refusal on every rank, reported once by rank 0
    if (o.suite_id.empty()) throw xs::input_error("suite", "name a suite to run (see --list)");
    if (o.json && o.flags.tables.markdown)
      throw xs::input_error("--md", "cannot be combined with --json (both print on stdout)");
    // A dry run makes no result file, so there is nothing for --json to print (it printed the text listing).
    if (o.json && o.dry_run)
      throw xs::input_error("--json", "cannot be combined with --dry-run: --json prints the result file, which a dry "
                                      "run does not make; use --dry-run alone (a text listing of the sweep)");
    found = &registry.at(o.suite_id);
    if (!o.dry_run && comm.size() > 1 && !found->runs_on_ranks)
      throw xs::input_error(found->id, fmt::format("does not run over several ranks yet ({} ranks started): run it "
                                                   "as one process (without mpirun or --gpus)", comm.size()));
  });
  const xs::bench::SuiteDefinition& suite = *found;
  xs::bench::SuiteContext c;
  c.suite_id = suite.id;
  c.target = o.flags.backend.target;
  c.out_path = o.out_path.empty() && suite.default_out_path ? suite.default_out_path(c) : o.out_path;
  xs::bench::agree(comm, [&] {
    // No output may be an input or another output; checked before anything runs (--dry-run too).
    const std::string journal = c.out_path.empty() ? "" : xs::report::journal_path_for(c.out_path);
    xs::report::check_distinct_paths(
        {{c.out_path, "--out"}, {journal, "the journal (beside --out)"}, {o.flags.tables.csv_path, "--csv"}},
        {{o.model_path, "--model"}});
    xs::remote_store::check_table_outputs(o.flags.tables, o.json);
  });
  c.backend = o.flags.backend.kind;
  c.device = o.flags.backend.device_index;
  c.repetitions = o.flags.sweep.repetitions;
  c.model_path = o.model_path;
  c.resume = o.resume || o.resume_any_build;
  c.resume_any_build = o.resume_any_build;
  c.progress = !o.no_progress;
  c.json = o.json;
  c.table_flag = !o.flags.tables.csv_path.empty() ? "--csv" : o.flags.tables.markdown ? "--md" : "";
  c.argv = argv;
  c.rank = rank;
  c.comm = &comm;
  if (!o.dry_run) return suite.run(c);
  if (comm.rank() != 0) return 0;
  if (rank.world_size > 1 || rank.launcher != "single")
    fmt::print("launch: {}, {} rank{}\n", rank.launcher, rank.world_size, rank.world_size == 1 ? "" : "s");
  return suite.dry_run(c);
}

std::string examples(const xs::bench::SuiteRegistry& registry) {
  std::string text = "  xstage-bench --list\n";
  for (const auto& s : registry.suites())
    if (!s.example.empty()) text += fmt::format("  xstage-bench {} {}\n", s.id, s.example);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  xs::bench::RankProcess ranks("xstage-bench", &argc, &argv);  // MPI_Init_thread when started by mpirun/srun in an MPI build
  const int code = xs::cli::run_main("xstage-bench", [&]() {
    BenchOptions o;
    xs::bench::SuiteRegistry registry;
    xs::remote_store::register_suites(registry, o.flags);
    xs::cli::register_app_suites(registry);
    CLI::App app{
        "xstage-bench: run one benchmark suite over a sweep; each point is stored with its measured times\n"
        "(median, p10/p90, every sample) and, with --model, the Burst-Gap prediction beside it.\n\n"
        "Examples:\n" + examples(registry) + "\n"
        "Limits: at most 100,000 points per sweep, 100,000 repetitions per point, 65,536 bursts per\n"
        "repetition, K <= 65,536 and K x bursts <= 4,194,304 (exit 2 beyond them, before anything runs).\n\n"
        "Several GPUs: --gpus N (one process, one thread per GPU) or, in a build with -DXS_WITH_MPI=ON,\n"
        "mpirun -np N xstage-bench ... (one process per GPU); rank 0 alone prints and writes.\n\n"
        "Exit codes: 0 ok, 1 a point failed data verification, 2 bad usage or input, 3 CUDA failure,\n"
        "77 no GPU, 128 + the signal when interrupted (130 SIGINT, 143 SIGTERM; --resume continues).",
        "xstage-bench"};
    xs::cli::add_version_flag(app, "xstage-bench");
    app.add_option("suite", o.suite_id, "Suite id (see --list)");
    app.add_flag("--list", o.list, "List the suites");
    xs::cli::add_backend_options(app, o.flags.backend);
    xs::cli::add_sweep_overrides(app, o.flags.sweep, /*with_suite=*/false);
    app.add_option("--model", o.model_path, "Calibration file: store its predictions beside each point")
        ->check(xs::cli::kNonEmptyPath);
    app.add_option("--out", o.out_path, "Result file (default out/bench-<suite>[-<target>].json); the journal "
                   "goes beside it as <out>.journal.jsonl")
        ->check(xs::cli::kNonEmptyPath);
    app.add_flag("--resume", o.resume, "Continue an interrupted run from its journal (written by this build)");
    app.add_flag("--resume-any-build", o.resume_any_build, "Continue an interrupted run whose journal another build of the tools wrote (after a rebuild or a new commit; implies --resume). Every other field of the journal must match; its points are kept as that build measured them and the result's meta.resumed_from_build names it");
    app.add_flag("--dry-run", o.dry_run, "Print the expanded sweep and its size; run nothing");
    app.add_flag("--no-progress", o.no_progress, "No progress line on stderr");
    app.add_flag("--json", o.json, "Print the result file on stdout instead of a table");
    app.add_option("--gpus", o.gpus, "Ranks as threads of this process, one per local GPU (0: all; default 1). "
                                     "Under mpirun each process drives one GPU instead")
        ->check(xs::cli::integer_in(0, 4096));
    xs::cli::add_table_flags(app, o.flags.tables, "every point");
    xs::cli::SuiteOptionSink suite_options(app);
    suite_options.add_suites(registry);
    xs::cli::parse_or_throw(app, argc, argv);
    ranks.parsed();
    const std::vector<std::string> args(argv, argv + argc);
    if (o.list) {  // touches no device, needs no launch
      xs::bench::SingleRankComm one;
      return ranks.is_root() ? run(registry, o, args, {}, one) : 0;
    }
    const bool uses_gpus = !o.dry_run && o.flags.backend.kind != "sim";
    return ranks.run(o.gpus, uses_gpus, xs::remote_store::count_local_gpus,
                     [&](const xs::bench::RankContext& rank, xs::bench::RankComm& comm) {
                       return run(registry, o, args, rank, comm);
                     });
  });
  return ranks.finish(code);
}
