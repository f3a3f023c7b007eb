// xstage cli tests: an input list whose every entry counts (fa-score, fa-whole, moe-score, moe-whole) refuses the
// same file twice, by the same path, a symlink or a hard link (exit 2 naming both, nothing written): before
// issue 31 the duplicate was silently scored twice and doubled every tally.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tool_run.hpp"

namespace xs::test {
namespace {

const std::string kRoot = std::string(XS_TEST_DATA_DIR) + "/../..";
const std::string kFaDir = kRoot + "/results/h200/fa_a2a/3238301-bars/results";
const std::string kFa = kFaDir + "/fa-a2a-host.json";
const std::string kFaCal = kFaDir + "/calibration-host-small-k.json";
const std::string kLoaded = kRoot + "/results/h100/interference-3a97dd2/calibration-loaded-host.json";
const std::string kMoe = kRoot + "/results/h200/megamoe/matrix/megamoe-bf16-6976.json";
const std::string kMoeCal = kRoot + "/results/h200/megamoe/calibration-moe-pattern.json";

// A scratch folder with a symlink and a hard link to `file`.
void add_links(const Scratch& s, const std::string& file, const std::string& stem) {
  std::filesystem::copy_file(file, s.path(stem + ".json"));
  std::filesystem::create_symlink(s.path(stem + ".json"), s.path(stem + "-link.json"));
  std::filesystem::create_hard_link(s.path(stem + ".json"), s.path(stem + "-hard.json"));
  std::filesystem::create_directories(s.path("sub"));
}

TEST(DuplicateInputs, FaScoreRefusesAResultFileOrCalibrationTwice) {
  Scratch s;
  add_links(s, kFa, "fa");
  const std::string cal = " --model " + kFaCal + " --out score.json";
  expect_refused(s, "xstage-predict", "fa-score fa.json fa.json" + cal, 2, {"RESULT.json", "'fa.json' is given twice"});
  expect_refused(s, "xstage-predict", "fa-score fa.json fa-link.json" + cal, 2,
                 {"'fa-link.json' is the same file as 'fa.json'", "each file may be given only once"});
  expect_refused(s, "xstage-predict", "fa-score fa.json ./sub/../fa-hard.json" + cal, 2,
                 {"'./sub/../fa-hard.json' is the same file as 'fa.json'"});
  expect_refused(s, "xstage-predict", "fa-score fa.json --model " + kFaCal + " --model " + kFaCal + " --out score.json",
                 2, {"--model", "is given twice"});
  const ToolRun ok = s.run("xstage-predict", "fa-score fa.json" + cal);  // once is fine
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_TRUE(contains(ok.out, "(1 result files x 1 calibrations)")) << ok.out;
}

// moe-score (and moe-whole, through the same reader) refuses a file with no megamoe point given beside the right
// ones: it was read as nothing and still changed meta.dates (hostile-CLI review of 2026-12-08).
TEST(MoeScoreInputs, AFileWithNoMegamoePointIsRefused) {
  Scratch s;
  expect_refused(s, "xstage-predict", "moe-score --results " + kMoe + " " + kFa + " --model " + kMoeCal +
                                          " --out score.json", 2, {"holds no megamoe point", "fa_a2a"});
  expect_refused(s, "xstage-predict", "moe-score --results " + kMoe + " " + kFaCal + " --model " + kMoeCal +
                                          " --out score.json", 2, {"holds no megamoe point", "periodic"});
}

// Not a duplicate, but the same list: a file with no fa_a2a point (a MegaMoE file given by mistake) is refused, and
// a calibration of another GPU judges the rows with a warning and a per-row flag, outside the "predates" tally.
TEST(FaScoreInputs, AFileWithNoFaPointIsRefusedAndAnotherDevicesCalibrationIsSaid) {
  Scratch s;
  expect_refused(s, "xstage-predict", "fa-score " + kMoe + " --model " + kFaCal + " --out score.json", 2,
                 {"holds no fa_a2a point", "megamoe"});
  // A calibration file given as the result: its points name their suites under spec, and the hint names the
  // command that writes FA-A2A files (it named a nonexistent --suite flag and "its suites: none").
  expect_refused(s, "xstage-predict", "fa-score " + kFaCal + " --model " + kFaCal + " --out score.json", 2,
                 {"holds no fa_a2a point", "its suites: periodic", "(xstage-bench fa_a2a)"});
  const std::string h100_cal = kRoot + "/results/h100/predictions-3a97dd2/calibration-host-fa.json";
  const ToolRun r = s.run("xstage-predict", "fa-score " + kFa + " --model " + h100_cal + " --out score.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "cross-judge another device")) << r.err;
  const nlohmann::json out = nlohmann::json::parse(read_file(s.path("score.json")));
  ASSERT_FALSE(out.at("rows").empty());
  EXPECT_EQ(out.at("rows_whose_calibration_is_from_another_device"), out.at("rows").size());
  EXPECT_EQ(out.at("rows").at(0).at("calibration_from_another_device"), true);
  const nlohmann::json& t = out.at("tally_calibration_predates_data").at("model");
  EXPECT_EQ(t.at("agrees").get<int>() + t.at("disagrees").get<int>() + t.at("not_decided").get<int>(), 0);
  // A file without a device name: unknown, not "the same device": kept out of the "predates" tally too.
  nlohmann::json doc = nlohmann::json::parse(read_file(kFa));
  doc["meta"].erase("devices");
  { std::ofstream(s.path("nodev.json")) << doc.dump(); }
  const ToolRun u = s.run("xstage-predict", "fa-score nodev.json --model " + kFaCal + " --out nodev-score.json");
  ASSERT_EQ(u.rc, 0) << u.err;
  const nlohmann::json us = nlohmann::json::parse(read_file(s.path("nodev-score.json")));
  EXPECT_EQ(us.at("rows_whose_device_is_unknown"), us.at("rows").size());
  EXPECT_TRUE(us.at("rows").at(0).at("calibration_from_another_device").is_null());
  const nlohmann::json& tu = us.at("tally_calibration_predates_data").at("model");
  EXPECT_EQ(tu.at("agrees").get<int>() + tu.at("disagrees").get<int>() + tu.at("not_decided").get<int>(), 0);
  // Metadata of the wrong type is bad input (exit 2, the field named), not a library error (it was exit 3).
  nlohmann::json badname = nlohmann::json::parse(read_file(kFa));
  badname["meta"]["devices"][0]["name"] = nullptr;
  badname["meta"]["date_utc"] = 20261206;
  { std::ofstream(s.path("badmeta.json")) << badname.dump(); }
  expect_refused(s, "xstage-predict", "fa-score badmeta.json --model " + kFaCal + " --out badmeta-score.json", 2,
                 {"meta.date_utc: expected a string"});
  // The GPU measured is meta.devices[meta.device_index], not the first one listed.
  nlohmann::json second = nlohmann::json::parse(read_file(kFa));
  const nlohmann::json measured_gpu = second["meta"]["devices"][0];
  second["meta"]["devices"] = nlohmann::json::array({{{"name", "NVIDIA H100 80GB HBM3"}}, measured_gpu});
  second["meta"]["device_index"] = 1;
  { std::ofstream(s.path("second.json")) << second.dump(); }
  const ToolRun d1 = s.run("xstage-predict", "fa-score second.json --model " + kFaCal + " --out second-score.json");
  ASSERT_EQ(d1.rc, 0) << d1.err;
  EXPECT_FALSE(contains(d1.err, "another device")) << d1.err;
  EXPECT_EQ(nlohmann::json::parse(read_file(s.path("second-score.json"))).at("rows_whose_calibration_is_from_another_device"), 0);
  // Every fa_a2a point skipped: nothing to judge is refused, not scored as zero rows.
  nlohmann::json skipped = nlohmann::json::parse(read_file(kFa));
  for (auto& p : skipped["points"]) { p["status"] = "skipped"; p["reason"] = "test"; }
  { std::ofstream(s.path("skipped.json")) << skipped.dump(); }
  expect_refused(s, "xstage-predict", "fa-score skipped.json --model " + kFaCal + " --out skipped-score.json", 2,
                 {"no row to judge"});
}

// A copy (the same bytes under another path, which no path or inode check sees) is scored once, and said: before
// issue 31 its rows counted twice. The same for a copied calibration, and for a copy re-serialized with other
// whitespace (the same JSON values; an adversarial review of 2026-12-07 found it counted twice).
TEST(DuplicateInputs, FaScoreScoresACopyOnceAndSaysSo) {
  Scratch s;
  std::filesystem::copy_file(kFa, s.path("fa.json"));
  std::filesystem::copy_file(kFa, s.path("fa-copy.json"));
  std::filesystem::copy_file(kFaCal, s.path("cal.json"));
  std::filesystem::copy_file(kFaCal, s.path("cal-copy.json"));
  { std::ofstream(s.path("fa-indented.json")) << nlohmann::json::parse(read_file(kFa)).dump(2); }
  const ToolRun once = s.run("xstage-predict", "fa-score fa.json --model cal.json --out once.json");
  ASSERT_EQ(once.rc, 0) << once.err;
  const ToolRun copies =
      s.run("xstage-predict", "fa-score fa.json fa-copy.json fa-indented.json --model cal.json --model cal-copy.json --out copies.json");
  ASSERT_EQ(copies.rc, 0) << copies.err;
  EXPECT_TRUE(contains(copies.err, "xstage-predict fa-score: note: RESULT.json fa-copy.json holds the same content (the "
                                   "same JSON values) as fa.json: a copy, scored once")) << copies.err;
  EXPECT_TRUE(contains(copies.err, "note: --model cal-copy.json holds the same content (the same JSON values) as cal.json")) << copies.err;
  EXPECT_TRUE(contains(copies.out, "(1 result files x 1 calibrations)")) << copies.out;
  const nlohmann::json a = nlohmann::json::parse(read_file(s.path("once.json")));
  const nlohmann::json b = nlohmann::json::parse(read_file(s.path("copies.json")));
  EXPECT_EQ(b.at("rows").size(), a.at("rows").size());
  EXPECT_EQ(b.at("tally"), a.at("tally"));
  ASSERT_EQ(b.at("copies_left_out").size(), 3u);
  EXPECT_EQ(b.at("copies_left_out")[0].at("file"), "fa-copy.json");
  EXPECT_EQ(b.at("copies_left_out")[0].at("same_content_as"), "fa.json");
  EXPECT_EQ(b.at("copies_left_out")[1].at("file"), "fa-indented.json");
}

// An input read through a descriptor (/dev/stdin, redirected from a file) is that file: an output of the same path
// would overwrite it (a hostile review of 2026-12-07 replaced a calibration with an FA result file this way, and a
// gate candidate with CSV). Refused before anything is written, the folder unchanged.
TEST(DuplicateInputs, AnInputReadThroughStdinIsNeverOverwritten) {
  Scratch s;
  std::filesystem::copy_file(kFaCal, s.path("cal.json"));
  RunOptions from_cal;
  from_cal.stdin_path = "cal.json";
  expect_refused(s, "xstage-predict", "fa-result " + kFa + " --model /dev/stdin --out cal.json", 2,
                 {"the file behind its descriptor"}, from_cal);
  expect_refused(s, "xstage-gate",
                 "--baseline " + kFaCal + " --candidate /dev/stdin --config " + kRoot +
                     "/configs/gate/calibration.json --csv cal.json",
                 2,
                 {"the file behind its descriptor"}, from_cal);
}

TEST(DuplicateInputs, FaWholeRefusesAResultFileTwice) {
  Scratch s;
  add_links(s, kFa, "fa");
  const std::string rest = " --model " + kFaCal + " --interference " + kLoaded + " --out whole.json";
  expect_refused(s, "xstage-predict", "fa-whole fa.json fa-hard.json" + rest, 2,
                 {"'fa-hard.json' is the same file as 'fa.json'"});
  expect_refused(s, "xstage-predict", "fa-whole fa.json fa.json" + rest, 2, {"'fa.json' is given twice"});
  const ToolRun ok = s.run("xstage-predict", "fa-whole fa.json" + rest);
  EXPECT_EQ(ok.rc, 0) << ok.err;
}

// From the hostile review of 2026-12-07: a byte-identical copy under another name doubled fa-whole's every tally and
// was added to moe-score's sources; the judged file itself was taken as its own --interference ("not calibrated").
TEST(DuplicateInputs, CopiesAndNonCalibrationsAsInterferenceAreRefused) {
  Scratch s;
  std::filesystem::copy_file(kFa, s.path("fa.json"));
  std::filesystem::copy_file(kFa, s.path("fa-copy.json"));
  const std::string rest = " --model " + kFaCal + " --interference " + kLoaded + " --out whole.json";
  expect_refused(s, "xstage-predict", "fa-whole fa.json fa-copy.json" + rest, 2,
                 {"'fa-copy.json' holds the same content", "'fa.json'"});
  std::filesystem::copy_file(kMoe, s.path("moe.json"));
  std::filesystem::copy_file(kMoe, s.path("moe-copy.json"));
  expect_refused(s, "xstage-predict", "moe-score --results moe.json moe-copy.json --model " + kMoeCal + " --out m.json",
                 2, {"'moe-copy.json' holds the same content"});
  expect_refused(s, "xstage-predict", "fa-whole fa.json --model " + kFaCal + " --interference fa.json --out w.json", 2,
                 {"--interference", "not a calibration file"});
  expect_refused(s, "xstage-predict", "moe-whole --results moe.json --model " + kMoeCal +
                 " --interference moe.json --out w.json", 2, {"--interference", "not a calibration file"});
}

TEST(DuplicateInputs, MoeScoreAndMoeWholeRefuseAResultFileTwice) {
  Scratch s;
  add_links(s, kMoe, "moe");
  for (const std::string command : {"moe-score", "moe-whole"}) {
    const std::string rest = " --model " + kMoeCal + (command == "moe-whole" ? " --interference " + kLoaded : "") +
                             " --out " + command + ".json";
    expect_refused(s, "xstage-predict", command + " --results moe.json moe.json" + rest, 2,
                   {"--results", "'moe.json' is given twice"});
    expect_refused(s, "xstage-predict", command + " --results moe.json moe-link.json" + rest, 2,
                   {"'moe-link.json' is the same file as 'moe.json'"});
  }
  const ToolRun ok = s.run("xstage-predict", "moe-score --results moe.json --model " + kMoeCal + " --out score.json");
  EXPECT_EQ(ok.rc, 0) << ok.err;
}

}  // namespace
}  // namespace xs::test

namespace xs::test {
namespace {

int counted(const nlohmann::json& tally) {
  const nlohmann::json& t = tally.at("model");
  return t.at("agrees").get<int>() + t.at("disagrees").get<int>() + t.at("not_decided").get<int>();
}

// Out of sample means data measured after the current rule, judged with the calibration the run froze its
// predictions with (same bytes). The H100 call of fd62b85 (2026-12-07 01:22Z) was made after rule v6 but before
// the Q-bracket rules (2026-12-07 23:54Z, 2026-12-08 01:55Z): in-sample for the current rule, so it counts 0. The
// same file dated after the current rule (a stand-in for the next call) counts 8 with its own calibration; the same
// calibration tuned afterwards (R x0.7, or a refit that keeps the measurement's date) does not, and a refit does not
// count as predating the data either.
TEST(FaScoreInputs, OutOfSampleNeedsTheRunsOwnCalibration) {
  Scratch s;
  const std::string dir = std::string(XS_TEST_DATA_DIR) + "/../../results/h100/predictions-fd62b85";
  const std::string committed = dir + "/fa-a2a-host.json", cal = dir + "/calibration-host-fa.json";
  const ToolRun before = s.run("xstage-predict", "fa-score " + committed + " --model " + cal + " --out before.json");
  ASSERT_EQ(before.rc, 0) << before.err;
  const nlohmann::json b = nlohmann::json::parse(read_file(s.path("before.json")));
  EXPECT_EQ(counted(b.at("tally_out_of_sample")), 0) << "measured before the current rule: in-sample for it";
  EXPECT_EQ(b.at("files").at(0).at("in_sample_for_the_rule"), true);
  nlohmann::json later = nlohmann::json::parse(read_file(committed));
  later["meta"]["date_utc"] = "2026-12-08T04:00:00Z";  // after rule fa_frozen_q_bracket_both_ends (03:00Z)
  { std::ofstream(s.path("later.json")) << later.dump(); }
  const std::string fa = s.path("later.json");
  const ToolRun own = s.run("xstage-predict", "fa-score " + fa + " --model " + cal + " --out own.json");
  ASSERT_EQ(own.rc, 0) << own.err;
  const nlohmann::json o = nlohmann::json::parse(read_file(s.path("own.json")));
  EXPECT_EQ(counted(o.at("tally_out_of_sample")), 8);
  EXPECT_EQ(o.at("rows_after_the_rule_judged_with_another_calibration_than_the_runs"), 0);
  EXPECT_EQ(o.at("rows").at(0).at("calibration_is_the_runs_own"), true);

  nlohmann::json tuned = nlohmann::json::parse(read_file(cal));
  tuned["model"]["R_Bps"] = tuned["model"]["R_Bps"].get<double>() * 0.7;  // its interval with it (else refused)
  for (auto& end : tuned["model"]["R_ci95"]) end = end.get<double>() * 0.7;
  { std::ofstream(s.path("tuned.json")) << tuned.dump(); }
  nlohmann::json refit = nlohmann::json::parse(read_file(cal));
  refit["meta"]["refit"] = {{"from", "calibration-host-fa.json"}};
  { std::ofstream(s.path("refit.json")) << refit.dump(); }
  const ToolRun t = s.run("xstage-predict", "fa-score " + fa + " --model tuned.json --model refit.json --out t.json");
  ASSERT_EQ(t.rc, 0) << t.err;
  const nlohmann::json ts = nlohmann::json::parse(read_file(s.path("t.json")));
  EXPECT_EQ(counted(ts.at("tally_out_of_sample")), 0);
  EXPECT_EQ(ts.at("rows_after_the_rule_judged_with_another_calibration_than_the_runs"), 16);
  // The hand-tuned file (no refit block) still predates by its date; the refit does not.
  EXPECT_EQ(counted(ts.at("tally_calibration_predates_data")), 8);
  EXPECT_EQ(ts.at("rows_whose_calibration_is_a_refit_not_the_runs_own"), 8);
}

// A copy re-judged by fa-result carries the re-judging calibration's hash where the run's frozen prediction was: it is
// not the run's own prediction, so none of its rows is out of sample, whatever calibration scores it (adversarial
// review of 2026-12-07: a calibration measured after the data counted 8 rows out of sample this way).
TEST(FaScoreInputs, ARejudgedCopyIsNeverOutOfSample) {
  Scratch s;
  const std::string dir = std::string(XS_TEST_DATA_DIR) + "/../../results/h100/predictions-fd62b85";
  const std::string fa = dir + "/fa-a2a-host.json", cal = dir + "/calibration-host-fa.json";
  const ToolRun rj = s.run("xstage-predict", "fa-result " + fa + " --model " + cal + " --out rejudged.json");
  ASSERT_EQ(rj.rc, 0) << rj.err;
  const ToolRun sc = s.run("xstage-predict", "fa-score rejudged.json --model " + cal + " --out score.json");
  ASSERT_EQ(sc.rc, 0) << sc.err;
  EXPECT_TRUE(contains(sc.err, "re-judged by fa-result")) << sc.err;
  const nlohmann::json o = nlohmann::json::parse(read_file(s.path("score.json")));
  EXPECT_EQ(counted(o.at("tally_out_of_sample")), 0);
}


// ---- input dates: which inputs of a score predate the launches it judges, and on which GPU ----------------------

// moe-score on the committed DSv4-Flash run with its own calibration (measured the same day, before the run): every
// input predates the data, no note. The same calibration dated after the run and named for another GPU: the score
// says both (meta.dates and a stderr note; an adversarial review of 2026-12-07 found nothing said).
TEST(InputDates, MoeScoreSaysWhenTheCalibrationIsLaterOrOfAnotherGpu) {
  Scratch s;
  const std::string run_file = kRoot + "/results/h200/megamoe/megamoe-dsv4_flash-bn128.json";
  const ToolRun own = s.run("xstage-predict", "moe-score --results " + run_file + " --model " + kMoeCal +
                                                  " --out own.json");
  ASSERT_EQ(own.rc, 0) << own.err;
  EXPECT_EQ(own.err.find("note:"), std::string::npos) << own.err;
  const nlohmann::json a = nlohmann::json::parse(read_file(s.path("own.json")));
  EXPECT_EQ(a["meta"]["dates"]["model"]["predates_data"], true) << a["meta"]["dates"].dump();
  EXPECT_EQ(a["meta"]["dates"]["every_input_predates_data"], true);

  nlohmann::json cal = nlohmann::json::parse(read_file(kMoeCal));
  cal["meta"]["date_utc"] = "2026-12-06T00:00:00Z";
  cal["meta"]["devices"][0]["name"] = "NVIDIA H100 80GB HBM3";
  { std::ofstream(s.path("late.json")) << cal.dump(); }
  const ToolRun late = s.run("xstage-predict", "moe-score --results " + run_file + " --model late.json --out late-score.json");
  ASSERT_EQ(late.rc, 0) << late.err;
  EXPECT_TRUE(contains(late.err, "in-sample")) << late.err;
  EXPECT_TRUE(contains(late.err, "another GPU")) << late.err;
  const nlohmann::json b = nlohmann::json::parse(read_file(s.path("late-score.json")));
  EXPECT_EQ(b["meta"]["dates"]["model"]["predates_data"], false);
  EXPECT_EQ(b["meta"]["dates"]["model"]["same_device_as_data"], false);
}

// A refit keeps its measurement's date but its parameters exist only since the fit: moe-score counts it as
// predating the run only where meta.refit.date_utc (written by xstage-calibrate --refit) does; a refit without
// that date (older files) is not counted (fa-score's rule, which moe-score lacked until 2026-12-07).
TEST(InputDates, ARefitPredatesOnlyWhereItsFitDoes) {
  Scratch s;
  const std::string run_file = kRoot + "/results/h200/megamoe/megamoe-dsv4_flash-bn128.json";
  auto model_dates = [&](const nlohmann::json& refit, const std::string& stem) {
    nlohmann::json cal = nlohmann::json::parse(read_file(kMoeCal));
    cal["meta"]["refit"] = refit;
    { std::ofstream(s.path(stem + ".json")) << cal.dump(); }
    const ToolRun r = s.run("xstage-predict", "moe-score --results " + run_file + " --model " + stem + ".json --out " +
                                                  stem + "-score.json");
    EXPECT_EQ(r.rc, 0) << r.err;
    if (r.rc != 0) return nlohmann::json();
    return nlohmann::json::parse(read_file(s.path(stem + "-score.json")))["meta"]["dates"];
  };
  const nlohmann::json undated = model_dates({{"from", "calibration.json"}}, "undated");
  EXPECT_EQ(undated["model"]["predates_data"], false) << undated.dump();
  EXPECT_TRUE(undated["model"]["refit_date_utc"].is_null());
  EXPECT_EQ(undated["every_input_predates_data"], false);
  const nlohmann::json later = model_dates({{"from", "calibration.json"}, {"date_utc", "2026-12-07T00:00:00Z"}}, "later");
  EXPECT_EQ(later["model"]["predates_data"], false) << later.dump();
  const nlohmann::json before = model_dates({{"from", "calibration.json"}, {"date_utc", "2026-12-01T18:00:00Z"}}, "early");
  EXPECT_EQ(before["model"]["predates_data"], true) << before.dump();
  EXPECT_EQ(before["model"]["refit_date_utc"], "2026-12-01T18:00:00Z");
}

// From the adversarial review of 2026-12-07: a simulator calibration (meta.devices empty) passed as one of the judged
// GPU's; a judged file without a date was dropped when finding the earliest, so a later input still "predated" the
// data; a refit dated before its own measurement was trusted.
TEST(InputDates, SimulatorInputsUndatedDataAndImpossibleRefitDatesAreNotOutOfSample) {
  Scratch s;
  const std::string run_file = kRoot + "/results/h200/megamoe/megamoe-dsv4_flash-bn128.json";
  auto dates_of = [&](const nlohmann::json& cal, const std::string& results, const std::string& stem) {
    { std::ofstream(s.path(stem + ".json")) << cal.dump(); }
    const ToolRun r = s.run("xstage-predict", "moe-score --results " + results + " --model " + stem + ".json --out " +
                                                  stem + "-score.json");
    EXPECT_EQ(r.rc, 0) << r.err;
    if (r.rc != 0) return nlohmann::json();
    return nlohmann::json::parse(read_file(s.path(stem + "-score.json")))["meta"]["dates"];
  };
  const nlohmann::json cal = nlohmann::json::parse(read_file(kMoeCal));
  nlohmann::json sim = cal;
  sim["meta"]["backend"] = "sim";
  sim["meta"]["devices"] = nlohmann::json::array();
  const nlohmann::json a = dates_of(sim, run_file, "sim");
  EXPECT_EQ(a["model"]["same_device_as_data"], false) << a.dump();
  EXPECT_EQ(a["model"]["device"], "simulator");
  EXPECT_EQ(a["every_input_from_the_judged_device"], false);

  nlohmann::json undated = nlohmann::json::parse(read_file(run_file));
  undated["meta"].erase("date_utc");
  { std::ofstream(s.path("undated-run.json")) << undated.dump(); }
  const nlohmann::json b = dates_of(cal, run_file + " undated-run.json", "undated");
  EXPECT_TRUE(b["earliest_judged_result_utc"].is_null()) << b.dump();
  EXPECT_EQ(b["model"]["predates_data"], false);
  EXPECT_EQ(b["every_input_predates_data"], false);

  nlohmann::json early_fit = cal;
  early_fit["meta"]["refit"] = {{"from", "calibration.json"}, {"date_utc", "2026-11-30T00:00:00Z"}};
  const nlohmann::json c = dates_of(early_fit, run_file, "early-fit");
  EXPECT_EQ(c["model"]["predates_data"], false) << c.dump();
  EXPECT_TRUE(c["model"]["refit_date_utc"].is_null());
}

// moe-whole replays the drain at R: a calibration whose R is only a lower bound or unconstrained is refused naming the
// field, not scored as a point (adversarial review of 2026-12-07: both scored identically to the fitted R).
TEST(MoeWholeInputs, RefusesAnRThatIsNotAFittedValue) {
  Scratch s;
  nlohmann::json lower = nlohmann::json::parse(read_file(kMoeCal));
  lower["model"]["R_bound"] = "lower";
  lower["model"]["R_ci95"] = nullptr;
  { std::ofstream(s.path("lower.json")) << lower.dump(); }
  nlohmann::json loose = nlohmann::json::parse(read_file(kMoeCal));
  loose["model"]["R_constrained"] = false;
  { std::ofstream(s.path("loose.json")) << loose.dump(); }
  const std::string rest = " --interference " + kLoaded + " --out whole.json";
  expect_refused(s, "xstage-predict", "moe-whole --results " + kMoe + " --model lower.json" + rest, 2,
                 {"--model", "R_bound", "lower"});
  expect_refused(s, "xstage-predict", "moe-whole --results " + kMoe + " --model loose.json" + rest, 2,
                 {"--model", "R_constrained"});
}

}  // namespace
}  // namespace xs::test
