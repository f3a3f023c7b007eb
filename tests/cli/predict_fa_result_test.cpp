// tests/cli: `xstage-predict fa-result` on the committed small-K H200 fa_a2a run and its calibration: a new
// file with every point re-judged and the measurement untouched; points of another target left as they were;
// --out naming the input, a file that is not an fa_a2a result and a missing flag refused (exit 2, nothing
// written).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "tool_run.hpp"

namespace {

using nlohmann::json;
using xs::test::contains;
using xs::test::Scratch;

const std::string kDir = std::string(XS_TEST_DATA_DIR) + "/../../results/h200/archive/2026-12-02-1bb3bca/fa_a2a-small-k/";
const std::string kResult = kDir + "fa-a2a-host-small-k.json";
const std::string kCalibration = kDir + "calibration-host-small-k.json";
const char* kTool = "xstage-predict";

// FNV-1a 64 of a file's bytes, as the tool records it ("fnv1a64:%016x").
std::string fnv1a64_of(const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  char buf[32];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return buf;
}

TEST(PredictFaResult, ReJudgesEveryPointIntoANewFileAndLeavesTheMeasurement) {
  Scratch s;
  const std::string input_before = xs::test::read_file(kResult);
  const auto r = s.run(kTool, "fa-result " + kResult + " --model " + kCalibration + " --out out/new.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(xs::test::read_file(kResult), input_before);
  EXPECT_TRUE(contains(r.out, "wrote out/new.json (5 of 5 fa_a2a points re-judged)")) << r.out;
  EXPECT_TRUE(contains(r.out, " 8192 ")) << r.out;
  const json in = json::parse(input_before), out = json::parse(xs::test::read_file(s.path("out/new.json")));
  EXPECT_EQ(out["meta"], in["meta"]);
  EXPECT_EQ(out["extra"]["model_from"], kCalibration);
  EXPECT_EQ(out["extra"]["rejudged"]["num_rejudged"], 5);
  EXPECT_EQ(out["extra"]["rejudged"]["previous_model_from"], in["extra"]["model_from"]);
  EXPECT_EQ(out["extra"]["rejudged"]["rule"]["id"], "fa_frozen_q_bracket_both_ends");
  EXPECT_EQ(out["extra"]["rejudged"]["rules"].size(), 8u);  // v1-v6, the two Q-bracket rules (the last current), dated
  // No outcome but agrees / disagrees / not decided anywhere in the new file.
  EXPECT_FALSE(contains(out.dump(), "explained"));
  ASSERT_EQ(out["points"].size(), in["points"].size());
  for (std::size_t i = 0; i < in["points"].size(); ++i) {
    const json &a = in["points"][i], &b = out["points"][i];
    EXPECT_EQ(b["variants"], a["variants"]);
    EXPECT_EQ(b["extra"]["measured"], a["extra"]["measured"]);
    ASSERT_TRUE(b["prediction"].is_object());
    EXPECT_TRUE(b["prediction"]["E_res_s"].is_array());
    EXPECT_TRUE(b["extra"]["judgement"]["model"].contains("result"));
    EXPECT_EQ(b["extra"]["rejudged"]["model_file"], kCalibration);
    // The hash is of the calibration's bytes the tool judged with (one read: model, target, meta, hash).
    EXPECT_EQ(b["extra"]["rejudged"]["model_fnv1a64"], fnv1a64_of(xs::test::read_file(kCalibration)));
    // The superseded line stays in the input; the new file points to it (older rules' lines say "explained").
    EXPECT_EQ(b["extra"]["rejudged"]["previous"]["agreement_at"],
              "RESULT.json points[" + std::to_string(i) + "].extra.agreement");
    EXPECT_TRUE(a["extra"]["agreement"].is_string());
    EXPECT_EQ(b["extra"]["judgement"]["rule"]["id"], "fa_frozen_q_bracket_both_ends");
    // The per-point copy in extra.fa_a2a carries the same new prediction.
    EXPECT_EQ(out["extra"]["fa_a2a"][i]["prediction"], b["prediction"]);
    EXPECT_EQ(out["extra"]["fa_a2a"][i]["agreement"], b["extra"]["agreement"]);
  }
  const auto j = s.run(kTool, "fa-result " + kResult + " --model " + kCalibration + " --out again.json --json");
  ASSERT_EQ(j.rc, 0) << j.err;
  const json report = json::parse(j.out);
  ASSERT_EQ(report["points"].size(), 5u);
  EXPECT_EQ(report["points"][0]["M"], 8192);
  EXPECT_TRUE(report["points"][0]["E_res_pred_s"].is_array());
  EXPECT_TRUE(report["points"][0]["previous_agreement"].is_string());
  EXPECT_TRUE(report["tally"]["model"].contains("not_decided"));
  // Same GPU model on both sides: no device warning.
  EXPECT_FALSE(contains(r.err, "another GPU's")) << r.err;
}

// An H100 calibration judging H200 data: judged, but loudly (the hostile-user review of 2026-12-06).
// fa-result's tallies are fa-score's on the same file and calibration, the wide-measurement and wide-interval
// counts and the interval scores included (a hostile review found them built from the result strings alone).
TEST(PredictFaResult, ItsTallyIsFaScoresOnTheSameInputs) {
  Scratch s;
  const std::string dir = std::string(XS_TEST_DATA_DIR) + "/../../results/h100/predictions-fd62b85/";
  const std::string fa = dir + "fa-a2a-host.json", cal = dir + "calibration-host-fa.json";
  const auto r = s.run(kTool, "fa-result " + fa + " --model " + cal + " --out new.json --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto f = s.run(kTool, "fa-score " + fa + " --model " + cal + " --out score.json");
  ASSERT_EQ(f.rc, 0) << f.err;
  const json tr = json::parse(r.out).at("tally");
  const json ts = json::parse(xs::test::read_file(s.path("score.json"))).at("tally");
  for (const char* who : {"model", "zero", "unhidden"})
    for (const char* key : {"agrees", "disagrees", "not_decided", "agrees_on_a_wide_measurement",
                            "disagrees_with_a_wide_interval", "interval_score_median_s", "interval_score_rows"})
      EXPECT_EQ(tr.at(who).at(key), ts.at(who).at(key)) << who << "." << key;
  EXPECT_EQ(tr.at("zero").at("agrees_on_a_wide_measurement"), 1);  // M = 65536 (the committed score file)
}

TEST(PredictFaResult, WarnsWhenTheCalibrationIsOfAnotherGpu) {
  Scratch s;
  const std::string h100 = std::string(XS_TEST_DATA_DIR) + "/../../results/h100/predictions-6c3d35e/calibration-host-fa.json";
  const auto r = s.run(kTool, "fa-result " + kResult + " --model " + h100 + " --out new.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "WARNING")) << r.err;
  EXPECT_TRUE(contains(r.err, "another GPU's")) << r.err;
  EXPECT_TRUE(contains(r.err, "H100")) << r.err;
  EXPECT_TRUE(contains(r.err, "H200")) << r.err;
  // A calibration that records no GPU name: said, not silently taken for the same GPU.
  json cal = json::parse(xs::test::read_file(h100));
  cal["meta"]["devices"][0].erase("name");
  xs::test::write_file(s.path("noname.json"), cal.dump());
  const auto u = s.run(kTool, "fa-result " + kResult + " --model noname.json --out new2.json");
  ASSERT_EQ(u.rc, 0) << u.err;
  EXPECT_TRUE(contains(u.err, "records no GPU name")) << u.err;
  EXPECT_FALSE(contains(u.err, "another GPU's")) << u.err;
}

TEST(PredictFaResult, APointOfAnotherTargetLosesTheOldCalibrationsPrediction) {
  Scratch s;
  json in = json::parse(xs::test::read_file(kResult));
  in["points"][1]["axes"]["target"] = "local";
  in["extra"]["fa_a2a"][1]["spec"]["target"] = "local";
  xs::test::write_file(s.path("in.json"), in.dump(1));
  const auto r = s.run(kTool, "fa-result in.json --model " + kCalibration + " --out new.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "target 'local', the calibration's is 'host': its prediction removed")) << r.out;
  const json out = json::parse(xs::test::read_file(s.path("new.json")));
  // The measurement stays; the old calibration's prediction does not sit under the new model_from.
  EXPECT_EQ(out["points"][1]["variants"], in["points"][1]["variants"]);
  EXPECT_EQ(out["points"][1]["extra"]["measured"], in["points"][1]["extra"]["measured"]);
  EXPECT_FALSE(out["points"][1].contains("prediction"));
  EXPECT_FALSE(out["extra"]["fa_a2a"][1].contains("prediction"));
  EXPECT_TRUE(contains(out["points"][1]["extra"]["prediction_note"].get<std::string>(), "no prediction for 'local'"));
  EXPECT_EQ(out["extra"]["rejudged"]["num_rejudged"], 4);
  EXPECT_TRUE(out["points"][0]["extra"].contains("rejudged"));
}

TEST(PredictFaResult, RefusesToOverwriteItsInput) {
  Scratch s;
  xs::test::write_file(s.path("in.json"), xs::test::read_file(kResult));
  for (const char* out : {"in.json", "./in.json", "sub/../in.json"})
    xs::test::expect_refused(s, kTool, std::string("fa-result in.json --model ") + kCalibration + " --out " + out, 2,
                             {"--out", "is the same file as the input RESULT.json", "never overwrites an input"});
  xs::test::write_file(s.path("cal.json"), xs::test::read_file(kCalibration));
  xs::test::expect_refused(s, kTool, "fa-result in.json --model cal.json --out ./cal.json", 2,
                           {"--out", "is the same file as --model"});
}

TEST(PredictFaResult, ACopyThatDoesNotMatchItsPointIsRemovedNotLeftStale) {
  Scratch s;
  json in = json::parse(xs::test::read_file(kResult));
  in["extra"]["fa_a2a"][2]["spec"]["M"] = 12345;
  xs::test::write_file(s.path("in.json"), in.dump(1));
  const auto r = s.run(kTool, "fa-result in.json --model " + kCalibration + " --out new.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const json out = json::parse(xs::test::read_file(s.path("new.json")));
  EXPECT_FALSE(out["extra"].contains("fa_a2a"));
  EXPECT_TRUE(contains(out["extra"]["rejudged"]["fa_a2a_copy"].get<std::string>(), "removed"));
  EXPECT_TRUE(out["points"][2].contains("prediction"));
}

TEST(PredictFaResult, RefusesWhatIsNotAnFaA2aResult) {
  Scratch s;
  xs::test::write_file(s.path("plain.json"), R"({"hello": 1})");
  const std::string model = " --model " + kCalibration + " --out new.json";
  xs::test::expect_refused(s, kTool, "fa-result plain.json" + model, 2,
                           {"schema", "expected a result file written by xstage-bench fa_a2a", "RESULT.json"});
  // A calibration is a result file, but without fa_a2a points.
  xs::test::expect_refused(s, kTool, "fa-result " + kCalibration + model, 2, {"has no fa_a2a points"});
  xs::test::expect_refused(s, kTool, "fa-result " + kResult + " --out new.json", 2, {"--model: required"});
  xs::test::expect_refused(s, kTool, "fa-result " + kResult + " --model " + kResult + " --out new.json", 2, {});
  // A point without what the prediction reads: the path of the missing key.
  json in = json::parse(xs::test::read_file(kResult));
  in["points"][2]["extra"]["measured"].erase("sigma_fa_s_per_kv_tile");
  xs::test::write_file(s.path("cut.json"), in.dump());
  xs::test::expect_refused(s, kTool, "fa-result cut.json" + model, 2,
                           {"points[2].extra.measured.sigma_fa_s_per_kv_tile: missing"});
}

TEST(PredictFaResult, HelpExplainsTheSubcommand) {
  const auto r = xs::test::run_tool(kTool, {"fa-result", "--help"});
  EXPECT_EQ(r.rc, 0) << r.err;
  for (const char* needle : {"RESULT.json", "--model", "--out", "extra.rejudged", "must not be RESULT.json"})
    EXPECT_TRUE(contains(r.out, needle)) << needle << "\n" << r.out;
}

}  // namespace
