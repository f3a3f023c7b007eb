// xstage fit tests: the calibration file's `model` section (exact key names the model layer reads, no
// NaN) and the predictions stored beside each point (the validation tests are in validation_*_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "xs/fit/fit.hpp"
#include "fit_helpers.hpp"

namespace xs::fit {
namespace {

using namespace xs::fit::testing;

std::vector<PointRecord> noiseless_sim_sweep(sim::SimParams params) {
  params.noise = 0;
  return simulate(params, calibration_specs(SweepShape{}, params.drain_rate_bps));
}

TEST(FitJson, ModelSectionHasTheContractKeysAndNoNaN) {
  const CalibrationFit fit = fit_calibration(noiseless_sim_sweep({}));
  const nlohmann::json j = fit.to_json();
  for (const char* key : {"R_Bps", "R_ci95", "R_bound", "R_constrained", "tiss0", "Q", "fit"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_TRUE(j["R_Bps"].is_number());
  ASSERT_TRUE(j["R_ci95"].is_null() || j["R_ci95"].size() == 2u);
  ASSERT_FALSE(j["tiss0"].empty());
  for (const auto& row : j["tiss0"])
    for (const char* key : {"K", "B_bytes", "V_bytes", "s", "ci95", "constrained", "source"})
      EXPECT_TRUE(row.contains(key)) << key;
  ASSERT_EQ(j["Q"].size(), 2u);
  for (const auto& row : j["Q"]) {
    for (const char* key : {"K", "bytes", "ci95", "bound", "knee_V_bytes"}) EXPECT_TRUE(row.contains(key)) << key;
    EXPECT_TRUE(row["bound"] == "fit" || row["bound"] == "lower" || row["bound"] == "not_identified");
    EXPECT_TRUE(row["ci95"].is_null() || (row["ci95"].size() == 2u && row["ci95"][0].is_number()));
  }
  for (const char* key : {"R", "tiss0", "Q", "criteria", "bootstrap", "notes"}) EXPECT_TRUE(j["fit"].contains(key));
  // Every number finite; the values the model reads are numbers, never null.
  std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& x) {
    if (x.is_number()) {
      EXPECT_TRUE(std::isfinite(x.get<double>()));
    }
    if (x.is_structured())
      for (const auto& e : x) walk(e);
  };
  walk(j);
  for (const auto& row : j["tiss0"]) {
    EXPECT_TRUE(row["s"].is_number());
    // An interval is two numbers or null (a single point, an upper bound): never a zero-width pair.
    EXPECT_TRUE(row["ci95"].is_null() || (row["ci95"][0].is_number() && row["ci95"][1].get<double>() > row["ci95"][0].get<double>()));
  }
  for (const auto& row : j["Q"]) EXPECT_TRUE(row["bytes"].is_number());
}

TEST(FitJson, PlatformModelReadsBackTheFit) {
  const sim::SimParams params;
  const CalibrationFit fit = fit_calibration(noiseless_sim_sweep(params));
  const model::PlatformModel platform = fit.to_platform_model();
  EXPECT_DOUBLE_EQ(platform.drain_rate_bps(), fit.drain.drain_rate_bps.value);
  for (const auto& row : fit.tiss0)
    EXPECT_DOUBLE_EQ(platform.tiss0_s(row.num_producers, row.volume_bytes).value, row.issue_time_s.value);
  for (const auto& q : fit.capacity)
    EXPECT_DOUBLE_EQ(platform.capacity_bytes(q.num_producers).value, q.capacity_bytes.value);
}

TEST(FitPredictions, AttachedToEveryMeasuredPoint) {
  const sim::SimParams params;
  auto points = noiseless_sim_sweep(params);
  points[3].skipped = true;
  const model::PlatformModel platform = fit_calibration(points).to_platform_model();
  attach_predictions(points, platform);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    ASSERT_EQ(p.prediction.has_value(), !p.skipped) << i;
    if (p.skipped) continue;
    const double v = static_cast<double>(p.spec.volume_bytes());
    EXPECT_DOUBLE_EQ(p.prediction->drain_horizon_s, v / platform.drain_rate_bps());
    const double t0 = platform.tiss0_s(p.spec.num_producers, v).value;
    if (p.spec.suite == Suite::kLocalControl) {
      EXPECT_DOUBLE_EQ(p.prediction->period_s, t0 + p.spec.gap_s);
    } else if (p.spec.suite == Suite::kPeriodic) {  // eq. 2: T_period = max(T_iss^0 + G, V/R)
      EXPECT_DOUBLE_EQ(p.prediction->period_s, std::max(t0 + p.spec.gap_s, v / platform.drain_rate_bps()));
    }
  }
}

}  // namespace
}  // namespace xs::fit
