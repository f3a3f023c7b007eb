// xstage cli layer: xstage-gate compares a candidate result file with a baseline under a gate config
// (docs/gate.md). Exit 0 pass, 1 regression (WORSE or MISSING), 2 bad input.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "cli/common/cli_main.hpp"
#include "common/error.hpp"
#include "gate/compare.hpp"
#include "gate/gate_output.hpp"
#include "report/result_file.hpp"

namespace {

struct GateOptions {
  std::string baseline_path;
  std::string candidate_path;
  std::string config_path;
  std::string junit_path;   // empty: no JUnit file
  bool json_output = false;
};

int run_gate(const GateOptions& options) {
  const xs::gate::GateConfig config = xs::gate::read_gate_config(options.config_path);
  const xs::gate::GateReport report =
      xs::gate::compare_files(options.baseline_path, options.candidate_path, config);
  if (options.json_output) {
    std::fputs((xs::gate::report_to_json(report, config).dump(1) + "\n").c_str(), stdout);
  } else {
    std::fputs(xs::gate::format_table(report, config).c_str(), stdout);
  }
  if (!options.junit_path.empty()) {
    xs::report::write_text_atomic(options.junit_path, xs::gate::to_junit_xml(report, config));
  }
  return static_cast<int>(report.passed() ? xs::ExitCode::kOk : xs::ExitCode::kRegression);
}

}  // namespace

int main(int argc, char** argv) {
  return xs::cli::run_main("xstage-gate", [&] {
    GateOptions options;
    CLI::App app{"Compare a candidate xstage result file with a baseline under per-metric tolerances.\n"
                 "Exit codes: 0 pass, 1 regression (a metric WORSE or MISSING), 2 bad input."};
    app.add_option("--baseline", options.baseline_path, "reference result file (xstage.result JSON)")
        ->required();
    app.add_option("--candidate", options.candidate_path, "result file under test")->required();
    app.add_option("--config", options.config_path, "gate config (xstage.gate JSON, see docs/gate.md)")
        ->required();
    app.add_option("--junit", options.junit_path, "also write JUnit XML here (one testcase per metric instance)");
    app.add_flag("--json", options.json_output, "print the comparison as JSON instead of a table");
    xs::cli::parse_or_throw(app, argc, argv);
    return run_gate(options);
  });
}
