// tests/cli: the versioning rule of docs/result-schema.md in every reader. A file of a newer minor schema version
// is read where it holds only what this build knows; a key it added is refused (exit 2, nothing written) saying the
// file is of a newer schema version and naming both versions (issue 31: it was refused as "unknown key" alone).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tool_run.hpp"

namespace xs::test {
namespace {

using nlohmann::json;

const std::string kCalibration = std::string(XS_TEST_DATA_DIR) + "/model/calibration_ok.json";
const std::string kGateData = std::string(XS_TEST_DATA_DIR) + "/gate/";
const std::string kShape = " --K 148 --B 32KiB --G 2us";

json calibration() { return json::parse(read_file(kCalibration)); }

TEST(SchemaVersion, ANewerMinorCalibrationIsReadWhereItHoldsNothingNew) {
  Scratch s;
  json j = calibration();
  j["schema"]["version"] = "1.7";
  write_file(s.path("m.json"), j.dump(1));
  const ToolRun r = s.run("xstage-predict", "burst --model m.json" + kShape);
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST(SchemaVersion, AKeyOfANewerMinorIsRefusedNamingBothVersions) {
  Scratch s;
  const std::string newer = "a key of a newer schema version: the file is xstage.result 1.7, this build reads "
                            "xstage.result up to 1.0";
  json model_key = calibration();
  model_key["schema"]["version"] = "1.7";
  model_key["model"]["R_drift"] = 0.1;
  write_file(s.path("model.json"), model_key.dump(1));
  expect_refused(s, "xstage-predict", "burst --model model.json" + kShape, 2, {"model.R_drift: " + newer});
  expect_refused(s, "xstage-bench", "remote_store.periodic --backend sim --K 8 --B 16KiB --no-progress --model "
                                    "model.json --out b.json", 2, {"model.R_drift: " + newer});

  // A point's key: a calibration the simulator measured (calibration_ok.json holds no points).
  ASSERT_EQ(s.run("xstage-calibrate", "--backend sim --no-progress --config " + std::string(XS_TEST_DATA_DIR) +
                                          "/../../configs/calibrate/quick.json --out measured.json").rc, 0);
  std::filesystem::remove(s.path("measured.json.journal.jsonl"));
  json point_key = json::parse(read_file(s.path("measured.json")));
  point_key["schema"]["version"] = "1.7";
  point_key["points"][0]["spec"]["lane"] = 3;
  write_file(s.path("point.json"), point_key.dump(1));
  expect_refused(s, "xstage-predict", "burst --model point.json" + kShape, 2, {"points[0].spec.lane: " + newer});
  expect_refused(s, "xstage-calibrate", "--refit point.json --out r.json", 2, {"points[0].spec.lane: " + newer});

  json top_key = calibration();
  top_key["schema"]["version"] = "1.7";
  top_key["provenance"] = json::object();
  write_file(s.path("top.json"), top_key.dump(1));
  expect_refused(s, "xstage-predict", "burst --model top.json" + kShape, 2, {"provenance: " + newer});

  // A key unknown in a file of this build's own version is what it always was: an unknown key.
  json same = calibration();
  same["model"]["R_drift"] = 0.1;
  write_file(s.path("same.json"), same.dump(1));
  expect_refused(s, "xstage-predict", "burst --model same.json" + kShape, 2,
                 {"model.R_drift: unknown key; accepted keys here:"});
  const ToolRun r = s.run("xstage-predict", "burst --model same.json" + kShape);
  EXPECT_FALSE(contains(r.err, "newer")) << r.err;
}

TEST(SchemaVersion, GateConfigsAndJournalsFollowTheSameRule) {
  Scratch s;
  for (const char* f : {"baseline.json", "candidate_better.json"})
    write_file(s.path(f), read_file(kGateData + f));
  json gate = json::parse(read_file(kGateData + "gate.json"));
  gate["schema"]["version"] = "1.3";
  write_file(s.path("newer.json"), gate.dump(1));
  const ToolRun read = s.run("xstage-gate", "--baseline baseline.json --candidate candidate_better.json --config "
                                            "newer.json");
  EXPECT_EQ(read.rc, 0) << read.err;
  gate["retries"] = 2;
  write_file(s.path("newer.json"), gate.dump(1));
  expect_refused(s, "xstage-gate", "--baseline baseline.json --candidate candidate_better.json --config newer.json",
                 2, {"retries: a key of a newer schema version: the file is xstage.gate 1.3, this build reads "
                     "xstage.gate up to 1.0"});

  // An interrupted run's journal written by a newer build: --resume says so instead of "unknown key".
  const std::string bench = "remote_store.periodic --backend sim --K 1,2 --B 16KiB --G 0 --no-progress --out r.json";
  ASSERT_EQ(s.run("xstage-bench", bench).rc, 0);
  const std::string journal = s.path("r.json.journal.jsonl");
  std::string text = read_file(journal);
  const std::size_t newline = text.find('\n');
  json header = json::parse(text.substr(0, newline));
  header["schema"]["version"] = "1.2";
  header["host"] = "node7";
  write_file(journal, header.dump() + text.substr(newline));
  std::filesystem::remove(s.path("r.json"));
  expect_refused(s, "xstage-bench", bench + " --resume", 2,
                 {"host: a key of a newer schema version: the file is xstage.journal 1.2, this build reads "
                  "xstage.journal up to 1.0"});
}

}  // namespace
}  // namespace xs::test
