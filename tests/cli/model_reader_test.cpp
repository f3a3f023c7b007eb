// tests/cli: one strict reader for calibration files everywhere (xstage-predict --model, xstage-bench
// --model, xstage-calibrate --refit): duplicate keys, unknown keys in the model section and its rows,
// invalid points, 1e999 are exit 2 naming the field, with no file created or changed; what the fitter
// writes (null intervals, "not_identified" bounds) is read as documented.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tool_run.hpp"

namespace {

using namespace xs::test;
using nlohmann::json;

const std::string kGood = std::string(XS_TEST_DATA_DIR) + "/model/calibration_ok.json";
const std::string kShape = " --K 148 --B 32KiB --G 2us";

json good() { return json::parse(read_file(kGood)); }

// Each malformed model: predict and bench refuse it with exit 2 naming `needle`, writing nothing.
void expect_model_refused(const std::string& text, const std::vector<std::string>& needles) {
  Scratch s;
  write_file(s.path("m.json"), text);
  expect_refused(s, "xstage-predict", "burst --model m.json" + kShape, 2, needles);
  expect_refused(s, "xstage-bench",
                 "remote_store.periodic --backend sim --K 8 --B 16KiB --no-progress --model m.json --out b.json", 2,
                 needles);
}

TEST(ModelReader, DuplicateKeysAreRefused) {
  std::string text = good().dump(1);
  const auto at = text.find("\"R_Bps\"");
  text.insert(at, "\"R_Bps\": 1e9, ");
  expect_model_refused(text, {"m.json", "duplicate key \"R_Bps\""});
}

TEST(ModelReader, UnknownKeysInTheModelAndItsRowsAreRefused) {
  json j = good();
  j["model"]["R_bps"] = 1e9;  // a typo must not pass
  expect_model_refused(j.dump(), {"model.R_bps", "unknown key"});
  j = good();
  j["model"]["tiss0"][0]["seconds"] = 1e-6;
  expect_model_refused(j.dump(), {"model.tiss0[0].seconds", "unknown key"});
  j = good();
  j["model"]["Q"][1]["Bytes"] = 1;
  expect_model_refused(j.dump(), {"model.Q[1].Bytes", "unknown key"});
  j = good();
  j["surprise"] = 1;
  expect_model_refused(j.dump(), {"surprise", "unknown key"});
}

TEST(ModelReader, InvalidPointsAreRefused) {
  json j = good();
  j["points"] = json::array({json{{"id", "remote_store.periodic.host"}}});
  expect_model_refused(j.dump(), {"points[0]"});
}

TEST(ModelReader, OverflowingNumbersAreExitTwoNotThree) {
  std::string text = good().dump(1);
  const auto at = text.find("717000000000.0");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 14, "1e999");
  expect_model_refused(text, {"m.json"});
}

TEST(ModelReader, FitterOutputWithNullIntervalsAndBoundsIsRead) {
  Scratch s;
  json j = good();
  j["model"]["R_ci95"] = nullptr;
  j["model"]["R_bound"] = "lower";
  j["model"]["R_constrained"] = false;
  j["model"]["Q"][1]["ci95"] = nullptr;
  j["model"]["Q"][1]["knee_V_bytes"] = 4e6;
  j["model"]["fit"] = {{"anything", {1, 2, {{"free", "form"}}}}};
  write_file(s.path("m.json"), j.dump());
  const ToolRun r = s.run("xstage-predict", "burst --model m.json --json" + kShape);
  ASSERT_EQ(r.rc, 0) << r.err;
  const json out = json::parse(r.out);
  // R is only a lower bound: no prediction reads it as a point (issue 27); it is the bracket [717 GB/s, +inf).
  EXPECT_EQ(out["point_prediction"], false) << r.out;
  EXPECT_NE(out["not_point"].get<std::string>().find("R is a lower bound"), std::string::npos) << r.out;
  EXPECT_TRUE(out["R_Bps"].is_null()) << r.out;
  EXPECT_EQ(out["R_Bps_bracket"][0], 717e9) << r.out;
  EXPECT_TRUE(out["R_Bps_bracket"][1].is_null()) << r.out;
  EXPECT_EQ(out["R_Bps_bracket_hi_unbounded"], true) << r.out;
  EXPECT_EQ(out["Q_bytes"], 4456296) << r.out;
}

TEST(ModelReader, QRowsNotIdentifiedAreLeftOutOfInterpolation) {
  Scratch s;
  json j = good();
  // K=148 not identified: a lookup at 148 falls back to the nearest identified K (8, a lower bound).
  j["model"]["Q"][1] = {{"K", 148}, {"bytes", nullptr}, {"ci95", nullptr}, {"bound", "not_identified"}};
  write_file(s.path("m.json"), j.dump());
  ToolRun r = s.run("xstage-predict", "burst --model m.json --json" + kShape);
  ASSERT_EQ(r.rc, 0) << r.err;
  json out = json::parse(r.out);
  // A lower bound, extrapolated to K = 148: a bracket from it, never the point 1 MiB (issue 27).
  EXPECT_TRUE(out["Q_bytes"].is_null()) << r.out;
  EXPECT_EQ(out["Q_bytes_bracket"][0], 1048576) << r.out;
  EXPECT_EQ(out["Q_extrapolated"], true);
  EXPECT_EQ(out["Q_is_lower_bound"], true);
  // No Q identified at all: burst needs Q, so it asks for --Q.
  j["model"]["Q"][0] = {{"K", 8}, {"bytes", nullptr}, {"ci95", nullptr}, {"bound", "not_identified"}};
  write_file(s.path("m.json"), j.dump());
  expect_refused(s, "xstage-predict", "burst --model m.json" + kShape, 2, {"--Q", "Q(K) not identified by this calibration"});
  r = s.run("xstage-predict", "burst --model m.json --Q 4MiB --json" + kShape);
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST(ModelReader, RNotIdentifiedCannotPredict) {
  json j = good();
  j["model"]["R_bound"] = "not_identified";
  j["model"]["R_Bps"] = nullptr;
  j["model"]["R_ci95"] = nullptr;
  expect_model_refused(j.dump(), {"R not identified by this calibration"});
}

TEST(ModelReader, RefitRefusesDuplicatePointsAndLeavesTheFileAlone) {
  Scratch s;
  ToolRun r = s.run("xstage-calibrate", "--backend sim --no-progress --only zero_gap,isolated --out c.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(read_file(s.path("c.json")));
  j["points"].push_back(j["points"][0]);
  write_file(s.path("c.json"), j.dump(1));
  expect_refused(s, "xstage-calibrate", "--refit c.json --out d.json", 2, {"points[", "duplicate point"});
  expect_refused(s, "xstage-predict", "burst --model c.json" + kShape, 2, {"duplicate point"});
}

TEST(ModelReader, RefitOfAGoodFileWritesOneCopyOfEachPoint) {
  Scratch s;
  ToolRun r = s.run("xstage-calibrate", "--backend sim --no-progress --only zero_gap,isolated --out c.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  r = s.run("xstage-calibrate", "--refit c.json --out d.json --bootstrap 50");
  ASSERT_EQ(r.rc, 0) << r.err;
  const json a = json::parse(read_file(s.path("c.json"))), b = json::parse(read_file(s.path("d.json")));
  EXPECT_EQ(a["points"].size(), b["points"].size());
  r = s.run("xstage-predict", "burst --model d.json" + kShape);
  EXPECT_EQ(r.rc, 0) << r.err;
}

}  // namespace
