// xstage cli tests: xstage-gate refuses a calibration whose drain rate is not a rate (R <= 0, or not a number)
// in the baseline or the candidate, with exit 2 naming the file and the field. Before issue 31 it gated such a
// value like any other: two files with R = -1 passed.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tool_run.hpp"

namespace xs::test {
namespace {

const std::string kConfig = std::string(XS_TEST_DATA_DIR) + "/../../configs/gate/calibration-model.json";

TEST(GateRate, ADrainRateAtOrBelowZeroIsRefused) {
  Scratch s;
  ASSERT_EQ(s.run("xstage-calibrate", "--backend sim --no-progress --out base.json").rc, 0);
  const nlohmann::json base = nlohmann::json::parse(read_file(s.path("base.json")));
  ASSERT_EQ(base["model"]["R_bound"], "fit");
  const auto variant = [&](const std::string& name, const std::string& key, const nlohmann::json& value) {
    nlohmann::json doc = base;
    doc["model"][key] = value;
    write_file(s.path(name), doc.dump());
  };
  variant("negative.json", "R_Bps", -1);
  variant("zero.json", "R_Bps", 0);
  variant("null.json", "R_Bps", nullptr);
  variant("text.json", "R_Bps", "717 GB/s");
  nlohmann::json ci = base["model"]["R_ci95"];
  ci[0] = -5e9;
  variant("ci.json", "R_ci95", ci);
  for (const std::string bad : {"negative.json", "zero.json", "null.json", "text.json"}) {
    expect_refused(s, "xstage-gate", "--baseline base.json --candidate " + bad + " --config " + kConfig, 2,
                   {"model.R_Bps: --candidate " + bad + " holds", "must be a finite number of bytes per second > 0"});
    expect_refused(s, "xstage-gate", "--baseline " + bad + " --candidate base.json --config " + kConfig, 2,
                   {"model.R_Bps: --baseline " + bad + " holds"});
  }
  expect_refused(s, "xstage-gate", "--baseline ci.json --candidate ci.json --config " + kConfig, 2,
                 {"model.R_ci95[0]: --baseline ci.json holds -5"});
  // A rate the fitter did not identify may be null: compared by its status (fit -> not identified fails the
  // gate, exit 1), not refused.
  nlohmann::json unidentified = base;
  unidentified["model"]["R_bound"] = "not_identified";
  unidentified["model"]["R_Bps"] = nullptr;
  unidentified["model"]["R_ci95"] = nullptr;
  write_file(s.path("unidentified.json"), unidentified.dump());
  const ToolRun r = s.run("xstage-gate", "--baseline base.json --candidate unidentified.json --config " + kConfig);
  EXPECT_EQ(r.rc, 1) << r.err << r.out;
  EXPECT_EQ(s.run("xstage-gate", "--baseline base.json --candidate base.json --config " + kConfig).rc, 0);
}

}  // namespace
}  // namespace xs::test
