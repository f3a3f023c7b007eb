// xstage cli layer: xstage-gate compares a candidate result file with a baseline under a gate config
// (docs/gate.md). Exit 0 pass, 1 regression (WORSE or MISSING), 2 bad input.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "xs/cli/common/cli_main.hpp"
#include "xs/common/error.hpp"
#include "xs/gate/compare.hpp"
#include "xs/gate/gate_output.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/output_set.hpp"
#include "xs/report/result_file.hpp"
#include "xs/report/table.hpp"

namespace {

struct GateOptions {
  std::string baseline_path;
  std::string candidate_path;
  std::string config_path;
  std::string junit_path;   // empty: no JUnit file
  std::string csv_path;     // empty: no CSV file
  bool json_output = false;
  bool markdown_output = false;
  bool only_failures = false;  // --md: WORSE and MISSING rows only
  bool all_rows = false;       // terminal table: every row, not only WORSE and MISSING
};

int run_gate(const GateOptions& options) {
  using xs::report::NamedPath;
  using xs::report::OutputKind;
  // Every output path is checked before anything is read or written: exit 2 leaves no file behind. No
  // output may be an input or the other output; "-", /dev/stdout, /proc/self/fd/1, ... stream the file on stdout.
  const std::vector<NamedPath> outputs = {{options.junit_path, "--junit"}, {options.csv_path, "--csv"}};
  for (const NamedPath& out : outputs)
    if (!out.path.empty()) xs::report::check_output_path(out.path, out.what, OutputKind::kFileOrStream);
  xs::report::check_distinct_paths(outputs, {{options.baseline_path, "--baseline"},
                                             {options.candidate_path, "--candidate"},
                                             {options.config_path, "--config"}});
  const NamedPath* on_stdout = nullptr;
  for (const NamedPath& out : outputs)
    if (xs::report::stream_fd(out.path) == 1) on_stdout = &out;
  if (on_stdout && (options.json_output || options.markdown_output))
    throw xs::input_error(on_stdout->what, fmt::format("'{}' is stdout, where {} prints too: write one of them to "
                                                       "a file", on_stdout->path,
                                                       options.json_output ? "--json" : "--md"));
  // The file on stdout stays clean: the table goes to stderr then.
  std::FILE* table_out = on_stdout ? stderr : stdout;
  const xs::gate::GateConfig config = xs::gate::read_gate_config(options.config_path);
  const xs::gate::GateReport report =
      xs::gate::compare_files(options.baseline_path, options.candidate_path, config);
  // Loud, on stderr so that --json/--md output stays clean, and before the table so it is seen first.
  for (const std::string& w : report.warnings) std::fprintf(stderr, "xstage-gate: WARNING: %s\n", w.c_str());
  if (!report.warnings.empty()) {
    std::fputs("xstage-gate: WARNING: the files may not be comparable; the verdict below still decides the exit "
               "code\n", stderr);
  }
  if (report.identical_inputs)
    std::fputs("xstage-gate: note: --baseline and --candidate hold the same bytes: every row is SAME by "
               "construction, so a PASS here checks the files and the config, not a new measurement\n", stderr);
  // Files first: an unwritable path is exit 2 before anything claims a verdict on stdout. --junit and --csv as one
  // set (report/output_set.hpp): a --csv that cannot be written leaves no --junit either.
  std::vector<xs::report::PendingOutput> files;
  if (!options.junit_path.empty())
    files.push_back({options.junit_path, "--junit", xs::gate::to_junit_xml(report, config), /*may_stream=*/true});
  if (!options.csv_path.empty())
    files.push_back({options.csv_path, "--csv", xs::report::to_csv(xs::gate::comparison_table(report, config, false)),
                     /*may_stream=*/true});
  xs::report::write_outputs_atomic(files);
  if (options.json_output) {
    std::fputs((xs::gate::report_to_json(report, config).dump(1) + "\n").c_str(), stdout);
  } else if (options.markdown_output) {
    const xs::gate::TableOptions md_options{options.only_failures};
    for (const std::string& w : report.warnings) std::printf("> **WARNING**: %s\n\n", w.c_str());
    std::fputs(xs::report::to_markdown(xs::gate::comparison_table(report, config, true, md_options)).c_str(), stdout);
    std::printf("\n%s\n", xs::gate::summary_line(report).c_str());
  } else {
    // The terminal shows what needs a look (WORSE and MISSING rows) and the summary; --all every row.
    const xs::gate::TableOptions table_options{!options.all_rows};
    std::fputs(xs::gate::format_table(report, config, table_options).c_str(), table_out);
    if (!options.all_rows && report.rows.size() > report.count(xs::gate::Status::kWorse) +
                                                       report.count(xs::gate::Status::kMissing))
      std::fputs("(--all prints every row; --csv, --json and --junit always hold them all)\n", table_out);
  }
  return static_cast<int>(report.passed() ? xs::ExitCode::kOk : xs::ExitCode::kRegression);
}

}  // namespace

int main(int argc, char** argv) {
  return xs::cli::run_main("xstage-gate", [&] {
    GateOptions options;
    CLI::App app{"Compare a candidate xstage result file with a baseline under per-metric tolerances and a\n"
                 "Mann-Whitney U test on the stored samples (docs/gate.md).\n"
                 "Exit codes: 0 pass, 1 regression (a metric WORSE or MISSING), 2 bad input."};
    app.add_option("--baseline", options.baseline_path, "reference result file (xstage.result JSON)")
        ->required();
    app.add_option("--candidate", options.candidate_path, "result file under test")->required();
    app.add_option("--config", options.config_path, "gate config (xstage.gate JSON, see docs/gate.md)")
        ->required();
    app.add_option("--junit", options.junit_path, "also write JUnit XML here (one testcase per metric instance; "
                   "- for stdout)")->check(xs::cli::kNonEmptyPath);
    app.add_option("--csv", options.csv_path, "also write the full comparison as CSV here (SI numbers + unit "
                   "column; - for stdout)")->check(xs::cli::kNonEmptyPath);
    auto* json_flag = app.add_flag("--json", options.json_output, "print the comparison as JSON instead of a table");
    app.add_flag("--md", options.markdown_output, "print the table as Markdown instead of aligned text")
        ->excludes(json_flag);
    auto* all_flag = app.add_flag("--all", options.all_rows,
                                  "print every row in the table (default: only WORSE and MISSING rows, then the "
                                  "summary, which counts all)");
    app.add_flag("--only-failures", options.only_failures,
                 "with --md: print only WORSE and MISSING rows (the summary still counts all; files stay complete); "
                 "the aligned table does so unless --all")
        ->excludes(all_flag);
    xs::cli::add_version_flag(app, "xstage-gate");
    xs::cli::parse_or_throw(app, argc, argv);
    return run_gate(options);
  });
}
