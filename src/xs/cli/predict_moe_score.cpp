// xstage cli layer: `xstage-predict moe-score` (see predict_moe_score.hpp). Reads the result files and the
// calibration once, refuses outputs that are inputs, and writes the score JSON and its Markdown table.
#include "xs/cli/predict_moe_score.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "xs/build_info.hpp"
#include "xs/cli/common/input_dates.hpp"
#include "xs/cli/common/options.hpp"
#include "xs/common/error.hpp"
#include "xs/fit/calibration_file.hpp"
#include "xs/moe/advisor/advisor_score_io.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/fnv1a.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/output_set.hpp"
#include "xs/report/result_file.hpp"

namespace xs::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
constexpr const char* kUsage = "xstage-predict moe-score --results R1.json [R2.json ...] --model CAL.json --out "
                               "SCORE.json [--md SCORE.md]";

json read_named(const std::string& path, const char* flag, std::string* text_out = nullptr) {
  std::string text;
  try {
    text = report::read_text_file(path);
  } catch (const Error& e) {
    throw input_error(flag, fmt::format("{}; usage: {}", e.what(), kUsage));
  }
  if (text_out) *text_out = text;
  return report::parse_json_text(text, path);
}

std::string markdown_path_of(const PredictMoeScoreOptions& o) {
  if (!o.markdown_path.empty()) return o.markdown_path;
  const fs::path p(o.out_path);
  return (p.parent_path() / p.stem()).string() + ".md";
}

}  // namespace

void add_predict_moe_score(CLI::App& app, PredictMoeScoreOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "moe-score", "MegaMoE advisor scored beside the constant policies on measured megamoe result files.");
  cmd->footer(
      "Per configuration (host points that ran and verified), the advisor's frozen prediction - replayed\n"
      "whole-kernel times of interleaved at every candidate D and expert-wave at every experts_per_wave, the\n"
      "choice, the expert-wave/interleaved speedup with an interval - is computed from the calibration, the\n"
      "configuration and the local control's tile times (or the recorded GEMM rate), never from the judged\n"
      "launches; then the advisor and three constant policies (always interleaved at eq. 16's D, at the best\n"
      "measured D, always expert-wave) are scored: choice agrees/disagrees/not decided, regret (mean, worst),\n"
      "Spearman and |error| of the speedup. Writes SCORE.json and SCORE.md (never an input).\n"
      "Exit codes: 0 ok, 2 bad usage or input (nothing written).");
  cmd->add_option("--results", o.results, "megamoe result files of xstage-bench (read only)")
      ->type_name("R.json ...")
      ->expected(1, -1);
  cmd->add_option("--model", o.model_path, "calibration result file (xstage-calibrate, with a `model` section)")
      ->type_name("CAL.json");
  cmd->add_option("--out", o.out_path, "the score summary to write (an existing file is replaced; never an input)")->type_name("SCORE.json");
  cmd->add_option("--md", o.markdown_path, "the Markdown table (default: --out with .md; an existing file is replaced)")->type_name("SCORE.md");
}

void run_predict_moe_score(const PredictMoeScoreOptions& o) {
  if (o.results.empty()) throw_missing("--results", std::string("the megamoe result files to score: ") + kUsage);
  if (o.model_path.empty()) throw_missing("--model", std::string("the calibration to predict from: ") + kUsage);
  if (o.out_path.empty()) throw_missing("--out", std::string("the file to write the score to (an existing file is replaced, never an input): ") + kUsage);
  const std::string md_path = markdown_path_of(o);
  std::vector<report::NamedPath> input_paths;
  for (const std::string& in : o.results) input_paths.push_back({in, "the input result file"});
  input_paths.push_back({o.model_path, "--model"});
  report::check_distinct_paths({{o.out_path, "--out"}, {md_path, "--md"}}, input_paths);
  std::vector<report::NamedPath> results;  // every configuration counts once: no result file twice
  for (const std::string& in : o.results) results.push_back({in, "--results"});
  report::check_distinct_inputs(results);
  report::check_distinct_contents(results);  // a copy under another name is refused
  for (const auto& [out, flag] : {std::pair{o.out_path, "--out"}, std::pair{md_path, "--md"}})
    if (!out.empty()) report::check_output_path(out, flag);

  std::string model_text;
  moe::ScoreCalibration cal;
  cal.doc = read_named(o.model_path, "--model", &model_text);
  // The strict result-file reader every other --model goes through (schema, points, R identified): refused here
  // as there, with the file named.
  (void)fit::platform_model_from_result_text(model_text, o.model_path);
  cal.file = o.model_path;
  cal.fnv1a64 = report::fnv1a64(model_text);
  if (!cal.doc.is_object() || !cal.doc.contains("model"))
    throw input_error("--model", o.model_path + " has no `model` section; expected a calibration file of xstage-calibrate");
  const std::string target = cal.doc.contains("config") && cal.doc["config"].is_object()
                                 ? cal.doc["config"].value("target", std::string("host"))
                                 : std::string("host");
  std::vector<std::pair<std::string, json>> docs;
  for (const std::string& path : o.results) docs.emplace_back(path, read_named(path, "--results"));
  const moe::ScoreInputs inputs = moe::read_score_inputs(docs, target);
  if (inputs.configs.empty())
    throw input_error("--results", fmt::format("no megamoe point on target '{}' that ran and verified in the given "
                                               "files; expected xstage-bench megamoe result files", target));
  const moe::ScoreResult result = moe::score_advisor(inputs, cal);
  std::vector<json> judged;
  for (const auto& [path, doc] : docs) judged.push_back(doc);
  const json dates = input_dates(judged, {{"model", cal.doc}});
  if (const std::string note = input_dates_note(dates); !note.empty())
    std::fprintf(stderr, "xstage-predict moe-score: note: %s\n", note.c_str());

  std::string command;
  for (const std::string& a : o.argv) command += (command.empty() ? "" : " ") + a;
  const json provenance = {
      {"tool", "xstage-predict moe-score"}, {"tool_version", build_info::kVersion},
      {"git_sha", build_info::kGitSha},     {"git_dirty", build_info::kGitDirty},
      {"argv", o.argv},                     {"command", command},
      {"date_utc", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)))},
      {"model_file", o.model_path},         {"model_fnv1a64", cal.fnv1a64},
      {"model_target", target},             {"results", o.results},
      {"out", o.out_path},                  {"dates", dates}};
  // Both files or neither: an --md that cannot be written leaves no --out (report/output_set.hpp).
  report::write_outputs_atomic(
      {{o.out_path, "--out", report::dump_strict(moe::score_json(inputs, result, provenance), 1) + "\n"},
       {md_path, "--md", moe::score_markdown(result, provenance)}});
  std::printf("%s", moe::score_markdown(result, provenance).c_str());
}

}  // namespace xs::cli
