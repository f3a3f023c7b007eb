// xstage remote_store slice: the remote_store.* suites of xstage-bench (see suite.hpp).
#include "xs/remote_store/suite.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "xs/bench/calibration.hpp"
#include "xs/bench/rank_agree.hpp"
#include "xs/bench/run_control.hpp"
#include "xs/bench/run_journal.hpp"
#include "xs/bench/runner.hpp"
#include "xs/bench/sweep.hpp"
#include "xs/common/error.hpp"
#include "xs/fit/calibration_file.hpp"
#include "xs/fit/fit.hpp"
#include "xs/model/platform_model.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/result_file.hpp"

namespace xs::remote_store {
namespace {

// The expanded sweep of one suite: the shared flags over an empty config of that suite. `show_sweep_rules`
// (--dry-run) also names the values the sweep rules change; `print_notes`: rank 0 alone prints them.
std::vector<bench::ExpandedPoint> expand(Suite suite, const RemoteStoreFlags& f, bool show_sweep_rules,
                                         bench::SweepConfig& config, bool print_notes = true) {
  SweepOverrides sweep = f.sweep;
  sweep.suite = suite_name(suite);
  config.target = f.backend.target.empty() ? "host" : f.backend.target;
  try {  // apply_overrides expands (validates) the sweep too
    const auto notes = apply_overrides(config, sweep, show_sweep_rules);
    if (print_notes)
      for (const auto& note : notes) std::fprintf(stderr, "xstage-bench: note: %s\n", note.c_str());
    return bench::expand(config);
  } catch (const Error& e) {
    // This sweep is built from the flags alone: a refused value is named by the flag the user typed.
    throw name_by_flag(e, sweep);
  }
}

// out/bench-<suite>-<target>.json
std::string default_out_path(const bench::SuiteContext& c, const RemoteStoreFlags& f) {
  return fmt::format("out/bench-{}-{}.json", c.suite_id, file_safe(f.backend.target.empty() ? "host" : f.backend.target));
}

int dry_run(Suite suite, const RemoteStoreFlags& f, const bench::SuiteContext& c) {
  bench::SweepConfig config;
  const auto points = expand(suite, f, /*show_sweep_rules=*/true, config);
  check_points_without_device(f.backend, points);  // refuses what the run refuses; no GPU is touched
  // The run's other checks before measuring, in its order: --model, then --out, the journal and its state.
  if (!c.model_path.empty()) (void)fit::load_platform_model(c.model_path);
  const std::string out = c.out_path.empty() ? default_out_path(c, f) : c.out_path;
  bench::check_journal_for_dry_run(report::journal_path_for(out), out, c.resume, [](const std::string& path) {
    const report::JournalContents contents = report::read_journal(path);
    return bench::JournalState{contents.header, contents.records.size()};
  });
  print_dry_run(points, stdout);
  return 0;
}

// Over several ranks (mpirun, or --gpus N) every rank measures every point on its own GPU (the simulator: its
// own noise stream), rank 0 merges, writes and prints (bench/runner.hpp).
int run(Suite suite, const RemoteStoreFlags& f, const bench::SuiteContext& c) {
  bench::SingleRankComm single;
  bench::RankComm& comm = c.comm != nullptr ? *c.comm : single;
  const bool root = comm.rank() == 0, several = comm.size() > 1;
  bench::SweepConfig config;
  std::vector<bench::ExpandedPoint> points;
  std::optional<model::PlatformModel> platform;
  std::string out;
  std::unique_ptr<Backend> backend;
  bench::agree(comm, [&] {  // one rank's refusal ends every rank with the same message
    points = expand(suite, f, /*show_sweep_rules=*/false, config, root);
    // Load the model before measuring so a bad --model fails before any launch.
    if (!c.model_path.empty()) platform = fit::load_platform_model(c.model_path);
    out = c.out_path.empty() ? default_out_path(c, f) : c.out_path;
    // Every output is checked (not created) before the backend starts; run_sweep creates the folders.
    report::check_output_path(out, "--out");
    check_table_outputs(f.tables, c.json);
    BackendOptions backend_options = f.backend;
    if (several) {
      if (f.backend.device_index != 0)
        throw input_error("--device", fmt::format("with {} ranks each rank drives its own GPU (its local rank); drop "
                                                  "--device", comm.size()));
      backend_options.device_index = c.rank.device;
    }
    backend = make_backend(backend_options, comm.rank());
  });
  auto outcome = bench::run_sweep(*backend, points, {out, c.resume, c.progress, c.resume_any_build}, comm);
  if (outcome.interrupted) {
    if (root)
      std::fprintf(stderr, "xstage-bench: interrupted; finished points are in %s; rerun with --resume (--resume-any-build once the tools were rebuilt)\n",
                   report::journal_path_for(out).c_str());
    return bench::interrupted_exit_code();
  }
  report::ResultFile file;
  bench::agree(comm, [&] {  // rank 0 writes; a failure there is every rank's
    if (!root) return;
    file.meta = report::make_meta(c.argv, backend->name(), backend->describe());
    file.meta["suite"] = c.suite_id;
    file.meta["wall_s"] = outcome.wall_s;
    if (!outcome.resumed_from_build.empty()) file.meta["resumed_from_build"] = outcome.resumed_from_build;
    if (several) {
      file.meta["launch"] = outcome.launch;
      file.meta["ranks"] = outcome.ranks;
    }
    file.config = bench::to_json(config);
    file.points = std::move(outcome.records);
    if (platform) {
      fit::attach_predictions(file.points, *platform);
      file.validation = fit::validate(file.points, *platform).to_json();
      file.extra["model_from"] = c.model_path;
    }
    // --out and --csv as one set: a --csv that cannot be written leaves no --out either, and says where the
    // measured points are.
    bench::write_keeping_points([&] {
      write_table_outputs(points_table(file.points), f.tables,
                          {{out, "--out", report::dump_strict(report::to_json(file), 1) + "\n"}});
    }, file.points.size(), out);
  });
  if (!root) return 0;
  std::FILE* human = human_output(f.tables);
  if (c.json) {
    fmt::print("{}\n", report::to_json(file).dump(1));
  } else if (f.tables.markdown) {
    fmt::print("wrote {} ({} points, {:.1f} s)\n", out, file.points.size(), outcome.wall_s);
  } else {
    bench::print_points_table(file.points, human);
    bench::print_loaded_summary(file.points, human);
    fmt::print(human, "wrote {} ({} points, {:.1f} s)\n", out, file.points.size(), outcome.wall_s);
  }
  bench::note_kept_journal("xstage-bench", out);
  return 0;
}

}  // namespace

void register_suites(bench::SuiteRegistry& registry, const RemoteStoreFlags& flags) {
  struct Info {
    Suite suite;
    const char* what;
    const char* example;
  };
  const Info suites[] = {
      {Suite::kPeriodic, "K producers x B bytes, gap G, N bursts (Fig. 3a/b/d)",
       "--target host --K 132 --B 32KiB --G 0:200us:+10us"},
      {Suite::kIsolated, "one burst after recovery: the capacity knee (Fig. 3c)",
       "--K 132 --B 1KiB:2MiB:x2 --model out/calibration-gpu-host.json"},
      {Suite::kLocalControl, "the periodic loop into local HBM (control)", ""},
      {Suite::kLoaded, "a GEMM mainloop on K CTAs beside paced store bursts, or storing after its tiles (injection epilogue; issue 28)",
       "--target host --K 132 --B 8KiB --G 0,40us"},
  };
  for (const Info& info : suites) {
    const Suite suite = info.suite;
    bench::SuiteDefinition d;
    d.id = std::string("remote_store.") + suite_name(suite);
    d.description = info.what;
    d.example = info.example;
    d.dry_run = [suite, &flags](const bench::SuiteContext& c) { return dry_run(suite, flags, c); };
    d.run = [suite, &flags](const bench::SuiteContext& c) { return run(suite, flags, c); };
    d.runs_on_ranks = true;  // every rank measures, rank 0 merges and writes (bench/runner.hpp)
    d.default_out_path = [&flags](const bench::SuiteContext& c) { return default_out_path(c, flags); };
    registry.add(std::move(d));
  }
}

}  // namespace xs::remote_store
