// xstage cli tests: `xstage-predict moe-whole` on the committed single-shape check file. Its leave-one-shape-out
// reference fit has no other shape to train on; before issue 31 that was an infinite training error and the run
// failed with "NaN or inf cannot be written" (only --no-reference got through). Now the fit is written as not
// identified (null a, b and error, with the reason) and the rest of the score stands.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tool_run.hpp"

namespace xs::test {
namespace {

const std::string kRoot = std::string(XS_TEST_DATA_DIR) + "/../..";

TEST(MoeWhole, AReferenceFitWithNothingToTrainOnIsWrittenAsNotIdentified) {
  Scratch s;
  const std::string args = "moe-whole --results " + kRoot + "/results/h200/megamoe/matrix/megamoe-check.json --model " +
                           kRoot + "/results/h200/megamoe/calibration-moe-pattern.json --interference " + kRoot +
                           "/results/h100/interference-3a97dd2/calibration-loaded-host.json --out score.json";
  const ToolRun r = s.run("xstage-predict", args);
  ASSERT_EQ(r.rc, 0) << r.err;
  const nlohmann::json score = nlohmann::json::parse(read_file(s.path("score.json")));
  ASSERT_EQ(score["reference_fits"].size(), 1u) << score["reference_fits"].dump();
  const nlohmann::json& fit = score["reference_fits"][0];
  EXPECT_TRUE(fit["a"].is_null() && fit["b"].is_null() && fit["train_abs_error_median"].is_null()) << fit.dump();
  EXPECT_TRUE(contains(fit["status"].get<std::string>(), "not identified: no other shape")) << fit.dump();
  for (const auto& config : score["configs"])
    for (const auto& option : config["options"]) EXPECT_TRUE(option["transfer_reference_s"].is_null()) << option.dump();
  EXPECT_TRUE(contains(read_file(s.path("score.md")), "not identified: no other shape")) << r.out;
  EXPECT_TRUE(contains(r.out, "not identified: no other shape")) << r.out;

  // With two shapes the fit is identified as before, with finite numbers.
  Scratch t;
  const ToolRun two = t.run("xstage-predict", "moe-whole --results " + kRoot +
                                                  "/results/h200/megamoe/matrix/megamoe-bf16-6976.json --model " + kRoot +
                                                  "/results/h200/megamoe/calibration-moe-pattern.json --interference " +
                                                  kRoot + "/results/h100/interference-3a97dd2/calibration-loaded-host.json "
                                                  "--out score.json");
  ASSERT_EQ(two.rc, 0) << two.err;
  const nlohmann::json both = nlohmann::json::parse(read_file(t.path("score.json")));
  ASSERT_GE(both["reference_fits"].size(), 2u);
  for (const auto& f : both["reference_fits"]) {
    EXPECT_EQ(f["status"], "fit") << f.dump();
    EXPECT_TRUE(f["a"].is_number() && f["train_abs_error_median"].is_number()) << f.dump();
  }
}

}  // namespace
}  // namespace xs::test
