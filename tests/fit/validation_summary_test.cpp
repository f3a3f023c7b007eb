// xstage fit tests: the calibration file's validation section as bench::analyse_calibration writes it
// (held-out and in-sample kept apart, split recorded, no pre-held-out keys) and the printed summary's labels.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "xs/bench/calibration.hpp"
#include "fit_helpers.hpp"

namespace xs::fit {
namespace {

using namespace xs::fit::testing;

report::ResultFile analysed_sim_calibration() {
  sim::SimParams params;
  params.noise = 0.02;  // some scatter, so held-out and in-sample differ
  report::ResultFile file;
  file.points = simulate(params, calibration_specs(SweepShape{}, params.drain_rate_bps));
  bench::analyse_calibration(file, std::nullopt);
  return file;
}

TEST(CalibrationValidation, HeldOutAndInSampleAreSeparateSections) {
  const report::ResultFile file = analysed_sim_calibration();
  const nlohmann::json& v = file.validation;
  for (const char* key : {"held_out", "in_sample", "regime_boundaries"}) EXPECT_TRUE(v.contains(key)) << key;
  for (const char* old_key : {"issue_median_rel_err", "period_median_rel_err", "isolated_median_rel_err", "rows"})
    EXPECT_FALSE(v.contains(old_key)) << old_key;
  const nlohmann::json& h = v["held_out"];
  EXPECT_EQ(h["k"], 5);
  EXPECT_TRUE(h["rule"].is_string());
  ASSERT_EQ(h["fold_of_point"].size(), file.points.size());
  int num_in_split = 0;
  for (std::size_t i = 0; i < file.points.size(); ++i) {
    const int f = h["fold_of_point"][i].get<int>();
    EXPECT_EQ(f >= 0, file.points[i].spec.suite != Suite::kLocalControl) << i;
    num_in_split += f >= 0 ? 1 : 0;
  }
  EXPECT_EQ(h["num_points"], num_in_split);
  EXPECT_EQ(h["rows"].size(), static_cast<std::size_t>(num_in_split));
  EXPECT_EQ(h["folds"].size(), 5u);
  for (const char* regime : {"drain_limited", "transition", "plateau", "isolated"}) {
    EXPECT_TRUE(h["regimes"].contains(regime)) << regime;
    EXPECT_TRUE(v["in_sample"]["regimes"].contains(regime)) << regime;
    EXPECT_EQ(h["regimes"][regime]["num_points"], v["in_sample"]["regimes"][regime]["num_points"]) << regime;
  }
  EXPECT_FALSE(v["in_sample"].contains("rows"));  // per-point in-sample values are points[*].prediction
  // Refitting without a point changes its prediction: with noisy data the held-out and in-sample
  // isolated errors cannot coincide.
  EXPECT_NE(h["regimes"]["isolated"]["issue_median_rel_err"], v["in_sample"]["regimes"]["isolated"]["issue_median_rel_err"]);
}

TEST(CalibrationValidation, SummaryPrintsHeldOutTableAndLabelledInSampleLine) {
  const report::ResultFile file = analysed_sim_calibration();
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  bench::print_calibration_summary(file, f);
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text.push_back(static_cast<char>(c));
  std::fclose(f);
  const auto at = [&](const std::string& s) { return text.find(s); };
  ASSERT_NE(at("HELD-OUT (5-fold cross-validation"), std::string::npos) << text;
  ASSERT_NE(at("in-sample residuals (full fit on its own points; NOT a validation)"), std::string::npos) << text;
  // Regimes in curve order, the table before the in-sample line.
  EXPECT_LT(at("    drain_limited"), at("    transition"));
  EXPECT_LT(at("    transition"), at("    plateau"));
  EXPECT_LT(at("    plateau"), at("    isolated"));
  EXPECT_LT(at("    isolated"), at("in-sample residuals"));
}

}  // namespace
}  // namespace xs::fit
