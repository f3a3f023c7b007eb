// xstage cli layer: `xstage-predict fa-whole` (see predict_fa_whole.hpp).
#include "xs/cli/predict_fa_whole.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "xs/attention/point/fa_app_point.hpp"
#include "xs/attention/io/fa_result_reader.hpp"
#include "xs/attention/model/fa_calibration.hpp"
#include "xs/attention/judge/fa_interference_score.hpp"
#include "xs/cli/common/input_dates.hpp"
#include "xs/cli/common/interference_input.hpp"
#include "xs/common/error.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/fnv1a.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/result_file.hpp"
#include "xs/build_info.hpp"

namespace xs::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
namespace judge = attention::judge;
constexpr const char* kUsage =
    "xstage-predict fa-whole RESULT.json... --model CAL.json --interference LOADED.json --out SCORE.json [--no-reference]";

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec)) return true;
  return fs::weakly_canonical(fs::absolute(a)) == fs::weakly_canonical(fs::absolute(b));
}

}  // namespace

void add_predict_fa_whole(CLI::App& app, PredictFaWholeOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "fa-whole", "FA-A2A E_res(M) predicted with the interference term, scored per M beside constant predictors.");
  cmd->footer(std::string("Usage: ") + kUsage + "\n"
      "Each fa_a2a point with status ok on the calibration's target: a wave replay of the fused kernel from the\n"
      "FA-only variant (T_FA, sigma_FA), R and Q of --model and the interference term of --interference, scored\n"
      "at the sender-side and completion boundaries (bootstrap interval of the measured median) beside E_res = 0,\n"
      "unhidden and the interference-free frozen rule; issue 28's bar per M. Exit codes: 0 ok, 2 bad usage or\n"
      "input (nothing written).");
  cmd->add_option("results", o.result_paths, "fa_a2a result files (read only)")->type_name("RESULT.json...");
  cmd->add_option("--model", o.model_path, "Burst-Gap calibration of the target (R, Q)")->type_name("CAL.json");
  cmd->add_option("--interference", o.interference_path, "calibration with the remote_store.loaded block")
      ->type_name("LOADED.json");
  cmd->add_option("--out", o.out_path, "the summary to write (an existing file is replaced; never an input)")->type_name("SCORE.json");
  cmd->add_flag("--no-reference", o.no_reference, "skip the leave-one-M-out application-data fit");
}

void run_predict_fa_whole(const PredictFaWholeOptions& o) {
  if (o.result_paths.empty()) throw input_error("RESULT.json", std::string("no result file given; usage: ") + kUsage);
  if (o.model_path.empty()) throw input_error("--model", std::string("no calibration given; usage: ") + kUsage);
  if (o.interference_path.empty())
    throw input_error("--interference", std::string("no remote_store.loaded calibration given; usage: ") + kUsage);
  if (o.out_path.empty()) throw input_error("--out", std::string("no output file given; usage: ") + kUsage);
  std::vector<std::string> inputs = o.result_paths;
  inputs.push_back(o.model_path);
  inputs.push_back(o.interference_path);
  for (const auto& in : inputs)
    if (same_file(o.out_path, in)) throw input_error("--out", fmt::format("'{}' is an input; give another path", in));
  report::check_output_path(o.out_path, "--out");
  std::vector<report::NamedPath> results;  // every point counts once: no result file twice
  for (const auto& in : o.result_paths) results.push_back({in, "RESULT.json"});
  report::check_distinct_inputs(results);
  report::check_distinct_contents(results);  // a copy under another name is refused
  const std::string model_text = report::read_text_file(o.model_path);
  const attention::model::FaCalibration cal = attention::model::load_fa_calibration(model_text, o.model_path);
  const std::string loaded_text = report::read_text_file(o.interference_path);
  const InterferenceInput term = interference_input_of(report::parse_json_text(loaded_text, o.interference_path),
                                                       o.interference_path, report::fnv1a64(loaded_text));
  std::vector<judge::FaScoredPoint> points;
  std::vector<json> judged;
  for (const auto& path : o.result_paths) {
    const std::string text = report::read_text_file(path);
    (void)report::parse_result_text(text, path);  // the strict reader first
    const json doc = report::parse_json_text(text, path);
    judged.push_back({{"meta", doc.value("meta", json::object())}});
    for (std::size_t i = 0; i < doc["points"].size(); ++i) {
      const json& point = doc["points"][i];
      if (point.value("suite", "") != attention::kFaSuiteId || point.value("status", "") != "ok") continue;
      try {
        judge::FaScoredPoint p;
        p.file = path;
        p.index = i;
        p.spec = attention::fa_point_spec_from_json(point);
        if (!cal.target.empty() && cal.target != p.spec.target) continue;
        p.result = attention::fa_point_result_from_json(point);
        points.push_back(std::move(p));
      } catch (const Error& e) {
        throw report::nest_error(e, path + ": " + report::index_path("points", i));
      }
    }
  }
  if (points.empty())
    throw input_error("RESULT.json", fmt::format("no fa_a2a point with status ok on target '{}'", cal.target));
  json out = judge::score_fa_with_interference(points, cal, term.source, !o.no_reference);
  const json dates = input_dates(judged, {{"model", report::parse_json_text(model_text, o.model_path)},
                                          {"interference", report::parse_json_text(loaded_text, o.interference_path)}});
  if (const std::string note = input_dates_note(dates); !note.empty())
    fmt::print(stderr, "xstage-predict fa-whole: note: {}\n", note);
  out["meta"] = {{"tool", "xstage-predict fa-whole"}, {"git_sha", build_info::kGitSha},
                 {"git_dirty", build_info::kGitDirty}, {"argv", o.argv},
                 {"interference", term.provenance}, {"results", o.result_paths}, {"dates", dates},
                 {"date_utc", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)))}};
  report::prepare_output_path(o.out_path, "--out");
  report::write_json_atomic(o.out_path, out, 1);
  const json& t = out["tally"];
  for (const char* k : {"model_sender_side", "model_completion", "zero_sender_side", "zero_completion",
                        "unhidden_sender_side", "unhidden_completion", "frozen_aligned_v2_sender_side"})
    fmt::print("  {:<32} {:>3} agree {:>3} disagree {:>3} not decided\n", k, t[k]["agrees"].get<int>(),
               t[k]["disagrees"].get<int>(), t[k]["not_decided"].get<int>());
  fmt::print("  bars (per M in [{}, {}], both boundaries): {} met, {} missed; trend (completion) {}\n",
             judge::kFaBarMinM, judge::kFaBarMaxM, out["bars"]["met"].get<int>(), out["bars"]["missed"].get<int>(),
             out["bars"]["trend_completion"]["right"].get<bool>() ? "right" : "not right");
  fmt::print("wrote {}\n", o.out_path);
}

}  // namespace xs::cli
