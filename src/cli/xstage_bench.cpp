// xstage-bench: runs one benchmark suite over a sweep and writes the common result format, each point
// with its measured spans beside the model's prediction (from --model, no refitting).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/calibration.hpp"
#include "bench/runner.hpp"
#include "bench/sweep.hpp"
#include "cli/common/cli_main.hpp"
#include "cli/common/sweep_options.hpp"
#include "cli/common/table_output.hpp"
#include "common/error.hpp"
#include "fit/fit.hpp"
#include "model/platform_model.hpp"
#include "report/file_io.hpp"
#include "report/result_file.hpp"
#if defined(XS_HAVE_ATTENTION)
#include "attention/fa_bench.hpp"
#endif
#include "common/range.hpp"

namespace {

struct SuiteInfo {
  const char* id;
  xs::Suite suite;
  const char* what;
};
constexpr SuiteInfo kSuites[] = {
    {"remote_store.periodic", xs::Suite::kPeriodic, "K producers x B bytes, gap G, N bursts (Fig. 3a/b/d)"},
    {"remote_store.isolated", xs::Suite::kIsolated, "one burst after recovery: the capacity knee (Fig. 3c)"},
    {"remote_store.local_control", xs::Suite::kLocalControl, "the periodic loop into local HBM (control)"},
};
constexpr const char* kFaA2aId = "fa_a2a";
constexpr const char* kFaA2aWhat =
    "FlashAttention + Ulysses post-attention All-to-All: FA-only, A2A, serial, fused, completion-coupled";

struct FaOptions {
  std::string M = "8192,16384,32768,49152,65536";
  std::string heads = "8";
  int P = 8, ctas = 0, launches_per_graph = 5;
  bool no_verify = false;
};

struct BenchOptions {
  std::string suite_id;
  xs::cli::BackendOptions backend;
  xs::cli::SweepOverrides sweep;
  std::string model_path, out_path;
  bool list = false, dry_run = false, resume = false, no_progress = false, json = false;
  FaOptions fa;
  xs::cli::TableOutputs tables;
};

int run_fa_a2a(const BenchOptions& o, const std::vector<std::string>& argv) {
  if (o.backend.kind == "sim")
    throw xs::input_error("--backend", "fa_a2a has no simulator: it runs real FlashAttention and All-to-All "
                                       "kernels on a GPU (drop --backend sim; try remote_store.periodic with sim)");
  if (!o.tables.csv_path.empty() || o.tables.markdown)
    throw xs::input_error(!o.tables.csv_path.empty() ? "--csv" : "--md",
                          "not available for fa_a2a (its table is printed by the suite itself)");
  const auto seq_lens = xs::parse_integer_range(o.fa.M, "--M");
  const auto heads = xs::parse_integer_range(o.fa.heads, "--heads");
  std::vector<std::string> targets;
  const std::string target_list = o.backend.target.empty() ? "local,host" : o.backend.target;
  for (std::size_t start = 0; start <= target_list.size();) {
    const std::size_t end = std::min(target_list.find(',', start), target_list.size());
    targets.push_back(target_list.substr(start, end - start));
    start = end + 1;
  }
  if (o.dry_run) {
    for (const auto& t : targets)
      for (long long h : heads)
        for (long long m : seq_lens) fmt::print("fa_a2a M={} heads={} P={} target={}\n", m, h, o.fa.P, t);
    fmt::print("{} points\n", seq_lens.size() * heads.size() * targets.size());
    return 0;
  }
#if defined(XS_HAVE_ATTENTION)
  xs::attention::FaBenchOptions f;
  f.seq_lens = seq_lens;
  f.targets = targets;
  f.num_heads = heads;
  f.num_ranks = o.fa.P;
  f.num_ctas = o.fa.ctas;
  f.launches_per_graph = o.fa.launches_per_graph;
  if (o.sweep.repetitions) f.repetitions = *o.sweep.repetitions;
  f.verify = !o.fa.no_verify;
  f.resume = o.resume;
  f.progress = !o.no_progress;
  f.model_path = o.model_path;
  f.out_path = o.out_path.empty() ? "out/bench-fa_a2a.json" : o.out_path;
  f.argv = argv;
  return xs::attention::run_fa_bench(f);
#else
  (void)argv;
  throw xs::no_gpu_error("fa_a2a needs the CUDA build (nvcc was not found at configure time): not built");
#endif
}

const SuiteInfo& find_suite(const std::string& id) {
  for (const auto& s : kSuites)
    if (id == s.id) return s;
  std::string ids;
  for (const auto& s : kSuites) ids += std::string(ids.empty() ? "" : ", ") + s.id;
  throw xs::input_error("suite", fmt::format("unknown suite '{}'; accepted: {} (see --list)", id, ids));
}

int run(BenchOptions& o, const std::vector<std::string>& argv) {
  if (o.list) {
    for (const auto& s : kSuites) fmt::print("{:<30} {}\n", s.id, s.what);
    fmt::print("{:<30} {}\n", kFaA2aId, kFaA2aWhat);
    return 0;
  }
  if (o.suite_id.empty()) throw xs::input_error("suite", "name a suite to run (see --list)");
  if (o.json && o.tables.markdown) throw xs::input_error("--md", "cannot be combined with --json (both print on stdout)");
  if (o.suite_id == kFaA2aId) return run_fa_a2a(o, argv);
  const SuiteInfo& info = find_suite(o.suite_id);
  o.sweep.suite = xs::suite_name(info.suite);
  xs::bench::SweepConfig config;
  config.target = o.backend.target.empty() ? "host" : o.backend.target;
  for (const auto& note : xs::cli::apply_overrides(config, o.sweep, o.dry_run))
    std::fprintf(stderr, "xstage-bench: note: %s\n", note.c_str());
  const auto points = xs::bench::expand(config);
  if (o.dry_run) {  // no backend, no CUDA call: works without a GPU
    xs::cli::print_dry_run(points, stdout);
    return 0;
  }
  // Load the model before measuring so a bad --model fails before any launch.
  std::optional<xs::model::PlatformModel> platform;
  if (!o.model_path.empty()) platform = xs::model::PlatformModel::load(o.model_path);

  const std::string out = o.out_path.empty()
                              ? fmt::format("out/bench-{}-{}.json", o.suite_id, xs::cli::file_safe(config.target))
                              : o.out_path;
  // Every output is checked (not created) before the backend starts; run_sweep creates the folders.
  xs::report::check_output_path(out, "--out");
  if (!o.tables.csv_path.empty()) xs::report::check_output_path(o.tables.csv_path, "--csv");
  auto backend = xs::cli::make_backend(o.backend);
  auto outcome = xs::bench::run_sweep(*backend, points, {out, o.resume, !o.no_progress});
  if (outcome.interrupted) {
    std::fprintf(stderr, "xstage-bench: interrupted; finished points are in %s; rerun with --resume\n",
                 xs::report::journal_path_for(out).c_str());
    return xs::bench::kInterruptedExitCode;
  }
  xs::report::ResultFile file;
  file.meta = xs::report::make_meta(argv, backend->name(), backend->describe());
  file.meta["suite"] = info.id;
  file.meta["wall_s"] = outcome.wall_s;
  file.config = xs::bench::to_json(config);
  file.points = std::move(outcome.records);
  if (platform) {
    xs::fit::attach_predictions(file.points, *platform);
    file.validation = xs::fit::validate(file.points, *platform).to_json();
    file.extra["model_from"] = o.model_path;
  }
  xs::report::write_json_atomic(out, xs::report::to_json(file));
  const xs::report::Table table = xs::cli::points_table(file.points);
  xs::cli::write_table_outputs(table, o.tables);
  if (o.json) {
    fmt::print("{}\n", xs::report::to_json(file).dump(1));
  } else if (o.tables.markdown) {
    fmt::print("wrote {} ({} points, {:.1f} s)\n", out, file.points.size(), outcome.wall_s);
  } else {
    xs::bench::print_points_table(file.points, stdout);
    fmt::print("wrote {} ({} points, {:.1f} s)\n", out, file.points.size(), outcome.wall_s);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return xs::cli::run_main("xstage-bench", [&]() {
    BenchOptions o;
    CLI::App app{
        "xstage-bench: run one benchmark suite over a sweep; each point is stored with its measured spans\n"
        "(median, p10/p90, every sample) and, with --model, the Burst-Gap prediction beside it.\n\n"
        "Examples:\n"
        "  xstage-bench --list\n"
        "  xstage-bench remote_store.periodic --target host --K 132 --B 32KiB --G 0:200us:+10us\n"
        "  xstage-bench remote_store.isolated --K 132 --B 1KiB:2MiB:x2 --model out/calibration-gpu-host.json\n"
        "  xstage-bench fa_a2a --M 8192:65536:x2 --target local,host --model out/calibration-gpu-host.json\n\n"
        "Limits: at most 100,000 points per sweep, 100,000 repetitions per point and 100,000 bursts per\n"
        "repetition (exit 2 beyond them, before anything runs).\n\n"
        "Exit codes: 0 ok, 1 a point failed data verification, 2 bad usage or input, 3 CUDA failure,\n"
        "77 no GPU, 130 interrupted (--resume).",
        "xstage-bench"};
    xs::cli::add_version_flag(app, "xstage-bench");
    app.add_option("suite", o.suite_id, "Suite id (see --list)");
    app.add_flag("--list", o.list, "List the suites");
    xs::cli::add_backend_options(app, o.backend);
    xs::cli::add_sweep_overrides(app, o.sweep, /*with_suite=*/false);
    app.add_option("--model", o.model_path, "Calibration file: store its predictions beside each point");
    app.add_option("--out", o.out_path, "Result file (default out/bench-<suite>-<target>.json)");
    app.add_flag("--resume", o.resume, "Continue an interrupted run from its journal");
    app.add_flag("--dry-run", o.dry_run, "Print the expanded sweep and its size; run nothing");
    app.add_flag("--no-progress", o.no_progress, "No progress line on stderr");
    app.add_flag("--json", o.json, "Print the result file on stdout instead of a table");
    xs::cli::add_table_flags(app, o.tables, "every point");
    auto* fa = app.add_option_group("fa_a2a", "Options of the fa_a2a suite (--target takes a list: local,host)");
    fa->add_option("--M", o.fa.M, "Sequence lengths, range grammar (multiples of 128)")->capture_default_str();
    fa->add_option("--heads", o.fa.heads, "Heads per rank (after the pre-attention All-to-All), range grammar "
                   "(e.g. 4,8,16)")->capture_default_str();
    fa->add_option("--P", o.fa.P, "Ulysses ranks the output is split over")->capture_default_str()
        ->check(CLI::Range(1, 1024));
    fa->add_option("--ctas", o.fa.ctas, "Persistent CTAs (0: one per SM)")->capture_default_str();
    fa->add_option("--launches-per-graph", o.fa.launches_per_graph, "Back-to-back launches per graph replay")
        ->capture_default_str()->check(CLI::Range(1, 100));
    fa->add_flag("--no-verify", o.fa.no_verify, "Skip the reference comparison (not recommended)");
    xs::cli::parse_or_throw(app, argc, argv);
    return run(o, std::vector<std::string>(argv, argv + argc));
  });
}
