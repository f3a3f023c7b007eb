// xstage cli layer: `xstage-predict fa-result` (see predict_fa_result.hpp). The measured quantities, meta and
// every other section stay as the run wrote them; only the prediction of each re-judged point changes, in the
// places the bench put it: points[i].prediction, points[i].extra.agreement (extra.prediction_note) and the
// point's copy in extra.fa_a2a[] (the form scripts/plot_fa_a2a.py reads).
#include "xs/cli/predict_fa_result.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "xs/attention/point/fa_app_point.hpp"
#include "xs/attention/judge/fa_judgement.hpp"
#include "xs/attention/io/fa_result_reader.hpp"
#include "xs/cli/common/cli_main.hpp"
#include "xs/cli/common/options.hpp"
#include "xs/common/error.hpp"
#include "xs/model/platform_model.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/fnv1a.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/measured_device.hpp"
#include "xs/report/result_file.hpp"
#include "xs/build_info.hpp"

namespace xs::cli {
namespace {

using nlohmann::json;
constexpr const char* kUsage = "xstage-predict fa-result RESULT.json --model CAL.json --out NEW.json";

// j at a JSON pointer ("/spec/M"); null where absent.
json at(const json& j, const char* pointer) {
  const json::json_pointer p(pointer);
  return j.is_object() && j.contains(p) ? j[p] : json();
}

// What the old file said (its `agreement` line) and what the new rule says for one point.
struct PointRow {
  std::string id, target, note;  // note: why a point was left as it was, or that it has no prediction
  long long seq_len = 0, num_heads = 0;
  bool rejudged = false;
  std::string model, zero, unhidden;  // outcomes: agrees | disagrees | not decided | "" (not measured)
  // The whole outcomes, for the tallies (the wide-measurement and wide-interval counts, the interval scores).
  attention::judge::Outcome model_outcome, zero_outcome, unhidden_outcome;
  json predicted = json(), measured = json();
  std::string before;                 // the input's agreement line
};

// A whole input file; one that cannot be read is an input_error naming its flag ("--model") and the form.
std::string read_named(const std::string& path, const char* flag) {
  try {
    return report::read_text_file(path);
  } catch (const Error& e) {
    throw input_error(flag, fmt::format("{}; usage: {}", e.what(), kUsage));
  }
}

// The input as JSON, after the strict result-file reader accepted it and it has fa_a2a points.
json read_fa_result(const std::string& path) {
  const std::string text = read_named(path, "RESULT.json");
  const std::string expected = "expected a result file written by xstage-bench fa_a2a (" + std::string(kUsage) + ")";
  try {
    (void)report::parse_result_text(text, path);
  } catch (const Error& e) {
    throw input_error("RESULT.json", fmt::format("{}; {}", e.what(), expected));
  }
  json doc = report::parse_json_text(text, path);
  for (const json& p : doc["points"])
    if (p.value("suite", "") == attention::kFaSuiteId) return doc;
  throw input_error("RESULT.json", path + " has no fa_a2a points; " + expected);
}

// Re-judges points[i] in place (with its copy `legacy` in extra.fa_a2a, or null) and says what happened.
PointRow rejudge(json& point, json* legacy, std::size_t i, const attention::model::FaCalibration& calibration,
                 const std::string& model_target, const json& provenance) {
  const std::string path = report::index_path("points", i);
  PointRow row;
  try {
    const attention::FaA2aPointSpec spec = attention::fa_point_spec_from_json(point);
    row.id = point.value("id", "");
    row.target = spec.target;
    row.seq_len = spec.seq_len;
    row.num_heads = spec.num_heads;
    const json before = at(point, "/extra/agreement");
    row.before = before.is_string() ? before.get<std::string>() : std::string();
    if (point["status"] != "ok") {
      row.note = fmt::format("status {}: left as it was", point["status"].get<std::string>());
      return row;
    }
    json& extra = point["extra"];
    auto clear = [&](json* p) {  // the old prediction blocks, in a point (extra) and in its copy (beside)
      if (p == nullptr) return;
      json& holder = p == &point ? extra : *p;
      p->erase("prediction");
      for (const char* key : {"agreement", "prediction_note", "judgement", "diagnostics"}) holder.erase(key);
    };
    if (!model_target.empty() && model_target != spec.target) {
      // A host calibration says nothing about another target: no prediction, and why.
      const std::string note =
          fmt::format("the calibration is for target '{}': no prediction for '{}'", model_target, spec.target);
      for (json* p : {&point, legacy}) {
        clear(p);
        if (p != nullptr) (p == &point ? extra : *p)["prediction_note"] = note;
      }
      row.note = fmt::format("target '{}', the calibration's is '{}': its prediction removed", spec.target,
                             model_target);
      return row;
    }
    json judged = json::object();
    const auto j = attention::judge::judge_point(spec, attention::fa_point_result_from_json(point), calibration);
    attention::judge::add_judgement_json(j, judged);
    json rejudged = json::object();  // the run's extra.rejudged holds the rest (tool, argv, date)
    for (const char* key : {"model_file", "model_fnv1a64", "model_target", "note"}) rejudged[key] = provenance.at(key);
    // A pointer, not a copy: the input keeps the superseded line (older rules used outcomes no rule uses now).
    rejudged["previous"] = {{"agreement_at", before.is_null() ? json() : json("RESULT.json " + path + ".extra.agreement")}};
    for (json* p : {&point, legacy}) {
      if (p == nullptr) continue;
      clear(p);
      json& holder = p == &point ? extra : *p;
      (*p)["prediction"] = judged["prediction"];
      for (const char* key : {"agreement", "judgement", "diagnostics"}) holder[key] = judged[key];
    }
    extra["rejudged"] = rejudged;
    row.model = j.model.result;
    row.zero = j.zero.result;
    row.unhidden = j.unhidden.result;
    row.model_outcome = j.model;
    row.zero_outcome = j.zero;
    row.unhidden_outcome = j.unhidden;
    row.predicted = judged["prediction"]["E_res_s"];
    row.measured = j.measured.measured ? json(j.measured.median_s) : json();
    if (j.model.result.empty() || j.model.result == "not decided") row.note = j.model.reason;  // never without its reason
  } catch (const Error& e) {
    throw report::nest_error(e, path);
  }
  row.rejudged = true;
  return row;
}

std::string us_text(const json& v) {
  return v.is_number() ? fmt::format("{:.1f}", v.get<double>() * 1e6) : std::string("inf");
}

void print_rows(const std::vector<PointRow>& rows, const PredictFaResultOptions& o, const std::string& model_target,
                int num_rejudged) {
  attention::judge::Tally model, zero, unhidden;
  for (const auto& r : rows)
    if (r.rejudged) {
      model.add(r.model_outcome);
      zero.add(r.zero_outcome);
      unhidden.add(r.unhidden_outcome);
    }
  if (o.json) {
    json points = json::array();
    for (const auto& r : rows)
      points.push_back({{"id", r.id}, {"M", r.seq_len}, {"heads", r.num_heads}, {"target", r.target},
                        {"rejudged", r.rejudged}, {"note", r.note}, {"E_res_pred_s", r.predicted},
                        {"E_res_measured_s", r.measured}, {"model", r.model.empty() ? json() : json(r.model)},
                        {"zero", r.zero.empty() ? json() : json(r.zero)},
                        {"unhidden", r.unhidden.empty() ? json() : json(r.unhidden)},
                        {"previous_agreement", r.before}});
    fmt::print("{}\n", json{{"result", o.result_path}, {"model", o.model_path}, {"out", o.out_path},
                            {"model_target", model_target.empty() ? json() : json(model_target)},
                            {"num_rejudged", num_rejudged}, {"points", points},
                            {"tally", {{"model", model.to_json()}, {"zero", zero.to_json()},
                                       {"unhidden", unhidden.to_json()}}}}.dump());
    return;
  }
  fmt::print("{} judged with {} (target {}); rule {} (written {})\n", o.result_path, o.model_path,
             model_target.empty() ? "not recorded" : model_target, attention::judge::kFaRuleId,
             attention::judge::kFaRuleWrittenUtc);
  fmt::print("{:>6}  {:>5}  {:<8}  {:>21}  {:>10}  {:<12}  {:<12}  {:<12}\n", "M", "heads", "target",
             "pred. E_res us", "meas. us", "model", "zero", "unhidden");
  for (const auto& r : rows) {
    const std::string pred = r.predicted.is_array() ? fmt::format("{}..{}", us_text(r.predicted[0]), us_text(r.predicted[1]))
                                                    : std::string("-");
    fmt::print("{:>6}  {:>5}  {:<8}  {:>21}  {:>10}  {:<12}  {:<12}  {:<12}{}\n", r.seq_len, r.num_heads, r.target,
               pred, r.measured.is_number() ? us_text(r.measured) : std::string("-"), r.model.empty() ? "-" : r.model,
               r.zero.empty() ? "-" : r.zero, r.unhidden.empty() ? "-" : r.unhidden,
               r.note.empty() ? "" : "  (" + r.note + ")");
  }
  auto line = [](const attention::judge::Tally& t) {
    return fmt::format("{} agree ({} on a wide measurement), {} disagree, {} not decided", t.agrees,
                       t.agrees_wide_measurement, t.disagrees, t.not_decided);
  };
  fmt::print("model: {}; zero: {}; unhidden: {}\n", line(model), line(zero), line(unhidden));
  fmt::print("wrote {} ({} of {} fa_a2a points re-judged)\n", o.out_path, num_rejudged, rows.size());
}

}  // namespace

void add_predict_fa_result(CLI::App& app, PredictFaResultOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "fa-result", "Judge a measured fa_a2a result file again against another calibration, without measuring.");
  cmd->footer(
      std::string("Usage: ") + kUsage + " [--json]\n"
      "Every fa_a2a point with status ok whose target is the calibration's (config.target; any target where\n"
      "the calibration does not record one) gets its prediction and agreement recomputed from the measured\n"
      "quantities in the file (extra.measured, variants and paired samples) with the calibration's R,\n"
      "T_iss^0 and Q, exactly as xstage-bench fa_a2a --model computes them: points[i].prediction,\n"
      "points[i].extra.agreement and extra.fa_a2a[i] are replaced, and extra.rejudged records the\n"
      "calibration (path, fnv1a64 of its bytes, its git sha and date), where the input keeps the previous\n"
      "agreement, the rule applied and every earlier rule (id, when written, what it says),\n"
      "and this tool's version. Other points, measurements and meta are left as they were; extra.model_from\n"
      "names the new calibration. NEW.json is written atomically (an existing file is replaced) and must not be RESULT.json.\n"
      "Prints M, heads, target, the frozen E_res prediction, the measured median, and the outcome (agrees |\n"
      "disagrees | not decided) of the model and of the trivial predictors zero and unhidden, then the tallies.\n"
      "Exit codes: 0 ok, 2 bad usage or input (nothing written).");
  cmd->add_option("result", o.result_path, "the fa_a2a result file of xstage-bench fa_a2a to re-judge (read only)")
      ->type_name("RESULT.json");
  cmd->add_option("--model", o.model_path, "calibration result file (xstage-calibrate, with a `model` section)")
      ->type_name("CAL.json");
  cmd->add_option("--out", o.out_path, "where to write the re-judged result (an existing file is replaced; never RESULT.json)")
      ->type_name("NEW.json")
      ->check(kNonEmptyPath);
  cmd->add_flag("--json", o.json, "print one JSON object per run instead of the table");
}

void run_predict_fa_result(const PredictFaResultOptions& o) {
  if (o.result_path.empty()) throw_missing("RESULT.json", std::string("the fa_a2a result to re-judge: ") + kUsage);
  if (o.model_path.empty()) throw_missing("--model", std::string("the calibration to judge with: ") + kUsage);
  if (o.out_path.empty()) throw_missing("--out", std::string("the file to write the re-judged result to (an existing file is replaced, never RESULT.json): ") + kUsage);
  report::check_distinct_paths({{o.out_path, "--out"}},
                                {{o.result_path, "the input RESULT.json"}, {o.model_path, "--model"}});
  report::check_output_path(o.out_path, "--out");
  json doc = read_fa_result(o.result_path);
  // One read of the calibration: the model, its target, its meta and the recorded hash all come from these bytes.
  const std::string model_text = read_named(o.model_path, "--model");
  const attention::model::FaCalibration calibration = attention::model::load_fa_calibration(model_text, o.model_path);
  const json model_doc = report::parse_json_text(model_text, o.model_path);
  const std::string model_target = calibration_target_of(model_doc);
  const json model_meta = at(model_doc, "/meta");
  // A calibration of another backend (the simulator's planted path) says nothing about measured hardware:
  // judged all the same, but loudly.
  const json model_backend = at(model_meta, "/backend"), result_backend = at(doc, "/meta/backend");
  if (model_backend.is_string() && result_backend.is_string() && model_backend != result_backend)
    std::fprintf(stderr, "xstage-predict: WARNING: %s was measured on backend %s but the calibration %s on backend "
                 "%s: its R, T_iss^0 and Q are not this path's, so the verdicts judge the data against another "
                 "path\n", o.result_path.c_str(), result_backend.get<std::string>().c_str(), o.model_path.c_str(),
                 model_backend.get<std::string>().c_str());
  // The same for a calibration of another GPU model (an H100's R judging an H200's data).
  const std::string model_device = report::measured_device(model_meta, o.model_path).name;
  const std::string result_device =
      report::measured_device(doc.contains("meta") ? doc["meta"] : json::object(), o.result_path).name;
  if (!model_device.empty() && !result_device.empty() &&
      report::device_key(model_device) != report::device_key(result_device))
    std::fprintf(stderr, "xstage-predict: WARNING: %s was measured on %s but the calibration %s on %s: another GPU's "
                 "R, T_iss^0 and Q judge these data\n", o.result_path.c_str(), result_device.c_str(),
                 o.model_path.c_str(), model_device.c_str());
  else if (model_device.empty() != result_device.empty())
    std::fprintf(stderr, "xstage-predict: note: %s records no GPU name (meta.devices[meta.device_index].name): whether "
                 "the calibration is of the same GPU model as the data is not checked\n",
                 (model_device.empty() ? o.model_path : o.result_path).c_str());
  json provenance = {
      {"model_file", o.model_path}, {"model_fnv1a64", report::fnv1a64(model_text)},
      {"model_target", model_target.empty() ? json() : json(model_target)},
      {"model_git_sha", at(model_meta, "/git_sha")}, {"model_date_utc", at(model_meta, "/date_utc")},
      {"previous_model_from", doc["extra"].value("model_from", json())},
      {"by", {{"tool", "xstage-predict fa-result"}, {"tool_version", build_info::kVersion},
              {"git_sha", build_info::kGitSha}, {"git_dirty", build_info::kGitDirty}, {"argv", o.argv},
              {"date_utc", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)))}}},
      {"note", "prediction and agreement recomputed from the point's measured quantities with model_file; nothing "
               "was measured again: meta, variants and extra.measured are the original run's"},
      {"rule", {{"id", attention::judge::kFaRuleId}, {"written_utc", attention::judge::kFaRuleWrittenUtc}}},
      {"rules", attention::judge::fa_rules_json()}};
  // extra.fa_a2a[k] is the k-th fa_a2a point's copy where the file keeps one per point, in order.
  std::vector<std::size_t> fa_points;
  for (std::size_t i = 0; i < doc["points"].size(); ++i)
    if (doc["points"][i].value("suite", "") == attention::kFaSuiteId) fa_points.push_back(i);
  json& legacy = doc["extra"]["fa_a2a"];
  const bool legacy_matches = legacy.is_array() && legacy.size() == fa_points.size();
  bool copies_match = legacy_matches;
  for (std::size_t k = 0; copies_match && k < fa_points.size(); ++k) {
    const json& point = doc["points"][fa_points[k]];
    copies_match = at(legacy[k], "/spec/M") == at(point, "/axes/M") &&
                   at(legacy[k], "/spec/target") == at(point, "/axes/target");
  }
  // A copy that cannot be matched to its point one to one would keep the old prediction beside the new
  // model_from (scripts/plot_fa_a2a.py reads it): it is removed rather than left stale.
  if (!legacy.is_null() && !copies_match) {
    doc["extra"].erase("fa_a2a");
    provenance["fa_a2a_copy"] = "removed: extra.fa_a2a did not match points[] one to one";
  }
  std::vector<PointRow> rows;
  int num_rejudged = 0;
  for (std::size_t k = 0; k < fa_points.size(); ++k) {
    json& point = doc["points"][fa_points[k]];
    json* copy = copies_match ? &doc["extra"]["fa_a2a"][k] : nullptr;
    rows.push_back(rejudge(point, copy, fa_points[k], calibration, model_target, provenance));
    num_rejudged += rows.back().rejudged ? 1 : 0;
  }
  if (doc["extra"].contains("fa_a2a") && doc["extra"]["fa_a2a"].is_null()) doc["extra"].erase("fa_a2a");
  provenance["num_rejudged"] = num_rejudged;
  provenance["num_left_as_they_were"] = static_cast<int>(rows.size()) - num_rejudged;
  doc["extra"]["rejudged"] = provenance;
  if (num_rejudged > 0) doc["extra"]["model_from"] = o.model_path;
  (void)report::result_from_json(doc);  // what is written reads back
  report::prepare_output_path(o.out_path, "--out");
  report::write_json_atomic(o.out_path, doc, 1);
  print_rows(rows, o, model_target, num_rejudged);
}

}  // namespace xs::cli
