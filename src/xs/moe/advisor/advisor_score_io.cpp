// xstage moe io layer: reading the advisor score's inputs and writing its summary (see advisor_score_io.hpp).
#include "xs/moe/advisor/advisor_score_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"
#include "xs/model/platform_model.hpp"
#include "xs/moe/point/moe_point_json.hpp"
#include "xs/moe/point/routing.hpp"

namespace xs::moe {
namespace {

using json = nlohmann::json;

std::optional<double> num(const json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  const double x = it->get<double>();
  return std::isfinite(x) ? std::optional<double>(x) : std::nullopt;
}

const json& sub(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  const auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

// The configuration of a point's axes (moe_point_json.hpp: every axis needed, else input_error naming it).
AdvisorConfig config_of(const json& ax) { return advisor_config_of(ax.get<MoePointSpec>()); }

std::string label_of(const AdvisorConfig& c, const std::string& target) {
  std::string s = fmt::format("{} K{} {} {} {} T{} b_n{}", target, c.num_sms, c.shape.name, c.precision, c.routing,
                              c.tokens_per_rank, c.block_n);
  if (c.num_ranks != 8) s += fmt::format(" P{}", c.num_ranks);
  if (c.routing == "skewed" && (c.zipf_alpha != 0.5 || c.gain != 1.0)) s += fmt::format(" a{} g{}", c.zipf_alpha, c.gain);
  if (c.routing_seed != 1) s += fmt::format(" seed{}", c.routing_seed);
  return s;
}

// "Why not used" for a point that did not run correctly, else "".
std::string unusable(const json& p) {
  if (sub(p, "status") != "ok") return "status " + sub(p, "status").dump();
  const json& v = sub(p, "verification");
  if (sub(v, "checked") != true) return "not verified";
  if (sub(v, "passed") != true) return "verification failed";
  for (const auto& [name, var] : sub(sub(v, "values"), "variants").items())
    for (const char* key : {"wrong_elements", "unwritten_slots", "unexpected_slots"})
      if (num(var, key).value_or(0) > 0) return fmt::format("variant {}: {} > 0", name, key);
  return "";
}

// The schedule option of a fused variant from extra.variants.<name>, or nullopt for other variants.
std::optional<ScheduleOption> option_of(const json& extra_variant) {
  if (const json& mode = sub(extra_variant, "mode"); mode.is_string() && mode != "fused") return std::nullopt;
  const json& schedule = sub(extra_variant, "schedule");
  if (schedule == "interleaved") {
    const auto d = num(extra_variant, "D");
    if (!d || *d < 1) return std::nullopt;
    return interleaved_at(static_cast<int>(*d));
  }
  if (schedule == "expert_wave") return expert_wave_with(std::max(1, static_cast<int>(num(extra_variant, "experts_per_wave").value_or(1))));
  return std::nullopt;
}

struct Accumulator {
  ScoreConfigInputs in;
  std::map<std::string, std::pair<MeasuredOption, std::vector<double>>> options;  // key -> (option, medians)
  std::map<std::string, std::vector<double>> option_samples;
  std::map<std::pair<int, int>, std::vector<MeasuredPair>> pairs;
  std::vector<double> l1_wave, l2_wave;  // the local control's expert_wave tile mainloop medians
  std::map<std::string, std::pair<MeasuredOption, std::vector<double>>> local_options;  // key -> (option, medians)
  std::map<std::string, std::vector<double>> local_samples;
  std::vector<std::string> local_sources;
  bool has_host = false;
};

void add_host(Accumulator& acc, const json& p, const std::string& src) {
  acc.has_host = true;
  const json& extra_variants = sub(sub(p, "extra"), "variants");
  std::optional<ScheduleOption> inter, wave;
  for (const auto& [name, ev] : extra_variants.items()) {
    const std::optional<ScheduleOption> o = option_of(ev);
    const json& measured = sub(sub(p, "variants"), name.c_str());
    const auto median = num(measured, "median");
    if (!o || !median || *median <= 0) continue;
    if (name == "interleaved") inter = o;
    if (name == "expert_wave") wave = o;
    auto& [mo, medians] = acc.options[o->key()];
    mo.option = *o;
    mo.sources.push_back(src);
    medians.push_back(*median);
    auto& samples = acc.option_samples[o->key()];
    for (const json& s : sub(measured, "samples"))
      if (s.is_number() && s.get<double>() > 0) samples.push_back(s.get<double>());
  }
  const json& speedup = sub(sub(p, "extra"), "speedup_interleaved_vs_wave");
  const auto med = num(speedup, "median");
  if (inter && wave && med && *med > 0) {
    MeasuredPair m;
    m.lead_rows = inter->lead_rows;
    m.experts_per_wave = wave->experts_per_wave;
    m.speedup_median = *med;
    m.speedup_p10 = num(speedup, "p10").value_or(*med);
    m.speedup_p90 = num(speedup, "p90").value_or(*med);
    m.sources = {src};
    acc.pairs[{m.lead_rows, m.experts_per_wave}].push_back(m);
  }
  if (!acc.in.tensor_flops_per_s) {
    if (const auto f = num(sub(p, "prediction"), "tensor_flops_per_s"); f && *f > 0) {
      acc.in.tensor_flops_per_s = *f;
      acc.in.flops_source = src + " prediction.tensor_flops_per_s (a before-run input, --tensor-tflops)";
    }
  }
}

void add_local(Accumulator& acc, const json& p, const std::string& src) {
  bool used = false;
  for (const auto& [name, ev] : sub(sub(p, "extra"), "variants").items()) {
    const std::optional<ScheduleOption> o = option_of(ev);
    if (const auto median = num(sub(sub(p, "variants"), name.c_str()), "median"); o && median && *median > 0) {
      auto& [mo, medians] = acc.local_options[o->key()];
      mo.option = *o;
      mo.sources.push_back(src);
      medians.push_back(*median);
      for (const json& s : sub(sub(sub(p, "variants"), name.c_str()), "samples"))
        if (s.is_number() && s.get<double>() > 0) acc.local_samples[o->key()].push_back(s.get<double>());
    }
    const auto l1 = num(sub(ev, "tiles"), "l1_mainloop_median_s"), l2 = num(sub(ev, "tiles"), "l2_mainloop_median_s");
    // Only the expert-wave variant: an interleaved variant's L2 "mainloop" at a small D carries the convoy
    // (dit_moe local at D = 1: 230 us against 33 us), which is schedule, not compute.
    if (!o || o->schedule != "expert_wave" || !l1 || !l2 || *l1 <= 0 || *l2 <= 0) continue;
    used = true;
    acc.l1_wave.push_back(*l1);
    acc.l2_wave.push_back(*l2);
  }
  if (used) acc.local_sources.push_back(src);
}

ScoreConfigInputs finish(Accumulator& acc) {
  ScoreConfigInputs in = std::move(acc.in);
  for (auto& [key, entry] : acc.options) {
    MeasuredOption m = entry.first;
    m.median_s = median(entry.second);
    std::vector<double>& samples = acc.option_samples[key];
    if (samples.empty()) samples = entry.second;
    m.p10_s = quantile(samples, 0.1);
    m.p90_s = quantile(samples, 0.9);
    in.judged.options.push_back(m);
  }
  for (auto& [key, entry] : acc.local_options) {
    MeasuredOption m = entry.first;
    m.median_s = median(entry.second);
    std::vector<double>& samples = acc.local_samples[key];
    if (samples.empty()) samples = entry.second;
    m.p10_s = quantile(samples, 0.1);
    m.p90_s = quantile(samples, 0.9);
    in.local_options.push_back(m);
  }
  for (auto& [key, list] : acc.pairs) {
    MeasuredPair m = list.front();
    std::vector<double> medians;
    m.sources.clear();
    for (const MeasuredPair& x : list) {
      medians.push_back(x.speedup_median);
      m.speedup_p10 = std::min(m.speedup_p10, x.speedup_p10);
      m.speedup_p90 = std::max(m.speedup_p90, x.speedup_p90);
      m.sources.insert(m.sources.end(), x.sources.begin(), x.sources.end());
    }
    m.speedup_median = median(medians);
    in.judged.pairs.push_back(m);
  }
  if (!acc.l1_wave.empty()) {
    const std::vector<double>& l1 = acc.l1_wave;
    const std::vector<double>& l2 = acc.l2_wave;
    std::string src;
    for (std::size_t i = 0; i < acc.local_sources.size(); ++i) src += (i ? ", " : "") + acc.local_sources[i];
    TileTimeInputs t;
    t.from = "local control";
    t.l1_s = {median(l1), *std::min_element(l1.begin(), l1.end()), *std::max_element(l1.begin(), l1.end()), "", src};
    t.l2_s = {median(l2), *std::min_element(l2.begin(), l2.end()), *std::max_element(l2.begin(), l2.end()), "", src};
    in.local_tiles = t;
  }
  return in;
}

json score_to_json(const PolicyScore& s) {
  const auto opt = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
  return {{"policy", s.policy},
          {"configs", s.num_configs},
          {"choice", {{"agrees", s.agrees}, {"disagrees", s.disagrees}, {"not_decided", s.not_decided},
                      {"not_measured", s.not_measured}}},
          {"distinct_choices", s.distinct_choices}, {"distinct_options", s.distinct_options},
          {"regret", {{"n", s.num_regret}, {"mean", opt(s.regret_mean)}, {"worst", opt(s.regret_worst)},
                      {"worst_config", s.regret_worst_config},
                      {"common", {{"n", s.num_common}, {"mean", opt(s.regret_mean_common)},
                                  {"worst", opt(s.regret_worst_common)},
                                  {"note", "over the configurations where every policy was charged a measured "
                                           "option: the comparable numbers"}}}}},
          {"speedup",
           s.num_pairs == 0
               ? json("no speedup predicted (a constant policy)")
               : json{{"pairs", s.num_pairs}, {"agrees", s.pair_agrees}, {"disagrees", s.pair_disagrees},
                      {"not_decided", s.pair_not_decided}, {"spearman", opt(s.spearman)},
                      {"spearman_note", "pooled over every measured pair (every D)"},
                      {"spearman_own_d", opt(s.spearman_own_d)}, {"pairs_own_d", s.num_pairs_own_d},
                      {"abs_error_median", opt(s.error_median)}, {"abs_error_p90", opt(s.error_p90)},
                      {"pairs_without_point", s.num_pairs_no_point},
                      {"pairs_without_point_note",
                       "decided pairs whose prediction rests on a flagged input (an extrapolated T_iss^0, a bound): "
                       "judged by their interval only, outside the Spearman and the abs errors"},
                      {"coverage", opt(s.coverage)}}}};
}

// Numbers to 6 significant digits: the file stays small and no reader needs more than the samples give.
void round_numbers(json& j) {
  if (j.is_structured()) {
    for (auto& v : j) round_numbers(v);
  } else if (j.is_number_float()) {
    j = std::stod(fmt::format("{:.6g}", j.get<double>()));
  }
}

std::string fmt_opt(const std::optional<double>& x, const char* f = "{:.3f}") {
  return x ? fmt::format(fmt::runtime(f), *x) : std::string("-");
}

}  // namespace

ScoreInputs read_score_inputs(const std::vector<std::pair<std::string, json>>& docs, const std::string& judged_target) {
  std::vector<Accumulator> accs;
  std::map<std::string, std::size_t> index;  // config key (label + target-free) -> accs
  ScoreInputs out;
  for (const auto& [file, doc] : docs) {
    const json& points = sub(doc, "points");
    if (!points.is_array()) throw input_error(file, "no 'points' array: expected an xstage-bench megamoe result file");
    // A file with no megamoe point (an fa_a2a or calibration file given by mistake beside the right ones) is refused
    // by name, with its suites, rather than read as nothing (a hostile-CLI review: it still changed meta.dates).
    std::string suites;
    bool has_moe = false;
    for (const json& p : points) {
      const json& suite = p.is_object() && p.contains("suite") ? p["suite"]
                          : p.is_object() && p.contains("spec") && p["spec"].is_object() && p["spec"].contains("suite")
                              ? p["spec"]["suite"] : json();
      const std::string name = suite.is_string() ? suite.get<std::string>() : "";
      has_moe = has_moe || name == "megamoe";
      if (!name.empty() && suites.find(name) == std::string::npos) suites += (suites.empty() ? "" : ", ") + name;
    }
    if (!has_moe)
      throw input_error(file, fmt::format("holds no megamoe point (its suites: {}); expected an xstage-bench megamoe "
                                          "result file", suites.empty() ? "none" : suites));
    const std::string base = file.substr(file.find_last_of('/') + 1);
    for (std::size_t i = 0; i < points.size(); ++i) {
      const json& p = points[i];
      if (sub(p, "suite") != "megamoe") continue;
      const std::string src = fmt::format("{}#{}", base, i);
      AdvisorConfig c;
      try {
        c = config_of(sub(p, "axes"));
      } catch (const Error& e) {
        out.skipped.push_back(src + ": " + e.what());
        continue;
      }
      if (const std::string why = unusable(p); !why.empty()) {
        out.skipped.push_back(src + ": " + why);
        continue;
      }
      if (c.target != judged_target && c.target != "local") {
        out.skipped.push_back(src + ": target " + c.target + " is neither the judged target nor the local control");
        continue;
      }
      const std::string key = label_of(c, "");
      auto [it, fresh] = index.try_emplace(key, accs.size());
      if (fresh) {
        accs.emplace_back();
        accs.back().in.config = c;
        accs.back().in.config.target = judged_target;
        accs.back().in.judged.label = label_of(c, judged_target);
      }
      if (c.target == judged_target) add_host(accs[it->second], p, src);
      else add_local(accs[it->second], p, src);
    }
  }
  for (Accumulator& acc : accs)
    if (acc.has_host) out.configs.push_back(finish(acc));
  return out;
}

ScoreResult score_advisor(const ScoreInputs& inputs, const ScoreCalibration& cal) {
  const model::PlatformModel model = model::PlatformModel::from_json(sub(cal.doc, "model"));
  ScoreResult r;
  std::vector<JudgedConfig> judged;
  std::vector<PolicyAnswer> advisor;
  std::vector<int> eq16;
  for (std::size_t i = 0; i < inputs.configs.size(); ++i) {
    const ScoreConfigInputs& in = inputs.configs[i];
    std::optional<TileTimeInputs> tiles = in.local_tiles;
    if (!tiles && in.tensor_flops_per_s) tiles = tile_times_from_rate(in.config, *in.tensor_flops_per_s, in.flops_source);
    if (!tiles) {
      r.not_scored.push_back(in.judged.label + ": no compute-only input (no local control, no recorded GEMM rate)");
      continue;
    }
    const MoeProblem problem = build_problem(generate_routing(routing_params_of(in.config)), in.config.shape.hidden,
                                             in.config.shape.intermediate);
    const CalibrationInputs ci =
        calibration_inputs(cal.doc, model, cal.file, cal.fnv1a64, in.config.num_sms, in.config.block_n);
    FrozenPrediction fp = freeze_prediction(in.config, ci, *tiles, problem);
    fp.label = in.judged.label;
    advisor.push_back(speedup_answers(fp, in.judged));
    eq16.push_back(fp.eq16_lead_rows);
    judged.push_back(in.judged);
    r.predictions.push_back(std::move(fp));
    r.scored.push_back(i);
  }
  r.policies.push_back(score_policy("advisor", judged, advisor));
  r.policies.push_back(score_policy("always interleaved at eq. 16's D", judged, always_interleaved(judged, eq16)));
  r.policies.push_back(score_policy("always interleaved at the best measured D", judged,
                                    always_interleaved_best_measured_d(judged)));
  r.policies.push_back(score_policy("always expert-wave (w = 1)", judged, always_expert_wave(judged)));
  common_regret(r.policies);
  r.statements = comparison_statements(r.policies[0], {r.policies.begin() + 1, r.policies.end()});
  // What the data let a choice decide at all: where no configuration had expert-wave faster, "always
  // interleaved" cannot lose on the schedule, and only D is left to get right.
  int wave_best = 0;
  for (const JudgedConfig& c : judged)
    if (const MeasuredOption* b = c.best(); b && b->option.schedule == "expert_wave") ++wave_best;
  r.statements.push_back(fmt::format(
      "Expert-wave was the fastest measured option in {} of {} configurations; 'always interleaved at the best "
      "measured D' is an oracle on D (it reads the measurements), not a predictor.",
      wave_best, judged.size()));
  return r;
}

json score_json(const ScoreInputs& inputs, const ScoreResult& r, const json& provenance) {
  json policies = json::array();
  for (const PolicyScore& s : r.policies) policies.push_back(score_to_json(s));
  json configs = json::array();
  for (std::size_t k = 0; k < r.predictions.size(); ++k) {
    const ScoreConfigInputs& in = inputs.configs[r.scored[k]];
    json measured = json::array();
    for (const MeasuredOption& m : in.judged.options)
      measured.push_back({{"option", m.option.key()}, {"median_s", m.median_s}, {"p10_s", m.p10_s}, {"p90_s", m.p90_s},
                          {"sources", m.sources}});
    json outcomes = json::object();
    for (const PolicyScore& s : r.policies) {
      const ConfigScore& c = s.configs[k];
      outcomes[s.policy] = {{"choice", outcome_name(c.choice)}, {"charged", c.charged},
                            {"regret", c.regret ? json(*c.regret) : json(nullptr)}};
    }
    json pairs = json::array();
    for (const PairScore& ps : r.policies[0].pairs) {
      if (ps.label != in.judged.label) continue;
      json pj = {{"at", fmt::format("expert_wave w={} / interleaved D={}", ps.experts_per_wave, ps.lead_rows)},
                 {"measured", {{"median", ps.measured}, {"p10", ps.measured_p10}, {"p90", ps.measured_p90}}},
                 {"outcome", outcome_name(ps.outcome)}};
      if (ps.predicted)
        pj["predicted"] = {{"value", std::isfinite(ps.predicted->value) ? json(ps.predicted->value) : json(nullptr)},
                           {"low", ps.predicted->low}, {"high", ps.predicted->high}};
      pairs.push_back(pj);
    }
    configs.push_back({{"config", in.judged.label},
                       {"best_measured", r.policies[0].configs[k].best},
                       {"prediction", to_json(r.predictions[k], in.judged)},
                       {"measured", measured},
                       {"pairs", pairs},
                       {"outcomes", outcomes}});
  }
  // The calibration's brackets once per (K_SM, b_n): value, range, source and flag.
  json calibration = json::object();
  for (const FrozenPrediction& p : r.predictions) {
    const AdvisorConfig& c = inputs.configs[r.scored[&p - r.predictions.data()]].config;
    const std::string key = fmt::format("K_SM={} b_n={}", c.num_sms, c.block_n);
    if (calibration.contains(key)) continue;
    calibration[key] = {{"R_Bps", to_json(p.calibration.drain_rate_bps)},
                        {"tiss0_s", to_json(p.calibration.tiss0_s)},
                        {"Q", p.calibration.capacity}};
  }
  json cal_files = json::object();
  if (!r.predictions.empty())
    cal_files = {{"file", r.predictions.front().calibration.file},
                 {"fnv1a64", r.predictions.front().calibration.fnv1a64},
                 {"target", r.predictions.front().calibration.target},
                 {"at", calibration}};
  return {{"schema", {{"name", "xstage.moe_advisor_score"}, {"version", "1.0"}}},
          {"meta", provenance},
          {"calibration", cal_files},
          {"definitions",
           {{"prediction", "the schedule replay (src/xs/moe/schedule_sim) of the emulated rank's tiles with T_L1, T_L2 "
                           "from the compute-only input and each L2 tile's modelled store stall; computed from the "
                           "calibration, the configuration and the compute-only input only"},
            {"interval", "min..max over the corners of the input brackets: R and T_iss^0 (ci95, or the bracket a "
                         "flagged row allows) and T_L1, T_L2 (the local control's range over its fused variants; none "
                         "for a GEMM rate)"},
            {"regret", "measured median time of the option charged / the best measured option's (every option the "
                       "judged launches ran for the configuration); 'either' is charged the slower of its options, "
                       "'not decided' the option recommended anyway"},
            {"choice", "agrees: the option charged is the best measured or its [p10, p90] meets the best's; "
                       "disagrees otherwise; not decided: the answer was 'either' or its speedup interval contains 1; "
                       "not measured: the option charged was never run"},
            {"speedup", "expert-wave (w) / interleaved (D) at every measured pair; agrees when the predicted interval "
                        "meets the measured [p10, p90]; error = |predicted / measured median - 1|; coverage = measured "
                        "median inside the interval; Spearman of the predicted values against the measured medians"},
            {"measured", "median over the points that ran the option of their per-launch medians (between-run offsets "
                         "not removed); p10/p90 of the pooled per-launch samples"}}},
          {"rules_written",
           "the advisor's D rule (the schedule replay overriding eq. 16's D, 2% tie band) was written after the "
           "matrix showed the dit_moe convoy at D = 1: its D choices on the committed files are in-sample. The "
           "whole-kernel replay times, the intervals and this scorer were written after every committed file"},
          {"policies", policies},
          {"statements", r.statements},
          {"not_scored", r.not_scored},
          {"skipped_points", inputs.skipped},
          {"configs", [&] {
             round_numbers(configs);
             return configs;
           }()}};
}

std::string score_markdown(const ScoreResult& r, const json& provenance) {
  std::string md = "# MegaMoE advisor scored beside the constant policies\n\n";
  md += fmt::format("Written by `{}`. Calibration: `{}`. Definitions and per-configuration rows: `{}`.\n\n",
                    provenance.value("command", std::string("xstage-predict moe-score")),
                    provenance.value("model_file", std::string("")), provenance.value("out", std::string("")));
  md += "| policy | configs | choice agrees / disagrees / not decided / not measured | mean regret | worst regret | "
        "Spearman | median abs err | p90 abs err | interval coverage |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const PolicyScore& s : r.policies)
    md += fmt::format("| {} | {} | {} / {} / {} / {} | {} | {} | {} | {} | {} | {} |\n", s.policy, s.num_configs,
                      s.agrees, s.disagrees, s.not_decided, s.not_measured, fmt_opt(s.regret_mean, "{:.4f}"),
                      fmt_opt(s.regret_worst, "{:.4f}"), s.num_pairs ? fmt_opt(s.spearman) : "-",
                      s.num_pairs ? fmt_opt(s.error_median) : "-", s.num_pairs ? fmt_opt(s.error_p90) : "-",
                      s.num_pairs ? fmt_opt(s.coverage, "{:.2f}") : "-");
  md += "\n";
  for (const PolicyScore& s : r.policies)
    if (s.num_pairs_no_point > 0)
      md += fmt::format("- {}: {} of {} predicted speedups rest on a flagged input and have no point value (only an "
                        "interval): they are left out of its Spearman and abs errors{}.\n",
                        s.policy, s.num_pairs_no_point, s.num_pairs,
                        s.spearman ? "" : ", which are therefore not computed");
  for (const std::string& s : r.statements) md += "- " + s + "\n";
  if (!r.not_scored.empty()) md += fmt::format("- {} configurations not scored (no compute-only input).\n", r.not_scored.size());
  md += "\nRegret: measured time of the option charged over the best measured option of the configuration. The "
        "advisor's D rule was written after the matrix showed the dit_moe convoy (in-sample for D).\n";
  return md;
}

}  // namespace xs::moe
