// xstage moe tests: the advisor score (src/xs/moe/advisor_score*, frozen_prediction): a constant predictor through
// the scorer with hand-computed numbers, a fabricated dataset where interleaving loses, and the frozen
// prediction's invariance to every measured field of the judged launches (with a positive control).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "xs/moe/advisor/advisor_score.hpp"
#include "xs/moe/advisor/advisor_score_io.hpp"

namespace xs::moe {
namespace {

using json = nlohmann::json;

MeasuredOption measured(const ScheduleOption& o, double median, double p10, double p90) {
  MeasuredOption m;
  m.option = o;
  m.median_s = median;
  m.p10_s = p10;
  m.p90_s = p90;
  return m;
}

// Two configurations: in A interleaved D=1 wins (10 vs 12); in B expert-wave wins (16 vs interleaved 20 at D=2,
// 18 at D=4).
std::vector<JudgedConfig> two_configs() {
  JudgedConfig a;
  a.label = "A";
  a.options = {measured(interleaved_at(1), 10, 9.9, 10.1), measured(expert_wave_with(1), 12, 11.9, 12.1)};
  a.pairs = {{1, 1, 1.2, 1.18, 1.22, {}}};
  JudgedConfig b;
  b.label = "B";
  b.options = {measured(interleaved_at(2), 20, 19.8, 20.2), measured(expert_wave_with(1), 16, 15.9, 16.1),
               measured(interleaved_at(4), 18, 17.9, 18.1)};
  b.pairs = {{2, 1, 0.8, 0.79, 0.81, {}}};
  return {a, b};
}

TEST(AdvisorScore, ConstantPredictorHandComputed) {
  const auto configs = two_configs();
  // A constant predictor: interleaved at the configuration's D, and speedup 1.1 in [1.05, 1.15] everywhere.
  std::vector<PolicyAnswer> constant = always_interleaved(configs, {1, 2});
  for (auto& a : constant) a.speedups = {SpeedupPrediction{1.1, 1.05, 1.15, true, ""}};
  const PolicyScore s = score_policy("constant", configs, constant);
  EXPECT_EQ(s.agrees, 1);     // A: charged the best
  EXPECT_EQ(s.disagrees, 1);  // B: 20 vs 16, [19.8, 20.2] does not meet [15.9, 16.1]
  ASSERT_TRUE(s.regret_mean && s.regret_worst);
  EXPECT_DOUBLE_EQ(*s.regret_mean, (1.0 + 1.25) / 2);
  EXPECT_DOUBLE_EQ(*s.regret_worst, 1.25);
  EXPECT_EQ(s.regret_worst_config, "B");
  EXPECT_EQ(s.pair_disagrees, 2);  // [1.05, 1.15] meets neither [1.18, 1.22] nor [0.79, 0.81]
  ASSERT_TRUE(s.error_median && s.error_p90);
  const double e1 = 1.1 / 1.2 - 1, e2 = 1.1 / 0.8 - 1;  // |err|: 0.0833 and 0.375
  EXPECT_NEAR(*s.error_median, (std::fabs(e1) + e2) / 2, 1e-12);
  EXPECT_NEAR(*s.error_p90, std::fabs(e1) + 0.9 * (e2 - std::fabs(e1)), 1e-12);
  EXPECT_FALSE(s.spearman.has_value());  // two pairs: no rank correlation
  EXPECT_DOUBLE_EQ(*s.coverage, 0.0);
  ASSERT_EQ(s.distinct_choices.size(), 1u);

  const PolicyScore wave = score_policy("wave", configs, always_expert_wave(configs));
  EXPECT_DOUBLE_EQ(*wave.regret_mean, (1.2 + 1.0) / 2);
  EXPECT_DOUBLE_EQ(*wave.regret_worst, 1.2);
  EXPECT_EQ(wave.num_pairs, 0);
  const PolicyScore best_d = score_policy("best D", configs, always_interleaved_best_measured_d(configs));
  EXPECT_DOUBLE_EQ(*best_d.regret_worst, 18.0 / 16.0);  // B's best interleaved is D=4

  const auto statements = comparison_statements(s, {wave, best_d});
  std::string all;
  for (const auto& x : statements) all += x + "\n";
  EXPECT_NE(all.find("never varies"), std::string::npos) << all;
  EXPECT_NE(all.find("only its D or w does (2 distinct answers)"), std::string::npos) << all;  // D 1 and D 2
  EXPECT_NE(all.find("does worse than the constant policy 'wave'"), std::string::npos) << all;
}

TEST(AdvisorScore, EitherIsChargedTheSlowerAndNotDecided) {
  const auto configs = two_configs();
  std::vector<PolicyAnswer> answers(2);
  for (auto& a : answers) {
    a.decision = Decision::kEither;
    a.either = {interleaved_at(1), expert_wave_with(1)};
  }
  answers[1].either = {interleaved_at(4), expert_wave_with(1)};
  const PolicyScore s = score_policy("either", configs, answers);
  EXPECT_EQ(s.not_decided, 2);
  EXPECT_DOUBLE_EQ(s.configs[0].regret.value(), 1.2);          // A: expert-wave 12 against the best 10
  EXPECT_DOUBLE_EQ(s.configs[1].regret.value(), 18.0 / 16.0);  // B: interleaved D=4 18 against 16
  EXPECT_DOUBLE_EQ(*s.regret_worst, 1.2);
}

TEST(AdvisorScore, RegretsAreComparedOnTheConfigurationsEveryPolicyWasMeasuredOn) {
  // A third configuration where only interleaved D=8 was run: "always interleaved at D=1" is not measured there,
  // the expert-wave policy is not either, but a policy answering D=8 gets regret 1 and a lower mean on its own set.
  auto configs = two_configs();
  JudgedConfig c;
  c.label = "C";
  c.options = {measured(interleaved_at(8), 30, 29.9, 30.1)};
  configs.push_back(c);
  std::vector<PolicyScore> policies;
  policies.push_back(score_policy("D8 in C", configs, always_interleaved(configs, {1, 2, 8})));
  policies.push_back(score_policy("wave", configs, always_expert_wave(configs)));
  EXPECT_EQ(policies[0].num_regret, 3);
  EXPECT_EQ(policies[1].num_regret, 2);
  EXPECT_DOUBLE_EQ(*policies[0].regret_mean, (1.0 + 1.25 + 1.0) / 3);  // its own set, flattered by C
  common_regret(policies);
  EXPECT_EQ(policies[0].num_common, 2);
  EXPECT_DOUBLE_EQ(*policies[0].regret_mean_common, (1.0 + 1.25) / 2);
  EXPECT_DOUBLE_EQ(*policies[1].regret_mean_common, (1.2 + 1.0) / 2);
  const auto statements = comparison_statements(policies[0], {policies[1]});
  std::string all;
  for (const auto& x : statements) all += x + "\n";
  // On the common set 1.125 vs 1.1: worse (its own-set mean 1.0833 would have looked better than 1.1).
  EXPECT_NE(all.find("does worse than the constant policy 'wave' (mean regret 1.1250 vs 1.1000 on the 2 "
                     "configurations"), std::string::npos) << all;
}

TEST(AdvisorScore, SpearmanAtThePolicysOwnDIsApartFromThePooledOne) {
  // Three configurations, pairs at D = 1 and D = 4 each. The policy predicts the D = 4 pairs' order right and the
  // D = 1 pairs' order backwards; its own D is 1.
  std::vector<JudgedConfig> configs(3);
  std::vector<PolicyAnswer> answers(3);
  const double meas1[3] = {1.1, 1.2, 1.3}, meas4[3] = {2.0, 3.0, 4.0};
  const double pred1[3] = {1.3, 1.2, 1.1}, pred4[3] = {2.1, 3.1, 4.1};
  for (int i = 0; i < 3; ++i) {
    configs[i].label = "cfg" + std::to_string(i);
    configs[i].options = {measured(interleaved_at(1), 10, 9.9, 10.1)};
    configs[i].pairs = {{1, 1, meas1[i], meas1[i] - 0.01, meas1[i] + 0.01, {}},
                        {4, 1, meas4[i], meas4[i] - 0.01, meas4[i] + 0.01, {}}};
    answers[i].choice = interleaved_at(1);
    answers[i].own_lead_rows = 1;
    answers[i].speedups = {SpeedupPrediction{pred1[i], pred1[i], pred1[i], true, ""},
                           SpeedupPrediction{pred4[i], pred4[i], pred4[i], true, ""}};
  }
  const PolicyScore s = score_policy("p", configs, answers);
  ASSERT_TRUE(s.spearman && s.spearman_own_d);
  EXPECT_GT(*s.spearman, 0.5);               // pooled: the D = 4 pairs dominate the ranks
  EXPECT_DOUBLE_EQ(*s.spearman_own_d, -1.0);  // at its own D it ranks them backwards
  EXPECT_EQ(s.num_pairs_own_d, 3);
}

TEST(AdvisorScore, SpearmanKnownValues) {
  EXPECT_NEAR(*spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0, 1e-12);
  EXPECT_NEAR(*spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0, 1e-12);
  EXPECT_NEAR(*spearman({1, 2, 3}, {1, 3, 2}), 0.5, 1e-12);
  EXPECT_FALSE(spearman({1, 1, 1}, {1, 2, 3}).has_value());
}

// ---- fabricated result files -----------------------------------------------------------------------------

json axes(const std::string& target, int d) {
  return {{"shape", "tiny"}, {"hidden", 256}, {"intermediate", 512}, {"experts", 16}, {"top_k", 2},
          {"precision", "bf16"}, {"T", 256}, {"P", 8}, {"K_SM", 4}, {"block_n", 128}, {"routing", "balanced"},
          {"zipf_alpha", 0.0}, {"gain", 1.0}, {"routing_seed", 1}, {"target", target}, {"D", d}};
}

json variant_measure(double median) {
  return {{"median", median}, {"p10", median * 0.99}, {"p90", median * 1.01},
          {"samples", {median * 0.99, median, median * 1.01}}};
}

json extra_variant(const std::string& schedule, int d, double l1, double l2) {
  return {{"schedule", schedule}, {"mode", "fused"}, {"D", schedule == "interleaved" ? d : 0},
          {"experts_per_wave", schedule == "interleaved" ? 0 : 1},
          {"tiles", {{"l1_mainloop_median_s", l1}, {"l2_mainloop_median_s", l2}, {"kernel_span_s", 1e-3}}},
          {"tflops", 100.0}};
}

json point(const std::string& target, int d, double wave_s, double inter_s, double l1 = 2e-6, double l2 = 4e-6) {
  return {{"suite", "megamoe"},
          {"status", "ok"},
          {"axes", axes(target, d)},
          {"variants", {{"expert_wave", variant_measure(wave_s)}, {"interleaved", variant_measure(inter_s)}}},
          {"extra",
           {{"D", d},
            {"speedup_interleaved_vs_wave", {{"median", wave_s / inter_s}, {"p10", wave_s / inter_s * 0.98},
                                             {"p90", wave_s / inter_s * 1.02}}},
            {"variants", {{"expert_wave", extra_variant("expert_wave", d, l1, l2)},
                          {"interleaved", extra_variant("interleaved", d, l1, l2)}}},
            {"clocks", {{"sm_clock_hz", {{"expert_wave", 1.8e9}, {"interleaved", 1.8e9}}}}}}},
          {"prediction", {{"tensor_flops_per_s", 5e14}, {"made", "before_run"}}},
          {"verification", {{"checked", true}, {"passed", true}}}};
}

json calibration() {
  // K = 4: V = 4 x 128 x 128 x 2 B = 131072 B sits on an unconstrained row (an upper bound of T_iss^0).
  return {{"config", {{"target", "host"}}},
          {"model",
           {{"R_Bps", 5e10}, {"R_ci95", {4.9e10, 5.1e10}}, {"R_bound", "fit"},
            {"tiss0", {{{"K", 4}, {"B_bytes", 16384}, {"V_bytes", 65536}, {"s", 1e-6}, {"ci95", {0.9e-6, 1.1e-6}},
                        {"constrained", true}},
                       {{"K", 4}, {"B_bytes", 32768}, {"V_bytes", 131072}, {"s", 2e-6}, {"ci95", {1.9e-6, 2.1e-6}},
                        {"constrained", false}}}},
            {"Q", {{{"K", 4}, {"bytes", 1.0}, {"ci95", nullptr}, {"bound", "not_identified"}}}}}}};
}

ScoreResult score_docs(const std::vector<json>& files, const json& cal = calibration()) {
  std::vector<std::pair<std::string, json>> docs;
  for (std::size_t i = 0; i < files.size(); ++i) docs.emplace_back("f" + std::to_string(i) + ".json", files[i]);
  const ScoreInputs inputs = read_score_inputs(docs, "host");
  return score_advisor(inputs, {"cal.json", "fnv1a64:0", cal});
}

TEST(AdvisorScore, FabricatedInterleavingLosesGivesAlwaysInterleavedPositiveRegret) {
  // Interleaved (D = 1 and D = 3) slower than expert-wave on every launch.
  const json host = {{"points", {point("host", 1, 1.0e-3, 1.3e-3), point("host", 3, 1.0e-3, 1.1e-3),
                                 point("local", 1, 0.9e-3, 1.0e-3)}}};
  std::vector<std::pair<std::string, json>> docs = {{"fab.json", host}};
  const ScoreInputs inputs = read_score_inputs(docs, "host");
  ASSERT_EQ(inputs.configs.size(), 1u);
  const JudgedConfig& c = inputs.configs[0].judged;
  ASSERT_EQ(c.options.size(), 3u);  // expert_wave w=1 (two points), interleaved D=1, D=3
  ASSERT_EQ(c.pairs.size(), 2u);
  ASSERT_TRUE(inputs.configs[0].local_tiles.has_value());
  const PolicyScore always = score_policy("always interleaved", {c}, always_interleaved({c}, {1}));
  ASSERT_TRUE(always.regret_worst.has_value());
  EXPECT_GT(*always.regret_worst, 1.0);
  EXPECT_NEAR(*always.regret_worst, 1.3, 1e-12);
  EXPECT_EQ(always.disagrees, 1);
  const PolicyScore best_d = score_policy("best D", {c}, always_interleaved_best_measured_d({c}));
  EXPECT_NEAR(*best_d.regret_worst, 1.1, 1e-12);
  const PolicyScore wave = score_policy("wave", {c}, always_expert_wave({c}));
  EXPECT_DOUBLE_EQ(*wave.regret_worst, 1.0);
  EXPECT_EQ(wave.agrees, 1);
}

// Every numeric leaf of a judged (host) point's measurements scaled, the launch configuration left alone.
void mutate_measured(json& j, const std::string& key = "") {
  static const std::set<std::string> kConfiguration = {"D", "experts_per_wave", "schedule", "mode"};
  if (j.is_object()) {
    for (auto& [k, v] : j.items())
      if (!kConfiguration.count(k)) mutate_measured(v, k);
  } else if (j.is_array()) {
    for (auto& v : j) mutate_measured(v, key);
  } else if (j.is_number_float() || j.is_number_integer()) {
    j = j.get<double>() * 1.37 + 1e-7;
  }
}

TEST(AdvisorScore, PredictionIgnoresEveryMeasuredFieldOfTheJudgedLaunches) {
  const json base = {{"points", {point("host", 1, 1.0e-3, 0.9e-3), point("local", 1, 0.9e-3, 0.8e-3)}}};
  const ScoreResult r0 = score_docs({base});
  ASSERT_EQ(r0.predictions.size(), 1u);
  const FrozenPrediction& p0 = r0.predictions[0];
  EXPECT_FALSE(p0.flagged.empty());  // T_iss^0 sits on an unconstrained row: a bracket, named
  EXPECT_NE(p0.flagged.front().find("T_iss^0"), std::string::npos);
  JudgedConfig fixed;  // the same selection of options written for both
  fixed.options = {measured(interleaved_at(1), 1, 1, 1)};
  const json j0 = to_json(p0, fixed);

  json mutated = base;
  json& host = mutated["points"][0];
  for (const char* section : {"variants", "extra", "verification"}) mutate_measured(host[section]);
  host["verification"] = {{"checked", true}, {"passed", true}};  // still a launch that ran and verified
  const ScoreResult r1 = score_docs({mutated});
  ASSERT_EQ(r1.predictions.size(), 1u);
  EXPECT_EQ(to_json(r1.predictions[0], fixed), j0);
  EXPECT_EQ(r1.predictions[0].corner_times_s, p0.corner_times_s);
  // The scores see the mutation (the judged side did change): always expert-wave's regret moves.
  ASSERT_TRUE(r0.policies[3].configs[0].regret && r1.policies[3].configs[0].regret);
  EXPECT_NE(*r1.policies[3].configs[0].regret, *r0.policies[3].configs[0].regret);

  // Positive control: the compute-only input (the local control's tile times) does move the prediction.
  json local_changed = base;
  mutate_measured(local_changed["points"][1]["extra"]);
  const ScoreResult r2 = score_docs({local_changed});
  EXPECT_NE(to_json(r2.predictions[0], fixed), j0);
}

json read_committed(const std::string& relative) {
  std::ifstream f(std::string(XS_TEST_DATA_DIR) + "/../../" + relative);
  if (!f) throw std::runtime_error("cannot read " + relative);
  return json::parse(f);
}

// The same invariance on a committed file (issue 27 item 1): megamoe-bf16-2048.json holds host (judged) and local
// (compute-only) points of 14 configurations. Every measured field of every judged launch (variants, extra but its
// launch configuration, paired, verification's values) is changed in memory; no field of any prediction moe-score
// writes may move, and the judged side must (the test can fail both ways).
TEST(AdvisorScore, CommittedFileNoMeasuredFieldOfTheJudgedLaunchesMovesAPrediction) {
  const json base = read_committed("results/h200/megamoe/matrix/megamoe-bf16-2048.json");
  const json cal = read_committed("results/h200/megamoe/calibration-moe-pattern.json");
  json mutated = base;
  int num_judged = 0;
  for (json& p : mutated["points"]) {
    if (p["axes"]["target"] != "host") continue;
    ++num_judged;
    for (const char* section : {"variants", "extra", "paired", "verification"})
      if (p.contains(section)) mutate_measured(p[section]);
    // Still launches that ran and verified: the verification gate's counters stay zero.
    for (auto& [name, v] : p["verification"]["values"]["variants"].items())
      for (const char* key : {"wrong_elements", "unwritten_slots", "unexpected_slots"}) v[key] = 0;
  }
  ASSERT_GT(num_judged, 0);
  auto inputs_of = [](const json& doc) {
    std::vector<std::pair<std::string, json>> docs = {{"megamoe-bf16-2048.json", doc}};
    return read_score_inputs(docs, "host");
  };
  const ScoreInputs in0 = inputs_of(base), in1 = inputs_of(mutated);
  const ScoreCalibration c{"calibration-moe-pattern.json", "fnv1a64:0", cal};
  const ScoreResult r0 = score_advisor(in0, c), r1 = score_advisor(in1, c);
  ASSERT_EQ(r0.predictions.size(), r1.predictions.size());
  ASSERT_GE(r0.predictions.size(), 10u);
  ASSERT_EQ(r0.scored, r1.scored);
  for (std::size_t k = 0; k < r0.predictions.size(); ++k) {
    const JudgedConfig& selection = in0.configs[r0.scored[k]].judged;  // the same options written both ways
    EXPECT_EQ(to_json(r1.predictions[k], selection), to_json(r0.predictions[k], selection)) << r0.predictions[k].label;
    EXPECT_EQ(r1.predictions[k].corner_times_s, r0.predictions[k].corner_times_s) << r0.predictions[k].label;
    EXPECT_EQ(r1.predictions[k].advisor_schedule, r0.predictions[k].advisor_schedule);
    EXPECT_EQ(r1.predictions[k].advisor_lead_rows, r0.predictions[k].advisor_lead_rows);
  }
  // The judged side did change: the measured speedups the advisor is scored against moved.
  bool measured_moved = false;
  for (std::size_t i = 0; i < in0.configs.size() && i < in1.configs.size(); ++i)
    for (std::size_t q = 0; q < in0.configs[i].judged.pairs.size() && q < in1.configs[i].judged.pairs.size(); ++q)
      measured_moved = measured_moved ||
                       in0.configs[i].judged.pairs[q].speedup_median != in1.configs[i].judged.pairs[q].speedup_median;
  EXPECT_TRUE(measured_moved);
}

// Issue 27 item 4 on a committed file: the calibration's T_iss^0 at K_SM V_t is an extrapolation, so no
// prediction has a point value: options' times and the speedups are null (their brackets stay), and the scorer
// leaves every such pair out of the Spearman and the abs errors. With R marked unconstrained by the fitter
// (above the copy-engine rate), R is flagged as well, as xstage-predict burst flags it.
TEST(AdvisorScore, FlaggedInputsGiveNoPointValueAndNoRankCorrelation) {
  const json base = read_committed("results/h200/megamoe/matrix/megamoe-bf16-2048.json");
  json cal = read_committed("results/h200/megamoe/calibration-moe-pattern.json");
  std::vector<std::pair<std::string, json>> docs = {{"megamoe-bf16-2048.json", base}};
  const ScoreInputs in = read_score_inputs(docs, "host");
  const ScoreResult r = score_advisor(in, {"calibration-moe-pattern.json", "fnv1a64:0", cal});
  ASSERT_GE(r.predictions.size(), 10u);
  for (std::size_t k = 0; k < r.predictions.size(); ++k) {
    const FrozenPrediction& p = r.predictions[k];
    ASSERT_FALSE(p.point_values()) << p.label;
    const json j = to_json(p, in.configs[r.scored[k]].judged);
    for (const json& o : j["options"]) {
      EXPECT_TRUE(o["time_s"].is_null()) << p.label;
      EXPECT_LE(o["low_s"].get<double>(), o["high_s"].get<double>());
    }
    if (!j["speedup"].is_null()) EXPECT_TRUE(j["speedup"]["value"].is_null()) << p.label;
    EXPECT_EQ(j["inputs"]["flagged"], json::array({"T_iss^0"})) << p.label;
  }
  const PolicyScore& advisor = r.policies[0];
  EXPECT_GT(advisor.num_pairs, 0);
  EXPECT_EQ(advisor.num_pairs_no_point, advisor.pair_agrees + advisor.pair_disagrees);
  EXPECT_FALSE(advisor.spearman.has_value());
  EXPECT_FALSE(advisor.error_median.has_value());
  EXPECT_TRUE(advisor.coverage.has_value());  // intervals are still judged

  cal["model"]["R_constrained"] = false;
  cal["model"]["R_caveat"] = "R = 5.2e10 B/s exceeds the copy-engine rate 4e10 B/s of the same path: absorption, not R";
  const ScoreResult flagged_r = score_advisor(in, {"calibration-moe-pattern.json", "fnv1a64:0", cal});
  ASSERT_FALSE(flagged_r.predictions.empty());
  const json j = to_json(flagged_r.predictions[0], in.configs[flagged_r.scored[0]].judged);
  EXPECT_EQ(j["inputs"]["flagged"], json::array({"R", "T_iss^0"})) << j["inputs"].dump();
}

// A flagged R (a lower bound, 15 GB/s): the speedup, a ratio of two monotone times, is not monotone in R, so the
// bracket samples R inside its bracket. At R = 19.19 GB/s (inside [15 GB/s, unbounded)) the same configuration's
// speedup is about 0.64; with the ends alone the bracket stopped at 0.48 (found by the end-of-session review).
TEST(AdvisorScore, FlaggedRateBracketSamplesTheInteriorOfTheRatio) {
  const json base = read_committed("results/h200/megamoe/matrix/megamoe-bf16-2048.json");
  json cal = read_committed("results/h200/megamoe/calibration-moe-pattern.json");
  std::vector<std::pair<std::string, json>> docs = {{"megamoe-bf16-2048.json", base}};
  const ScoreInputs in = read_score_inputs(docs, "host");
  const auto pair_of = [&](const json& c) {
    const ScoreResult r = score_advisor(in, {"calibration-moe-pattern.json", "fnv1a64:0", c});
    for (const PairScore& p : r.policies[0].pairs)
      if (p.label.rfind("host K66 dit_moe bf16 balanced T2048", 0) == 0 && p.lead_rows == 1 && p.predicted) return *p.predicted;
    throw std::runtime_error("no dit_moe balanced T2048 pair at D = 1");
  };
  cal["model"]["R_Bps"] = 19.19e9;
  cal["model"]["R_ci95"] = {19.1e9, 19.3e9};
  const SpeedupPrediction inside = pair_of(cal);
  cal["model"]["R_Bps"] = 15e9;
  cal["model"]["R_bound"] = "lower";
  cal["model"]["R_ci95"] = nullptr;
  const SpeedupPrediction flagged = pair_of(cal);
  EXPECT_TRUE(std::isnan(flagged.value));
  // T_iss^0 is flagged in both (an unconstrained row at K = 66), so the R = 19.19 GB/s prediction is a bracket too,
  // over the same T_iss^0 ends: the flagged R's sampled bracket must hold all of it (its R samples are 13% apart:
  // 1% slack on the high side).
  EXPECT_LE(flagged.low, inside.low);
  EXPECT_GE(flagged.high, 0.99 * inside.high)
      << "[" << flagged.low << ", " << flagged.high << "] misses [" << inside.low << ", " << inside.high << "]";
}

// Mutation of a committed file's calibration: the K_SM 132 dit_moe bf16 balanced pair (expert-wave over
// interleaved at eq. 16's D = 2, measured 0.625 in [0.624, 0.633]) agrees with its predicted interval; with R
// halved (R_Bps and R_ci95 x 0.5) the same launches disagree.
TEST(AdvisorScore, HalvedDrainRateTurnsACommittedAgreementIntoADisagreement) {
  json result = read_committed("results/h200/megamoe/matrix/megamoe-bf16-6976-132-host.json");
  json kept = json::array();
  for (const json& p : result["points"])
    if (p["axes"]["shape"] == "dit_moe" && p["axes"]["routing"] == "balanced") kept.push_back(p);
  ASSERT_EQ(kept.size(), 1u);
  result["points"] = kept;
  json cal = read_committed("results/h200/megamoe/calibration-moe-pattern.json");
  const ScoreResult r0 = score_docs({result}, cal);
  ASSERT_EQ(r0.policies[0].pairs.size(), 1u);
  EXPECT_EQ(r0.policies[0].pairs[0].outcome, Outcome::kAgrees);
  cal["model"]["R_Bps"] = cal["model"]["R_Bps"].get<double>() * 0.5;
  for (auto& x : cal["model"]["R_ci95"]) x = x.get<double>() * 0.5;
  const ScoreResult r1 = score_docs({result}, cal);
  EXPECT_EQ(r1.policies[0].pairs[0].outcome, Outcome::kDisagrees);
}

}  // namespace
}  // namespace xs::moe
