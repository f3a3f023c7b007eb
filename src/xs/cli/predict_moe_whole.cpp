// xstage cli layer: `xstage-predict moe-whole` (see predict_moe_whole.hpp).
#include "xs/cli/predict_moe_whole.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "xs/build_info.hpp"
#include "xs/cli/common/input_dates.hpp"
#include "xs/cli/common/interference_input.hpp"
#include "xs/cli/common/options.hpp"
#include "xs/common/error.hpp"
#include "xs/fit/calibration_file.hpp"
#include "xs/model/platform_model.hpp"
#include "xs/moe/advisor/advisor_score_io.hpp"
#include "xs/moe/advisor/whole_kernel_score.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/fnv1a.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/output_set.hpp"
#include "xs/report/result_file.hpp"

namespace xs::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
constexpr const char* kUsage =
    "xstage-predict moe-whole --results R1.json [R2.json ...] --model CAL.json --interference LOADED.json "
    "[--gemm-rates RATES.json] --out SCORE.json [--md SCORE.md] [--no-reference]";

bool same_file(const std::string& a, const std::string& b) {
  if (fs::exists(a) && fs::exists(b) && fs::equivalent(a, b)) return true;
  return fs::weakly_canonical(fs::absolute(a)) == fs::weakly_canonical(fs::absolute(b));
}

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

// R with its ci95 and Q(K_SM) from the calibration's `model` section (Q only where the fitter identified it).
moe::PathInputs path_of(const json& doc, int num_sms, const std::string& file) {
  const json& m = doc.at("model");
  if (!m.contains("R_Bps") || !m["R_Bps"].is_number())
    throw input_error("--model", file + ": model.R_Bps missing or not a number");
  // The replay drains at R and brackets with its ci95: a value the fitter did not pin down (a lower bound, an
  // unconstrained R) is no point to replay, and is refused by name rather than scored as one.
  const std::string r_bound = m.value("R_bound", std::string("fit"));
  if (r_bound != "fit")
    throw input_error("--model", fmt::format("{}: model.R_bound is \"{}\": R is not a fitted value, and moe-whole "
                                             "replays the drain at R; use a calibration whose R is fitted "
                                             "(R_bound \"fit\", R_constrained true)", file, r_bound));
  if (!m.value("R_constrained", true))
    throw input_error("--model", fmt::format("{}: model.R_constrained is false{}: the fitter did not pin R down, and "
                                             "moe-whole replays the drain at R; use a calibration whose R is "
                                             "constrained", file,
                                             m.contains("R_caveat") && m["R_caveat"].is_string()
                                                 ? " (" + m["R_caveat"].get<std::string>() + ")" : std::string()));
  moe::PathInputs p;
  p.drain_rate_bps = p.drain_rate_lo_bps = p.drain_rate_hi_bps = m["R_Bps"].get<double>();
  if (m.contains("R_ci95") && m["R_ci95"].is_array() && m["R_ci95"].size() == 2 && m["R_ci95"][0].is_number() &&
      m["R_ci95"][1].is_number()) {
    p.drain_rate_lo_bps = m["R_ci95"][0].get<double>();
    p.drain_rate_hi_bps = m["R_ci95"][1].get<double>();
  }
  p.capacity_bytes = std::numeric_limits<double>::infinity();
  p.capacity_text = fmt::format("Q(K={}) not in the calibration", num_sms);
  if (m.contains("Q") && m["Q"].is_array())
    for (const json& row : m["Q"]) {
      if (!row.is_object() || !row.contains("K") || !row["K"].is_number() || row["K"].get<int>() != num_sms) continue;
      const std::string bound = row.value("bound", std::string("fit"));
      const bool constrained = row.value("constrained", false);
      if (bound == "fit" && constrained && row.contains("bytes") && row["bytes"].is_number()) {
        p.capacity_bytes = p.capacity_lo_bytes = p.capacity_hi_bytes = row["bytes"].get<double>();
        p.capacity_is_point = true;
        if (row.contains("ci95") && row["ci95"].is_array() && row["ci95"].size() == 2 && row["ci95"][0].is_number() &&
            row["ci95"][1].is_number()) {
          p.capacity_lo_bytes = row["ci95"][0].get<double>();
          p.capacity_hi_bytes = row["ci95"][1].get<double>();
        }
        p.capacity_text = fmt::format("Q(K={}) = {:.0f} B", num_sms, p.capacity_bytes);
      } else {
        p.capacity_text = fmt::format("Q(K={}) {} (not a point)", num_sms, bound);
      }
    }
  if (!p.capacity_is_point) {
    // The bracket every measured K gives (Q nondecreasing in K: floors below, identified Q rows around).
    const model::CapacityBracket b = model::PlatformModel::from_json(m).capacity_bracket(num_sms);
    p.capacity_lo_bytes = b.consistent ? b.lower_bytes : 0.0;
    p.capacity_hi_bytes = b.consistent ? b.upper_bytes : std::numeric_limits<double>::infinity();
    p.capacity_text += fmt::format(", bracketed by the calibration's floors, drain branch and identified rows in "
                                   "[{:.0f}, {}] B{}", p.capacity_lo_bytes,
                                   std::isfinite(p.capacity_hi_bytes) ? fmt::format("{:.0f}", p.capacity_hi_bytes)
                                                                      : std::string("inf"),
                                   b.consistent ? "" : " (the evidence contradicts itself: the whole range)");
  }
  return p;
}

std::string markdown_path_of(const PredictMoeWholeOptions& o) {
  if (!o.markdown_path.empty()) return o.markdown_path;
  const fs::path p(o.out_path);
  return (p.parent_path() / p.stem()).string() + ".md";
}

}  // namespace

void add_predict_moe_whole(CLI::App& app, PredictMoeWholeOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "moe-whole", "MegaMoE whole-kernel times predicted with the interference term, scored on measured files.");
  cmd->footer(
      "Per configuration and measured schedule option: the time model (schedule replay with per-tile times,\n"
      "dependency waits, the drain through R and Q, and the interference slowdown) predicts the host time by\n"
      "transfer (the local control's measured time + the modelled cost of the remote path) and ab initio (a\n"
      "per-shape GEMM rate alone; --gemm-rates, else the recorded spec-sheet F, labelled). Scored beside the\n"
      "constant transfer (host = local x the other shapes' median ratio) and a leave-one-shape-out term fitted on\n"
      "the application data (reference only). Writes SCORE.json and SCORE.md (never an input).\n"
      "Exit codes: 0 ok, 2 bad usage or input (nothing written).");
  cmd->add_option("--results", o.results, "megamoe result files of xstage-bench (read only)")
      ->type_name("R.json ...")
      ->expected(1, -1);
  cmd->add_option("--model", o.model_path, "Burst-Gap calibration of the judged target (R, Q)")->type_name("CAL.json");
  cmd->add_option("--interference", o.interference_path,
                  "calibration with the remote_store.loaded block (the interference term)")
      ->type_name("LOADED.json");
  cmd->add_option("--gemm-rates", o.gemm_rates_path, "per-shape GEMM rates (xstage.gemm_rates)")->type_name("RATES.json");
  cmd->add_option("--out", o.out_path, "the score summary to write (an existing file is replaced; never an input)")->type_name("SCORE.json");
  cmd->add_option("--md", o.markdown_path, "the Markdown table (default: --out with .md; an existing file is replaced)")->type_name("SCORE.md");
  cmd->add_flag("--no-reference", o.no_reference, "skip the leave-one-shape-out application-data fit");
}

void run_predict_moe_whole(const PredictMoeWholeOptions& o) {
  if (o.results.empty()) throw_missing("--results", std::string("the megamoe result files to score: ") + kUsage);
  if (o.model_path.empty()) throw_missing("--model", std::string("the calibration to predict from: ") + kUsage);
  if (o.interference_path.empty())
    throw_missing("--interference", std::string("the calibration with the remote_store.loaded block: ") + kUsage);
  if (o.out_path.empty()) throw_missing("--out", std::string("the file to write the score to (an existing file is replaced, never an input): ") + kUsage);
  const std::string md_path = markdown_path_of(o);
  std::vector<std::string> inputs_named = o.results;
  inputs_named.push_back(o.model_path);
  inputs_named.push_back(o.interference_path);
  if (!o.gemm_rates_path.empty()) inputs_named.push_back(o.gemm_rates_path);
  for (const auto& [out, flag] : {std::pair{o.out_path, "--out"}, std::pair{md_path, "--md"}}) {
    for (const std::string& in : inputs_named)
      if (same_file(out, in))
        throw input_error(flag, fmt::format("'{}' is the input '{}'; inputs are never overwritten", out, in));
    report::check_output_path(out, flag);
  }
  if (same_file(o.out_path, md_path)) throw input_error("--md", "the Markdown table cannot be the JSON output");
  std::vector<report::NamedPath> results;  // every configuration counts once: no result file twice
  for (const std::string& in : o.results) results.push_back({in, "--results"});
  report::check_distinct_inputs(results);
  report::check_distinct_contents(results);  // a copy under another name is refused

  std::string model_text, interference_text;
  const json cal = read_named(o.model_path, "--model", &model_text);
  // The strict result-file reader every other --model goes through (schema, points, R identified): refused here
  // as there, with the file named.
  (void)fit::platform_model_from_result_text(model_text, o.model_path);
  if (!cal.is_object() || !cal.contains("model") || !cal["model"].is_object())
    throw input_error("--model", o.model_path + " has no `model` section; expected a calibration file of xstage-calibrate");
  const json loaded = read_named(o.interference_path, "--interference", &interference_text);
  const InterferenceInput term = interference_input_of(loaded, o.interference_path, report::fnv1a64(interference_text));
  const std::string target = cal.contains("config") && cal["config"].is_object()
                                 ? cal["config"].value("target", std::string("host"))
                                 : std::string("host");
  std::vector<std::pair<std::string, json>> docs;
  for (const std::string& path : o.results) docs.emplace_back(path, read_named(path, "--results"));
  const moe::ScoreInputs inputs = moe::read_score_inputs(docs, target);
  if (inputs.configs.empty())
    throw input_error("--results", fmt::format("no megamoe point on target '{}' that ran and verified", target));

  moe::WholeKernelSettings settings;
  settings.term = term.source;
  settings.reference_fit = !o.no_reference;
  if (!o.gemm_rates_path.empty())
    settings.gemm_rates = moe::read_gemm_rates(read_named(o.gemm_rates_path, "--gemm-rates"), o.gemm_rates_path);
  // One K_SM per run of the predictions: the path per configuration's K_SM.
  moe::WholeKernelResult result;
  std::map<int, moe::ScoreInputs> by_k;
  for (const moe::ScoreConfigInputs& c : inputs.configs) by_k[c.config.num_sms].configs.push_back(c);
  json paths = json::object();
  for (auto& [k, sub] : by_k) {
    settings.path = path_of(cal, k, o.model_path);
    paths[fmt::format("K_SM={}", k)] = settings.path.capacity_text;
    moe::WholeKernelResult part = moe::predict_whole_kernel(sub, settings);
    result.configs.insert(result.configs.end(), part.configs.begin(), part.configs.end());
    result.reference_fits.insert(result.reference_fits.end(), part.reference_fits.begin(), part.reference_fits.end());
    result.term_label = part.term_label;
    result.term_status = part.term_status;
  }
  for (const std::string& s : inputs.skipped) result.not_scored.push_back(s);

  std::vector<json> judged;
  for (const auto& [path, doc] : docs) judged.push_back(doc);
  std::vector<std::pair<std::string, json>> dated = {{"model", cal}, {"interference", loaded}};
  if (!o.gemm_rates_path.empty()) dated.emplace_back("gemm_rates", read_named(o.gemm_rates_path, "--gemm-rates"));
  const json dates = input_dates(judged, dated);
  if (const std::string note = input_dates_note(dates); !note.empty())
    std::fprintf(stderr, "xstage-predict moe-whole: note: %s\n", note.c_str());

  std::string command;
  for (const std::string& a : o.argv) command += (command.empty() ? "" : " ") + a;
  const json provenance = {
      {"tool", "xstage-predict moe-whole"}, {"tool_version", build_info::kVersion},
      {"git_sha", build_info::kGitSha},     {"git_dirty", build_info::kGitDirty},
      {"argv", o.argv},                     {"command", command},
      {"date_utc", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)))},
      {"model_file", o.model_path},         {"model_fnv1a64", report::fnv1a64(model_text)},
      {"model_target", target},             {"interference", term.provenance},
      {"capacity", paths},                  {"results", o.results},
      {"out", o.out_path},                  {"dates", dates}};
  const json summary = moe::whole_kernel_json(result, settings, provenance);
  const std::string md = moe::whole_kernel_markdown(summary);
  // Both files or neither: an --md that cannot be written leaves no --out (report/output_set.hpp).
  report::write_outputs_atomic({{o.out_path, "--out", report::dump_strict(summary, 1) + "\n"}, {md_path, "--md", md}});
  std::printf("%s", md.c_str());
}

}  // namespace xs::cli
