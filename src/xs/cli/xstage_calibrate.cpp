// xstage-calibrate: characterizes a node's remote-store path. Runs the periodic, isolated and
// local-control sweeps (GPU, or the discrete-event simulator), fits M_X = (T_iss^0(K,V), R, Q(K)),
// validates it over the gap sweep without refitting, and writes one calibration file (atomically), with
// a JSON-lines journal of finished points beside it for --resume.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "xs/bench/calibration.hpp"
#include "xs/bench/rank_agree.hpp"
#include "xs/bench/rank_launch.hpp"
#include "xs/bench/run_control.hpp"
#include "xs/bench/run_journal.hpp"
#include "xs/bench/runner.hpp"
#include "xs/bench/sweep.hpp"
#include "xs/cli/common/cli_main.hpp"
#include "xs/cli/common/sweep_options.hpp"
#include "xs/common/error.hpp"
#include "xs/common/units.hpp"
#include "xs/fit/gap_reach.hpp"
#include "xs/fit/interference.hpp"
#include "xs/fit/interference_epilogue.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/output_set.hpp"
#include "xs/report/result_file.hpp"
#include "xs/build_info.hpp"

namespace {

struct CalibrateOptions {
  xs::remote_store::BackendOptions backend;
  xs::remote_store::SweepOverrides sweep;
  std::string config_path;
  std::string out_path;
  std::string refit_path;
  std::string rate_guess = "";
  bool resume = false;
  bool resume_any_build = false;  // --resume-any-build (implies resume)
  bool dry_run = false;
  bool dump_config = false;
  bool no_progress = false;
  bool print_points = false;
  bool list = false;
  bool no_fit = false;
  int bootstrap = 1000;
  xs::remote_store::TableOutputs tables;
};

// The Burst-Gap fit needs periodic or isolated points; a sweep of loaded (and control) blocks alone, e.g.
// --only loaded, is measured and written without it.
bool fits_burst_gap(const CalibrateOptions& o, const std::vector<xs::bench::ExpandedPoint>& points) {
  if (o.no_fit) return false;
  return std::any_of(points.begin(), points.end(), [](const auto& p) {
    return p.spec.suite == xs::Suite::kPeriodic || p.spec.suite == xs::Suite::kIsolated;
  });
}

void print_notes(const std::vector<std::string>& notes) {
  for (const auto& n : notes) std::fprintf(stderr, "xstage-calibrate: note: %s\n", n.c_str());
}

// --refit fits the points already in its file: a flag that chooses or runs a measurement has nothing to act
// on, and is refused rather than ignored.
void refuse_measurement_flags(const CLI::App& app) {
  static const std::set<std::string> kRefitFlags = {"--refit", "--out",    "--csv",        "--md",
                                                    "--points", "--bootstrap", "--no-progress"};
  for (const CLI::Option* option : app.get_options())
    if (option->count() > 0 && !kRefitFlags.count(option->get_name()))
      throw xs::input_error(option->get_name(), "does not apply to --refit, which fits the points already in its "
                                                "file without measuring; drop it (--refit takes --out, --csv, --md, "
                                                "--points and --bootstrap)");
}

// The interference term (issue 28) from the file's loaded points, if any: extra.interference.
void attach_interference(xs::report::ResultFile& file, int bootstrap) {
  xs::fit::InterferenceFitOptions options;
  options.bootstrap_resamples = bootstrap;
  xs::fit::attach_interference(file, options);
  if (!file.extra.contains("interference")) return;
  const auto term = xs::model::interference_term_from_json(file.extra.at("interference"));
  fmt::print("interference term: {}{}\n", xs::model::interference_status_name(term.status),
             term.why.empty() ? "" : " (" + term.why + ")");
}

// The calibration file and --csv as one set (all or none: a --csv that cannot be written leaves no --out), then
// with --md the table on stdout.
void write_outputs(const xs::report::ResultFile& file, const std::string& out, const xs::remote_store::TableOutputs& tables) {
  xs::remote_store::write_table_outputs(xs::remote_store::points_table(file.points), tables,
                               {{out, "--out", xs::report::dump_strict(xs::report::to_json(file), 1) + "\n"}});
}

int refit(const CalibrateOptions& o) {
  // Every output checked before anything is read or written. An output never overwrites an input: --refit
  // writes the file named by --out, another file (an existing one there is replaced, like every output).
  const std::string out = o.out_path;
  xs::report::check_distinct_paths({{o.out_path, "--out"}, {o.tables.csv_path, "--csv"}},
                                   {{o.refit_path, "--refit"}});
  if (o.out_path.empty())
    throw xs::input_error("--out", "--refit needs --out FILE, another file than the one it reads: the calibration "
                                   "it reads is never overwritten; an existing file at FILE is replaced (e.g. "
                                   "--refit cal.json --out cal-refit.json)");
  xs::report::check_output_path(out, "--out");
  xs::remote_store::check_table_outputs(o.tables, false);
  // An interrupt while fitting (seconds with --bootstrap) says so, and never leaves a temporary or half the outputs.
  xs::bench::InterruptExitScope on_interrupt(fmt::format("while refitting: {} was not written{}; {} is unchanged", out,
                                                         o.tables.csv_path.empty() ? "" : " (nor --csv)",
                                                         o.refit_path));
  xs::report::ResultFile file = xs::report::read_result_file(o.refit_path);  // strict: also refuses duplicate points
  std::optional<xs::bench::Reference> reference;
  if (file.extra.contains("reference")) {
    const auto& ref = file.extra.at("reference");
    reference = xs::bench::Reference{ref.value("target", ""), {}};
    if (ref.contains("copy_engine_Bps") && ref.at("copy_engine_Bps").is_number())
      reference->copy_engine_bps = ref.at("copy_engine_Bps").get<double>();
  }
  xs::fit::FitOptions fit_options;
  fit_options.bootstrap_resamples = o.bootstrap;
  // The Burst-Gap fit needs periodic or isolated points; a file of loaded points alone gets only the
  // interference term (issue 28).
  const bool burst_gap = std::any_of(file.points.begin(), file.points.end(), [](const xs::PointRecord& p) {
    return p.spec.suite == xs::Suite::kPeriodic || p.spec.suite == xs::Suite::kIsolated;
  });
  if (burst_gap || !(xs::fit::has_loaded_points(file.points) || xs::fit::has_epilogue_points(file.points)))
    xs::bench::analyse_calibration(file, reference, fit_options);
  attach_interference(file, o.bootstrap);
  // The measurement's provenance stays in meta; the fit's own (which fitter, when) goes beside it.
  // date_utc: when this fit was made (meta.date_utc stays the measurement's): a score's frozen-input rule
  // (cli/common/input_dates) counts a refit as predating only the data it was fitted before.
  file.meta["refit"] = {{"from", std::filesystem::path(o.refit_path).filename().string()},
                        {"date_utc", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)))},
                        {"fitter_git_sha", xs::build_info::kGitSha}, {"fitter_git_dirty", xs::build_info::kGitDirty},
                        {"fitter_version", xs::build_info::kVersion}};
  {
    const xs::report::StopSignalsHeld held;  // an interrupt from here on waits for the outputs
    write_outputs(file, out, o.tables);
    on_interrupt.set_message(fmt::format("after {} was written (complete)", out));
  }
  std::FILE* human = xs::remote_store::human_output(o.tables);
  if (o.print_points && !o.tables.markdown) xs::bench::print_points_table(file.points, human);
  xs::bench::print_calibration_summary(file, human);
  fmt::print(human, "wrote {}\n", out);
  return 0;
}

// Gap reach (issue 27): a gap sweep whose largest G stays below plateau_gap_factor x V/R yields no T_iss^0
// plateau, only an upper bound. V/R is not measured yet, so it is bounded from below by V / (an upper bound on
// R known before the sweep): the simulator's planted R (--sim-R, exact); on a GPU the copy-engine rate of the
// same path, measured just before the sweep. On the host path that is an upper bound: SM stores and the copy
// engine cross the same PCIe link, and every committed H200 calibration has R / copy engine = 0.945-0.951.
// A shortfall is then certain and refused (exit 2) before any journal or output exists. For other targets
// (peer: several SMs can outrun one copy engine over NVLink) the copy engine bounds nothing: a note only.
void check_gap_reach(const std::vector<xs::bench::ExpandedPoint>& points, const CalibrateOptions& o,
                     const std::string& target, std::optional<double> copy_engine_bps, double plateau_gap_factor,
                     bool print = true) {
  std::optional<double> upper_bps;
  std::string source;
  if (o.backend.kind == "sim") {
    upper_bps = xs::parse_rate_bps(o.backend.sim_R, "--sim-R");
    source = "the simulator's planted R (--sim-R)";
  } else if (copy_engine_bps) {
    upper_bps = *copy_engine_bps;
    source = fmt::format("the copy-engine rate measured on {} just now", target);
  }
  if (!upper_bps) {
    if (print) print_notes({"gap reach not checked: no copy-engine rate for target " + target});
    return;
  }
  std::vector<xs::PointSpec> specs;
  for (const auto& p : points) specs.push_back(p.spec);
  const auto short_of = xs::fit::gap_sweep_shortfalls(specs, *upper_bps, plateau_gap_factor);
  if (short_of.empty()) return;
  const std::string what = fmt::format(
      "{} gap sweep(s) cannot reach the T_iss^0 plateau with R <= {:.4g} GB/s ({}): {}", short_of.size(),
      *upper_bps / 1e9, source, xs::fit::describe_shortfalls(short_of, plateau_gap_factor));
  if (o.backend.kind != "sim" && target != "host") {
    if (print) print_notes({what + " (the copy engine need not bound R on this target: not refused)"});
    return;
  }
  throw xs::input_error("G", what + "; extend those blocks' G ranges (e.g. --config with G up to the needed gap); "
                             "nothing was measured or written");
}

// The sweep: a config file, or the built-in default sized from a drain-rate guess (the path's copy-engine
// bandwidth when a backend is at hand, else --rate-guess or the paper's 717 GB/s).
xs::bench::SweepConfig build_sweep(const CalibrateOptions& o, const std::string& target, double guess_bps,
                                   std::vector<std::string>& notes) {
  xs::bench::SweepConfig config;
  if (!o.config_path.empty()) {
    config = xs::bench::load_sweep_config(o.config_path);
    if (!o.backend.target.empty()) config.target = o.backend.target;
  } else {
    config = xs::bench::default_calibration(target, guess_bps);
  }
  notes = xs::remote_store::apply_overrides(config, o.sweep, o.dry_run);
  return config;
}

// --list, --dry-run and --dump-config: the sweep printed, or checked as the run would check it before measuring,
// without creating a backend (no CUDA call: they work without a GPU).
int inspect_sweep(const CalibrateOptions& o, const std::string& target, const std::string& out,
                  std::optional<double> guess_bps) {
  std::vector<std::string> notes;
  const auto config = build_sweep(o, target, guess_bps.value_or(717e9), notes);
  if (o.dump_config) {
    fmt::print("{}\n", xs::bench::to_json(config).dump(2));
    return 0;
  }
  // What the run would refuse before measuring, --dry-run refuses too (the simulator's checks included).
  xs::remote_store::check_points_without_device(o.backend, xs::bench::expand(config));
  print_notes(notes);
  if (o.config_path.empty() && !guess_bps)
    std::fprintf(stderr, "xstage-calibrate: note: gap ranges sized for a 717 GB/s drain-rate guess; a real "
                 "run sizes them from the path's copy-engine bandwidth (fix them with --rate-guess)\n");
  if (o.list) {
    xs::remote_store::print_blocks(config, stdout);
    return 0;
  }
  // --dry-run refuses what the run refuses before measuring, with the same exit code: a sweep that cannot
  // be fitted, gaps short of the plateau (on the simulator, whose R is known), the outputs and the journal.
  const auto points = xs::bench::expand(config);
  if (fits_burst_gap(o, points)) {
    print_notes(xs::remote_store::check_fittable(points, xs::fit::FitOptions{}.min_zero_gap_volume_bytes));
    if (o.backend.kind == "sim")
      check_gap_reach(points, o, target, std::nullopt, xs::fit::FitOptions{}.plateau_gap_factor);
  }
  xs::remote_store::check_table_outputs(o.tables, false);
  xs::bench::check_journal_for_dry_run(xs::report::journal_path_for(out), out, o.resume,
                                       [](const std::string& path) {
                                         const auto contents = xs::report::read_journal(path);
                                         return xs::bench::JournalState{contents.header, contents.records.size()};
                                       });
  xs::remote_store::print_dry_run(points, stdout);
  return 0;
}

// A measuring run across its ranks: the options, this rank's place, the fit's options, the backend with the
// copy-engine rate measured before the sweep, and the sweep itself.
struct CalibrationRun {
  CalibrationRun(const CalibrateOptions& options, const std::string& target_name, const std::string& out_path,
                 const xs::bench::RankContext& rank_context, xs::bench::RankComm& rank_comm,
                 std::optional<double> guess)
      : o(options), target(target_name), out(out_path), rank(rank_context), comm(rank_comm),
        root(rank_comm.rank() == 0), several(rank_comm.size() > 1), guess_bps(guess) {
    fit_options.bootstrap_resamples = options.bootstrap;
  }
  const CalibrateOptions& o;
  const std::string& target;
  const std::string& out;
  const xs::bench::RankContext& rank;
  xs::bench::RankComm& comm;
  // Several ranks (mpirun/srun): every rank measures every point on its own GPU (the simulator: its own noise
  // stream); rank 0 alone prints, merges (per repetition the slowest rank), fits and writes (bench/runner.hpp).
  bool root = false, several = false;
  std::optional<double> guess_bps;
  xs::fit::FitOptions fit_options;
  std::unique_ptr<xs::Backend> backend;
  std::optional<double> copy_engine_bps;
  xs::bench::SweepConfig config;
  std::vector<xs::bench::ExpandedPoint> points;
  bool fit = false;
};

// Everything the flags decide is checked before the backend starts: the sweep (with the 717 GB/s guess
// when the copy engine will size it), its fittability, and the output paths. One rank's refusal is every
// rank's (rank 0 prints it). Then the backend starts and rank 0's copy-engine rate is shared.
void start_backend(CalibrationRun& r) {
  const CalibrateOptions& o = r.o;
  xs::bench::agree(r.comm, [&] {
    std::vector<std::string> notes;
    const auto config = build_sweep(o, r.target, r.guess_bps.value_or(717e9), notes);
    const auto points = xs::bench::expand(config);
    if (fits_burst_gap(o, points)) {
      notes = xs::remote_store::check_fittable(points, r.fit_options.min_zero_gap_volume_bytes);
      if (r.root) print_notes(notes);
    } else if (!o.no_fit && r.root) {
      print_notes({"the sweep has no periodic or isolated points: the Burst-Gap model is not fitted (model: null)"});
    }
    xs::report::check_output_path(r.out, "--out");  // run_sweep creates the folders once all checks pass
    xs::remote_store::check_table_outputs(o.tables, false);
    xs::remote_store::BackendOptions backend_options = o.backend;
    if (r.several) {
      if (o.backend.device_index != 0)
        throw xs::input_error("--device", fmt::format("with {} ranks each rank drives its own GPU (its local rank); "
                                                      "drop --device", r.comm.size()));
      backend_options.device_index = r.rank.device;
    }
    r.backend = xs::remote_store::make_backend(backend_options, r.comm.rank());
    // Measured before the sweep: it sizes the default gap ranges and bounds R for the gap-reach check.
    if (r.root) r.copy_engine_bps = r.backend->reference_bandwidth_bps(r.target);
  });
  if (r.several) {  // rank 0's copy-engine bandwidth sizes the gap ranges on every rank: one sweep for all
    double bps = r.copy_engine_bps.value_or(0);
    r.comm.broadcast_bytes(&bps, sizeof bps);
    r.copy_engine_bps = bps > 0 ? std::optional<double>(bps) : std::nullopt;
  }
  if (o.config_path.empty() && !r.guess_bps && r.copy_engine_bps) r.guess_bps = *r.copy_engine_bps;
}

// The sweep to measure, sized from the copy-engine rate, with its fittability and gap reach checked (agreed by
// every rank).
void plan_sweep(CalibrationRun& r) {
  xs::bench::agree(r.comm, [&] {
    std::vector<std::string> notes;
    r.config = build_sweep(r.o, r.target, r.guess_bps.value_or(717e9), notes);
    if (r.root) print_notes(notes);
    r.points = xs::bench::expand(r.config);
    r.fit = fits_burst_gap(r.o, r.points);
    if (r.fit) {
      notes = xs::remote_store::check_fittable(r.points, r.fit_options.min_zero_gap_volume_bytes);
      if (r.root) print_notes(notes);
      check_gap_reach(r.points, r.o, r.target, r.copy_engine_bps, r.fit_options.plateau_gap_factor, r.root);
    }
  });
}

// Rank 0 fits the measured points and writes the calibration file (a failure there is every rank's).
void fit_and_write(CalibrationRun& r, const std::vector<std::string>& argv, xs::bench::SweepOutcome& outcome,
                   std::optional<xs::bench::InterruptExitScope>& on_interrupt, xs::report::ResultFile& file) {
  xs::bench::agree(r.comm, [&] {  // rank 0 fits and writes; a failure there is every rank's
    if (!r.root) return;
    if (!r.copy_engine_bps) r.copy_engine_bps = r.backend->reference_bandwidth_bps(r.target);
    file.meta = xs::report::make_meta(argv, r.backend->name(), r.backend->describe());
    file.meta["wall_s"] = outcome.wall_s;
    file.meta["resumed_points"] = outcome.num_resumed;
    if (!outcome.resumed_from_build.empty()) file.meta["resumed_from_build"] = outcome.resumed_from_build;
    if (r.several) {
      file.meta["launch"] = outcome.launch;
      file.meta["ranks"] = outcome.ranks;
    }
    file.config = xs::bench::to_json(r.config);
    file.points = std::move(outcome.records);
    if (r.fit) xs::bench::analyse_calibration(file, xs::bench::Reference{r.target, r.copy_engine_bps}, r.fit_options);
    if (!r.o.no_fit) attach_interference(file, r.o.bootstrap);
    const xs::report::StopSignalsHeld held;  // an interrupt from here on waits for the outputs
    xs::bench::write_keeping_points([&] { write_outputs(file, r.out, r.o.tables); }, file.points.size(), r.out);
    on_interrupt->set_message(fmt::format("after {} was written (complete)", r.out));
  });
}

// Rank 0's report of the written calibration: the points (--points), the fit's and the loaded points' summaries,
// and the wall time.
void print_run_summary(const CalibrationRun& r, const xs::bench::SweepOutcome& outcome,
                       const xs::report::ResultFile& file) {
  std::FILE* human = xs::remote_store::human_output(r.o.tables);
  if (r.o.print_points && !r.o.tables.markdown) xs::bench::print_points_table(file.points, human);
  xs::bench::print_calibration_summary(file, human);
  xs::bench::print_loaded_summary(file.points, human);
  fmt::print(human, "calibration of {} on {} took {:.1f} s of wall time ({} points{}); wrote {}\n", r.target,
             r.backend->name(), outcome.wall_s, file.points.size(),
             r.several ? fmt::format(", {} ranks", r.comm.size()) : std::string(), r.out);
  xs::bench::note_kept_journal("xstage-calibrate", r.out);
}

int calibrate(const CalibrateOptions& o, const std::vector<std::string>& argv, const xs::bench::RankContext& rank,
              xs::bench::RankComm& comm) {
  const std::string target = o.backend.target.empty() ? "host" : o.backend.target;
  const bool inspect_only = o.dry_run || o.dump_config || o.list;
  std::optional<double> guess_bps;
  if (!o.rate_guess.empty()) guess_bps = xs::parse_rate_bps(o.rate_guess, "--rate-guess");

  const std::string out = o.out_path.empty() ? fmt::format("out/calibration-{}-{}.json", o.backend.kind,
                                                           xs::remote_store::file_safe(target))
                                             : o.out_path;
  // No output may be an input or another output (checked by every mode, --dry-run too).
  xs::report::check_distinct_paths(
      {{out, "--out"}, {xs::report::journal_path_for(out), "the journal (beside --out)"}, {o.tables.csv_path, "--csv"}},
      {{o.config_path, "--config"}});

  // --list, --dry-run and --dump-config never create a GPU backend (no CUDA call): they work without a GPU.
  if (inspect_only) return inspect_sweep(o, target, out, guess_bps);

  CalibrationRun r(o, target, out, rank, comm, guess_bps);
  start_backend(r);
  plan_sweep(r);

  xs::bench::RunOptions run_options{out, o.resume, !o.no_progress, o.resume_any_build};
  xs::bench::SweepOutcome outcome = xs::bench::run_sweep(*r.backend, r.points, run_options, comm);
  if (outcome.interrupted) {
    if (r.root)
      std::fprintf(stderr, "xstage-calibrate: interrupted after %zu of %zu points; finished points are in %s;\n"
                   "  run the same command with --resume to continue (--resume-any-build once the tools were rebuilt)\n", outcome.records.size(), r.points.size(),
                   xs::report::journal_path_for(out).c_str());
    return xs::bench::interrupted_exit_code();
  }
  // An interrupt while rank 0 fits and writes (seconds with --bootstrap) ends the run at once, saying what is kept.
  std::optional<xs::bench::InterruptExitScope> on_interrupt;
  if (r.root)
    on_interrupt.emplace(fmt::format(
        "while fitting: {} was not written{}; the {} measured points are in {}: run the same command with --resume "
        "to fit them without measuring again", out, o.tables.csv_path.empty() ? "" : " (nor --csv)",
        outcome.records.size(), xs::report::journal_path_for(out)));
  xs::report::ResultFile file;
  fit_and_write(r, argv, outcome, on_interrupt, file);
  if (!r.root) return 0;
  print_run_summary(r, outcome, file);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  xs::bench::RankProcess ranks("xstage-calibrate", &argc, &argv);  // MPI_Init_thread under mpirun/srun (MPI build)
  const int code = xs::cli::run_main("xstage-calibrate", [&]() {
    CalibrateOptions o;
    CLI::App app{
        "xstage-calibrate: measure a node's remote-store path and fit the Burst-Gap model\n"
        "M_X = (T_iss^0(K,V), R, Q(K)) of the X-Stage paper (sections 3.1-3.6).\n\n"
        "Runs zero-gap periodic bursts (R), a gap sweep (T_iss^0 plateau and validation of eqs. 2-3),\n"
        "isolated bursts over V (the Q knee, eq. 7) and the local-memory control, then writes a\n"
        "calibration file that xstage-predict --model and xstage-bench --model read.\n\n"
        "Examples:\n"
        "  xstage-calibrate --target host                     # the default sweep on GPU 0\n"
        "  xstage-calibrate --backend sim --sim-R 717GB/s     # the whole pipeline without a GPU\n"
        "  xstage-calibrate --dry-run                          # print the expanded sweep\n"
        "  xstage-calibrate --refit out/calibration-gpu-host.json --out out/calibration-gpu-host-refit.json\n\n"
        "Limits: at most 100,000 points in the whole sweep, 100,000 repetitions per point, 65,536 bursts\n"
        "per repetition, K <= 65,536 and K x bursts <= 4,194,304 (exit 2 beyond them, before anything runs).\n\n"
        "Several GPUs: in a build with -DXS_WITH_MPI=ON, mpirun -np N xstage-calibrate ... (or srun): every\n"
        "rank measures every point on its own GPU at once; rank 0 merges (per repetition the slowest rank),\n"
        "fits and writes (docs/multi-gpu.md).\n\n"
        "Exit codes: 0 ok, 2 bad usage or input, 3 CUDA failure, 77 no GPU, 128 + the signal when interrupted\n"
        "(130 SIGINT, 143 SIGTERM; --resume continues).",
        "xstage-calibrate"};
    xs::cli::add_version_flag(app, "xstage-calibrate");
    xs::cli::add_backend_options(app, o.backend);
    xs::cli::add_sweep_overrides(app, o.sweep);
    app.add_flag("--list", o.list, "List the sweep's blocks (name, suite, K, B, G, points) and exit");
    app.add_option("--only", o.sweep.only, "Run only these blocks, e.g. zero_gap,isolated, or every block of a suite, "
                   "e.g. loaded (see --list)")
        ->delimiter(',');
    app.add_option("--config", o.config_path, "Sweep config file (JSON, configs/calibrate/*.json); default: "
                   "the built-in sweep (see --dump-config)")
        ->check(xs::cli::kNonEmptyPath);
    app.add_option("--out", o.out_path, "Calibration file to write (default out/calibration-<backend>-<target>.json); "
                   "the journal goes beside it as <out>.journal.jsonl")
        ->check(xs::cli::kNonEmptyPath);
    app.add_flag("--resume", o.resume, "Continue an interrupted run from its journal (written by this build)");
    app.add_flag("--resume-any-build", o.resume_any_build, "Continue an interrupted run whose journal another build of the tools wrote (after a rebuild or a new commit; implies --resume). Every other field of the journal must match; its points are kept as that build measured them and the result's meta.resumed_from_build names it");
    app.add_flag("--dry-run", o.dry_run, "Print the expanded sweep and its size; run nothing");
    app.add_flag("--dump-config", o.dump_config, "Print the sweep config as JSON (edit it and pass --config)");
    app.add_option("--refit", o.refit_path, "Refit and revalidate an existing calibration file offline "
                   "into the file named by --out (another file: the input is never overwritten; an existing file "
                   "there is replaced)")
        ->check(xs::cli::kNonEmptyPath);
    app.add_option("--rate-guess", o.rate_guess, "Drain-rate guess that sizes the default gap ranges "
                   "(default: the path's copy-engine bandwidth)");
    app.add_option("--bootstrap", o.bootstrap, "Bootstrap resamples for the 95% intervals")->check(xs::cli::integer_in(0, 100000));
    app.add_flag("--no-progress", o.no_progress, "No progress line on stderr");
    app.add_flag("--no-fit", o.no_fit, "Measure and write the points only (model: null; fit later with --refit); "
                 "skips the check that the sweep can be fitted");
    app.add_flag("--points", o.print_points, "Print every point with its prediction");
    xs::cli::add_table_flags(app, o.tables, "every point with its prediction");
    xs::cli::parse_or_throw(app, argc, argv);
    o.resume = o.resume || o.resume_any_build;
    ranks.parsed();
    const std::vector<std::string> args(argv, argv + argc);
    if (!o.refit_path.empty() || o.dry_run || o.dump_config || o.list) {  // no measurement: rank 0 alone
      if (!ranks.is_root()) return 0;
      if (!o.refit_path.empty()) {
        refuse_measurement_flags(app);
        return refit(o);
      }
      xs::bench::SingleRankComm one;
      return calibrate(o, args, {}, one);
    }
    return ranks.run(1, o.backend.kind != "sim", xs::remote_store::count_local_gpus,
                     [&](const xs::bench::RankContext& rank, xs::bench::RankComm& comm) {
                       return calibrate(o, args, rank, comm);
                     });
  });
  return ranks.finish(code);
}
