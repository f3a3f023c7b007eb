// xstage cli layer: `xstage-predict fa-score` (see predict_fa_score.hpp).
#include "xs/cli/predict_fa_score.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "xs/attention/point/fa_app_point.hpp"
#include "xs/attention/io/fa_result_reader.hpp"
#include "xs/attention/judge/fa_judgement.hpp"
#include "xs/attention/judge/fa_sensitivity.hpp"
#include "xs/common/error.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/fnv1a.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/measured_device.hpp"
#include "xs/report/result_file.hpp"
#include "xs/report/utc_instant.hpp"
#include "xs/build_info.hpp"

namespace xs::cli {
namespace {

using nlohmann::json;
namespace judge = attention::judge;
constexpr const char* kUsage = "xstage-predict fa-score RESULT.json... --model CAL.json [--model CAL2.json ...] --out SCORE.json";

double median_abs(std::vector<double> v) {
  if (v.empty()) return NAN;
  for (double& x : v) x = std::abs(x);
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
json number(double x) { return std::isfinite(x) ? json(x) : json(); }

// Every "calibration_fnv1a64" string anywhere in `j` (the frozen predictions' provenance inside a point).
void collect_calibration_hashes(const json& j, std::set<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (key == "calibration_fnv1a64" && value.is_string()) out.insert(value.get<std::string>());
      else collect_calibration_hashes(value, out);
    }
  } else if (j.is_array()) {
    for (const json& v : j) collect_calibration_hashes(v, out);
  }
}
// meta.<key> as text: "" where absent or null; anything but a string is bad input (exit 2), named.
std::string meta_text(const json& doc, const char* key, const std::string& path) {
  if (!doc.contains("meta") || !doc["meta"].is_object() || !doc["meta"].contains(key) || doc["meta"][key].is_null())
    return "";
  const json& v = doc["meta"][key];
  if (!v.is_string()) throw input_error(path, fmt::format("meta.{}: expected a string, found {}", key, v.type_name()));
  return v.get<std::string>();
}
// The name of the GPU the file was measured on (report::measured_device: bad input is exit 2, named).
std::string measured_device_name(const json& doc, const std::string& path) {
  return doc.contains("meta") ? report::measured_device(doc["meta"], path).name : "";
}

// fa-score judges FA-A2A files: a file with no fa_a2a point at all (a MegaMoE or calibration file given by mistake)
// is refused, not silently scored as zero rows.
void require_fa_points(const json& doc, const std::string& path) {
  std::string suites;
  bool has_fa = false;
  for (const json& point : doc["points"]) {
    // An application point names its suite at the top, a calibration point under spec (docs/result-schema.md).
    const auto suite_of = [](const json& o) {
      return o.is_object() && o.contains("suite") && o["suite"].is_string() ? o["suite"].get<std::string>() : "";
    };
    std::string suite = suite_of(point);
    if (suite.empty() && point.is_object() && point.contains("spec")) suite = suite_of(point["spec"]);
    has_fa = has_fa || suite == attention::kFaSuiteId;
    if (!suite.empty() && suites.find(suite) == std::string::npos) suites += (suites.empty() ? "" : ", ") + suite;
  }
  if (!has_fa)
    throw input_error(path, fmt::format("holds no {} point (its suites: {}): fa-score judges FA-A2A result files "
                                        "(xstage-bench fa_a2a); usage: {}", attention::kFaSuiteId,
                                        suites.empty() ? "none" : suites, kUsage));
}

// A copy re-judged by fa-result (extra.rejudged) holds the re-judging calibration's predictions in place of the run's
// own: none of its predictions is the frozen one (adversarial review of 2026-12-07: they counted as out of sample).
// Said on stderr; score the run's own file for that.
bool is_rejudged_copy(const json& doc, const std::string& path) {
  const bool rejudged = doc.contains("extra") && doc["extra"].is_object() && doc["extra"].contains("rejudged");
  if (rejudged)
    fmt::print(stderr, "xstage-predict fa-score: note: {} is a copy re-judged by fa-result (extra.rejudged): its "
               "predictions are not the run's frozen ones, so none of its rows counts as out of sample\n", path);
  return rejudged;
}

// One tally per predictor; for the model also its point errors, the directions of its misses and how wide its
// decided intervals are beside the measured residual (an interval wide enough agrees with anything: the
// sharpness is reported beside the agreements).
struct Group {
  judge::Tally model, zero, unhidden;
  std::vector<double> model_rel_errors, model_widths_over_t_fa;
  int under = 0, over = 0;
  json to_json() const {
    return {{"model", model.to_json()}, {"zero", zero.to_json()}, {"unhidden", unhidden.to_json()},
            {"model_disagrees_under", under}, {"model_disagrees_over", over},
            {"model_point_median_abs_relative_error", number(median_abs(model_rel_errors))},
            {"model_points_scored", model_rel_errors.size()},
            {"model_decided_interval_width_over_T_FA_median", number(median_abs(model_widths_over_t_fa))}};
  }
  void add(const judge::FaJudgement& j) {
    model.add(j.model);
    zero.add(j.zero);
    unhidden.add(j.unhidden);
    if (std::isfinite(j.model.relative_error)) model_rel_errors.push_back(j.model.relative_error);
    under += j.model.direction == "under";
    over += j.model.direction == "over";
    if (j.prediction.decided && j.inputs.compute_only.t_fa_s > 0)
      model_widths_over_t_fa.push_back((j.prediction.e_res.hi - j.prediction.e_res.lo) / j.inputs.compute_only.t_fa_s);
  }
};

// `paths` without the files whose content an earlier one holds: the same JSON values (parsed, then dumped with
// sorted keys), so that a copy re-serialized with other whitespace is caught as well as a byte copy; a file that is
// not JSON is compared by its bytes (the reader refuses it later). A copy would count its rows twice. Each one left
// out is said on stderr and listed in `left_out` as {file, same_content_as, what}.
std::vector<std::string> without_copies(const std::vector<std::string>& paths, const char* what, json& left_out) {
  std::vector<std::string> kept;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> by_hash;  // hash -> (path, content)
  for (const std::string& path : paths) {
    std::string content = report::read_text_file(path);
    const json parsed = json::parse(content, nullptr, false);
    if (!parsed.is_discarded()) content = parsed.dump();
    auto& same_hash = by_hash[report::fnv1a64(content)];
    const auto copy = std::find_if(same_hash.begin(), same_hash.end(), [&](const auto& p) { return p.second == content; });
    if (copy != same_hash.end()) {
      fmt::print(stderr, "xstage-predict fa-score: note: {} {} holds the same content (the same JSON values) as {}: a "
                 "copy, scored once\n", what, path, copy->first);
      left_out.push_back({{"file", path}, {"same_content_as", copy->first}, {"what", what}});
      continue;
    }
    same_hash.emplace_back(path, std::move(content));
    kept.push_back(path);
  }
  return kept;
}

// The paths given: none missing, --out naming no input, no input given twice (or by another path): every row counts
// once.
void check_fa_score_paths(const PredictFaScoreOptions& o) {
  if (o.result_paths.empty()) throw input_error("RESULT.json", std::string("no result file given; usage: ") + kUsage);
  if (o.model_paths.empty()) throw input_error("--model", std::string("no calibration given; usage: ") + kUsage);
  if (o.out_path.empty()) throw input_error("--out", std::string("no output file given; usage: ") + kUsage);
  std::vector<report::NamedPath> inputs;
  for (const auto& in : o.result_paths) inputs.push_back({in, "the input RESULT.json"});
  for (const auto& in : o.model_paths) inputs.push_back({in, "--model"});
  report::check_distinct_paths({{o.out_path, "--out"}}, inputs);
  // Every row counts once: the same result file or calibration twice (or by another path) would double it.
  std::vector<report::NamedPath> results, models;
  for (const auto& in : o.result_paths) results.push_back({in, "RESULT.json"});
  for (const auto& in : o.model_paths) models.push_back({in, "--model"});
  report::check_distinct_inputs(results);
  report::check_distinct_inputs(models);
  report::check_output_path(o.out_path, "--out");
}

// The calibrations to judge with, each beside its parsed document (for the mutation sensitivity).
struct LoadedCalibrations {
  std::vector<attention::model::FaCalibration> calibrations;
  std::vector<std::pair<std::string, json>> docs;
};
LoadedCalibrations load_calibrations(const std::vector<std::string>& model_paths) {
  LoadedCalibrations loaded;
  for (const auto& path : model_paths) {
    const std::string text = report::read_text_file(path);
    loaded.calibrations.push_back(attention::model::load_fa_calibration(text, path));
    loaded.docs.emplace_back(path, report::parse_json_text(text, path));
  }
  return loaded;
}

// Everything scored so far: the rows, the files and which rules saw them, the tallies, and the counts of rows that
// are not predictions in the frozen sense.
struct ScoreState {
  json rows = json::array(), files = json::array();
  json rules = judge::fa_rules_json();
  int num_postdating = 0;  // rows judged with a calibration measured after their data
  int num_unknown_order = 0;  // rows where either date is missing or malformed
  int num_other_device = 0;   // rows whose calibration names another GPU than the data
  int num_unknown_device = 0; // rows where either side names no GPU
  int num_refit_not_frozen = 0;  // rows judged with a refitted calibration other than the run's own
  int num_out_of_sample_not_frozen = 0;  // rows of post-rule data judged with another calibration than the run's
  std::set<std::string> warned_devices;
  Group overall, overall_out_of_sample, overall_predating;
  std::map<std::string, Group> by_calibration;
  std::vector<judge::FaSensitivityPoint> all_points;
  ScoreState() {
    for (json& rule : rules) rule["data_measured_before_written"] = rule["data_measured_after_written"] = json::array();
  }
};

// One result file being judged: its path, when and on which GPU it was measured, whether it is in-sample for the
// current rule, and whether it is a re-judged copy.
struct ResultFile {
  std::string path, measured_utc, data_device;
  bool in_sample = true;
  bool rejudged_copy = false;
};

// Dates the result file against the current rule and every rule so far (recorded in `s.files` and `s.rules`), refuses
// a file with no fa_a2a point, and reads its GPU.
ResultFile record_result_file(const std::string& path, const json& doc, ScoreState& s) {
  ResultFile file;
  file.path = path;
  file.measured_utc = meta_text(doc, "date_utc", path);
  // A rule scored on data measured before it was written is in-sample for those data.
  // Instants, not strings (report/utc_instant.hpp): a missing or malformed date is unknown and counts as
  // in-sample (the conservative side); an offset is honoured.
  const double now_s = static_cast<double>(std::time(nullptr));
  const bool date_known = report::parse_record_instant(file.measured_utc, now_s).has_value();
  file.in_sample = !date_known || report::compare_instants(file.measured_utc, judge::kFaRuleWrittenUtc) <= 0;
  s.files.push_back({{"file", path}, {"measured_utc", file.measured_utc}, {"measured_utc_valid", date_known},
                     {"in_sample_for_the_rule", file.in_sample}});
  for (json& rule : s.rules) {  // which data each rule saw before it was written (an unknown date: before)
    const bool before =
        !date_known || report::compare_instants(file.measured_utc, rule["written_utc"].get<std::string>()) <= 0;
    rule[before ? "data_measured_before_written" : "data_measured_after_written"].push_back(path);
  }
  require_fa_points(doc, path);
  file.data_device = measured_device_name(doc, path);
  file.rejudged_copy = is_rejudged_copy(doc, path);
  return file;
}

// One fa_a2a point of a result file, parsed, with the content hashes of the calibrations the run froze it with.
struct PointToJudge {
  const ResultFile& file;
  std::size_t point_idx;
  const attention::FaA2aPointSpec& spec;
  const attention::FaA2aPointResult& result;
  const std::set<std::string>& frozen_hashes;
};

// How one (point, calibration) row stands as a prediction: the run's own calibration or not, a refit or not, its
// GPU against the data's, and whether it was measured before the data (null: unknown).
struct RowStanding {
  bool frozen = false, refit = false, device_unknown = false, other_device = false;
  json predates;
};

// The row written to SCORE.json for one judged (point, calibration) pair.
json row_json(const PointToJudge& p, const attention::model::FaCalibration& cal, const judge::FaJudgement& j,
              const RowStanding& r) {
  return {{"file", p.file.path}, {"point", p.point_idx}, {"calibration", cal.path}, {"M", p.spec.seq_len},
          {"calibration_device", cal.device}, {"data_device", p.file.data_device},
          {"calibration_from_another_device", r.device_unknown ? json() : json(r.other_device)},
          {"calibration_measured_utc", cal.date_utc}, {"calibration_predates_data", r.predates},
          {"calibration_is_the_runs_own", r.frozen}, {"calibration_is_a_refit", r.refit},
          {"heads", p.spec.num_heads}, {"target", p.spec.target}, {"in_sample", p.file.in_sample},
          {"E_res_pred_s", attention::model::to_json(j.prediction)["E_res_s"]},
          {"E_res_pred_point_s", number(j.prediction.e_res_point_s)},
          {"decided", j.prediction.decided},
          {"E_res_measured_s", j.measured.measured ? json(j.measured.median_s) : json()},
          {"E_res_measured_ci95_s", judge::to_json(j.measured)["median_ci95_s"]},
          {"model", judge::to_json(j.model)}, {"zero", j.zero.result}, {"unhidden", j.unhidden.result}};
}

// Judges one point with one calibration: tallies it overall, per calibration, and in the predating and
// out-of-sample tallies where it qualifies, counts why it does not, and appends its row.
void judge_row(const PointToJudge& p, const attention::model::FaCalibration& cal, const json& cal_doc, ScoreState& s) {
  const judge::FaJudgement j = judge::judge_point(p.spec, p.result, cal);
  s.overall.add(j);
  RowStanding r;
  // Out of sample means: data measured after the rule, judged with the calibration the run was frozen
  // with (the same bytes). Any other calibration could have been refitted or edited after the data.
  r.frozen = p.frozen_hashes.count(cal.fnv1a64) > 0;
  const json& cal_meta = cal_doc.contains("meta") ? cal_doc["meta"] : json();
  r.refit = cal_meta.is_object() && cal_meta.contains("refit");
  s.num_out_of_sample_not_frozen += !p.file.in_sample && !r.frozen;
  s.by_calibration[cal.path].add(j);
  // A calibration of another GPU model predicts nothing about this one: allowed (a cross-check), said.
  // Names compared trimmed and case-blind; a name missing on either side is unknown, and such a row is
  // not a prediction either (kept out of the "predates" tally like an unknown date).
  const std::string cal_dev = report::device_key(cal.device), data_dev = report::device_key(p.file.data_device);
  r.device_unknown = cal_dev.empty() || data_dev.empty();
  r.other_device = !r.device_unknown && cal_dev != data_dev;
  s.num_unknown_device += r.device_unknown;
  if (r.other_device && s.warned_devices.insert(p.file.path + "|" + cal.path).second)
    fmt::print(stderr, "xstage-predict fa-score: warning: {} was calibrated on {}, {} measured on {}: those "
               "rows cross-judge another device\n", cal.path, cal.device, p.file.path, p.file.data_device);
  s.num_other_device += r.other_device;
  // A frozen prediction needs a calibration measured before the judged launches; cross-judging with a
  // later one is allowed but said per row (null: either date missing or not a valid ISO 8601 instant).
  const std::optional<int> order =
      report::compare_record_instants(cal.date_utc, p.file.measured_utc, static_cast<double>(std::time(nullptr)));
  r.predates = order ? json(*order < 0) : json();
  s.num_postdating += r.predates == json(false);
  // an unknown order is not a prediction, nor is a calibration of another device
  // A refit keeps its measurement's date but was fitted later: it predates nothing unless it is the run's own.
  s.num_refit_not_frozen += r.refit && !r.frozen;
  if (r.predates == json(true) && !r.other_device && !r.device_unknown && (r.frozen || !r.refit))
    s.overall_predating.add(j);
  // Out of sample: after the rule, with the run's own frozen calibration, measured before the data on its GPU.
  if (!p.file.in_sample && r.frozen && r.predates == json(true) && !r.other_device && !r.device_unknown)
    s.overall_out_of_sample.add(j);
  s.num_unknown_order += r.predates.is_null();
  s.rows.push_back(row_json(p, cal, j, r));
}

// Judges one ok fa_a2a point with every calibration of its target (or of any target).
void judge_fa_point(const ResultFile& file, const json& point, std::size_t point_idx, const LoadedCalibrations& cals,
                    ScoreState& s) {
  const attention::FaA2aPointSpec spec = attention::fa_point_spec_from_json(point);
  const attention::FaA2aPointResult result = attention::fa_point_result_from_json(point);
  s.all_points.push_back({spec, result});
  // The calibrations whose frozen predictions the run itself stored beside this point (their content hash).
  std::set<std::string> frozen_hashes;
  if (!file.rejudged_copy) collect_calibration_hashes(point, frozen_hashes);
  const PointToJudge p{file, point_idx, spec, result, frozen_hashes};
  for (std::size_t c = 0; c < cals.calibrations.size(); ++c) {
    const auto& cal = cals.calibrations[c];
    if (!cal.target.empty() && cal.target != spec.target) continue;
    judge_row(p, cal, cals.docs[c].second, s);
  }
}

// Reads one result file (the strict reader first) and judges each of its ok fa_a2a points; an error in a point is
// named by the file and the point's index.
void score_result_file(const std::string& path, const LoadedCalibrations& cals, ScoreState& s) {
  const std::string text = report::read_text_file(path);
  (void)report::parse_result_text(text, path);  // the strict reader first
  const json doc = report::parse_json_text(text, path);
  const ResultFile file = record_result_file(path, doc, s);
  for (std::size_t i = 0; i < doc["points"].size(); ++i) {
    const json& point = doc["points"][i];
    if (point.value("suite", "") != attention::kFaSuiteId || point.value("status", "") != "ok") continue;
    try {
      judge_fa_point(file, point, i, cals, s);
    } catch (const Error& e) {
      throw report::nest_error(e, path + ": " + report::index_path("points", i));
    }
  }
}

// The SCORE.json document: the rule, the predictors, the tallies with their notes, the files, the counts and rows.
json score_json(const PredictFaScoreOptions& o, const ScoreState& s, const LoadedCalibrations& cals,
                const json& copies_left_out) {
  json per_cal = json::object();
  for (const auto& [cal, g] : s.by_calibration) per_cal[cal] = g.to_json();
  return {
      {"schema", "xstage.fa_score/1"},
      {"rule", {{"id", judge::kFaRuleId}, {"written_utc", judge::kFaRuleWrittenUtc},
                {"what", "frozen aligned-case E_res from the calibration, the configuration and the FA-only variant; "
                         "scored on wall time against the bootstrap interval of the measured median: " +
                             std::string(judge::kFaRule.what)}}},
      {"predictors", {{"model", "the frozen prediction"}, {"zero", "E_res = 0 (the stores always hide)"},
                      {"unhidden", "E_res = remote bytes / R (nothing hides)"}}},
      {"rules", s.rules},
      {"tally", s.overall.to_json()}, {"tally_out_of_sample", s.overall_out_of_sample.to_json()},
      {"tally_calibration_predates_data", s.overall_predating.to_json()},
      {"sensitivity", judge::fa_score_sensitivity(s.all_points, cals.docs)},
      {"tally_calibration_predates_data_note",
       "rows whose calibration was measured before their data (both dates valid ISO 8601 instants; a row with either "
       "date missing or malformed is left out and counted in rows_whose_dates_are_unknown, and so is a row whose "
       "calibration names another GPU than its data or where either names none, or whose calibration is a refit "
       "(meta.refit: fitted later than its measurement date says) other than the one the run stored its frozen "
       "predictions with): the only rows that are predictions in the frozen sense; a calibration measured later "
       "cross-judges the data, it does not predict it"},
      {"tally_out_of_sample_note",
       fmt::format("rows of files measured after the current rule ({}, written {}) was written, judged with the "
                   "calibration the run stored its frozen predictions with (same content hash, calibration_fnv1a64); "
                   "rows of such files judged with any other calibration are counted in "
                   "rows_after_the_rule_judged_with_another_calibration_than_the_runs, every other row is in-sample "
                   "for the rule. `rules` lists, for every rule, the files measured before and after it",
                   judge::kFaRuleId, judge::kFaRuleWrittenUtc)},
      {"by_calibration", per_cal}, {"files", s.files}, {"copies_left_out", copies_left_out},
      {"rows_whose_calibration_postdates_the_data", s.num_postdating},
      {"rows_whose_dates_are_unknown", s.num_unknown_order},
      {"rows_whose_calibration_is_from_another_device", s.num_other_device},
      {"rows_whose_device_is_unknown", s.num_unknown_device},
      {"rows_whose_calibration_is_a_refit_not_the_runs_own", s.num_refit_not_frozen},
      {"rows_after_the_rule_judged_with_another_calibration_than_the_runs", s.num_out_of_sample_not_frozen},
      {"rows", s.rows},
      {"by", {{"tool", "xstage-predict fa-score"}, {"git_sha", build_info::kGitSha},
              {"git_dirty", build_info::kGitDirty}, {"argv", o.argv},
              {"date_utc", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)))}}}};
}

// One predictor's tally on stdout: its outcomes and its median interval score.
void print_tally_line(const char* name, const judge::Tally& t) {
  const double is = t.median_interval_score_s();
  fmt::print("  {:<9} {:>4} agree ({} on a wide measurement)  {:>4} disagree ({} with a wide interval)  {:>4} not "
             "decided; median interval score {} over {} rows\n", name, t.agrees, t.agrees_wide_measurement,
             t.disagrees, t.disagrees_wide, t.not_decided,
             std::isnan(is) ? std::string("-") : (std::isinf(is) ? std::string("inf") : fmt::format("{:.1f} us", is * 1e6)),
             t.interval_scores_s.size());
}

// One calibration mutation of the sensitivity on stdout: the model's tally with the wrong calibration, or why it
// was not judged.
void print_mutation_line(const json& m) {
  if (m.contains("error")) {
    fmt::print("  model with {}: not judged ({})\n", m["mutation"].get<std::string>(), m["error"].get<std::string>());
    return;
  }
  const json& t = m["model"];
  const json& is = t["interval_score_median_s"];
  const std::string is_text = is.is_number() ? fmt::format("{:.1f} us", is.get<double>() * 1e6)
                                             : (is.is_string() ? is.get<std::string>() : std::string("-"));
  fmt::print("  model with {:<12} {:>4} agree  {:>4} disagree  {:>4} not decided; "
             "median interval score {} (a wrong calibration: {} agreements lost, {} gained{})\n",
             m["mutation"].get<std::string>() + ":", t["agrees"].get<int>(), t["disagrees"].get<int>(),
             t["not_decided"].get<int>(), is_text,
             m["agreements_lost"].get<int>(), m["agreements_gained"].get<int>(),
             m["ranks_better_than_the_calibration_as_measured"] == json(true)
                 ? "; it RANKS BETTER than the calibration as measured: these data cannot tell them apart"
                 : "");
}

}  // namespace

void add_predict_fa_score(CLI::App& app, PredictFaScoreOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "fa-score", "Score the frozen FA-A2A predictions of result files against calibrations, beside trivial predictors.");
  cmd->footer(std::string("Usage: ") + kUsage + "\n"
      "Each fa_a2a point with status ok whose target is the calibration's is judged with the frozen-prediction\n"
      "rule (computed from the calibration, the configuration and the FA-only variant alone), scored against\n"
      "its measured E_res (median of the paired rounds, bootstrap interval) beside the trivial predictors\n"
      "zero (E_res = 0) and unhidden (E_res = remote bytes / R). SCORE.json holds every row and the tallies\n"
      "(agrees / disagrees / not decided) per calibration and overall, and says for each data file whether it\n"
      "was measured before the rule was written (in-sample), and for every rule so far which files it saw.\n"
      "Outcomes: disagrees where the predicted interval and the measured median's 95% interval are disjoint (at\n"
      "any width); agrees where they meet and the prediction is decided (sharp); not decided where they meet and\n"
      "it is not (rule v6: no other outcome). A measured interval whose half-width exceeds max(20% of the median,\n"
      "1% of T_FA) is a wide measurement: said with the row, its agreements counted apart (agrees_on_a_wide_\n"
      "measurement), every predictor alike. Rule v5: E_res >= 0, so the measured interval is judged as\n"
      "[max(lo, 0), max(hi, 0)], its upper end raised to at least that tolerance where lo < 0.\n"
      "Ranking (rule v5): agreements are not a ranking; each measured row gets the interval score\n"
      "IS = (hi - lo) + 40 (lo - y)+ + 40 (y - hi)+ at y = max(measured median, 0), and the tallies give its median\n"
      "per predictor over the same rows (lower is better; inf where an interval is unbounded or absent).\n"
      "Exit codes: 0 ok, 2 bad usage or input (nothing written).");
  cmd->add_option("results", o.result_paths, "fa_a2a result files (read only)")->type_name("RESULT.json...");
  cmd->add_option("--model", o.model_paths, "calibration files (repeat for several)")->type_name("CAL.json");
  cmd->add_option("--out", o.out_path, "the summary to write (an existing file is replaced; never an input)")->type_name("SCORE.json");
}

void run_predict_fa_score(const PredictFaScoreOptions& o) {
  check_fa_score_paths(o);
  // A copy (another path to the same bytes) would count every row of it twice: it is scored once, and said.
  json copies_left_out = json::array();
  const std::vector<std::string> result_paths = without_copies(o.result_paths, "RESULT.json", copies_left_out);
  const std::vector<std::string> model_paths = without_copies(o.model_paths, "--model", copies_left_out);
  const LoadedCalibrations cals = load_calibrations(model_paths);
  ScoreState s;
  for (const auto& path : result_paths) score_result_file(path, cals, s);
  if (s.rows.empty())
    throw input_error("RESULT.json", fmt::format("no row to judge: no fa_a2a point with status ok whose target is a "
                                                 "calibration's ({} result files, {} calibrations); usage: {}",
                                                 result_paths.size(), model_paths.size(), kUsage));
  const json out = score_json(o, s, cals, copies_left_out);
  report::prepare_output_path(o.out_path, "--out");
  report::write_json_atomic(o.out_path, out, 1);
  fmt::print("{} rows ({} result files x {} calibrations); rule {} written {}\n", s.rows.size(), result_paths.size(),
             model_paths.size(), judge::kFaRuleId, judge::kFaRuleWrittenUtc);
  print_tally_line("model", s.overall.model);
  print_tally_line("zero", s.overall.zero);
  print_tally_line("unhidden", s.overall.unhidden);
  for (const json& m : out["sensitivity"]["mutations"]) print_mutation_line(m);
  fmt::print("wrote {}\n", o.out_path);
}

}  // namespace xs::cli
