// xstage fit tests: the calibration file's `model` section (exact key names the model layer reads, no
// NaN), the validation section, and the predictions stored beside each point.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "fit/fit.hpp"
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

TEST(FitValidation, FixedParametersPredictTheNoiselessSweep) {
  const sim::SimParams params;
  auto points = noiseless_sim_sweep(params);
  const CalibrationFit fit = fit_calibration(points);
  const model::PlatformModel platform = fit.to_platform_model();
  const Validation v = validate(points, platform);
  EXPECT_EQ(v.num_periodic, 70);
  EXPECT_EQ(v.num_isolated, 46);
  // The model is exact for the simulator's fluid path in steady state. The (132, 32 KiB) gap sweep fills
  // X-Stage within its warm-up; the (33, 16 KiB) one does not at short gaps (Q / (V - R T_iss^0) = 17
  // bursts > 12), where the measured T_iss stays below eq. 3's drain branch, so it is not asserted.
  for (const auto& row : v.rows) {
    if (row.suite == Suite::kPeriodic && row.num_producers == 132 && row.gap_s > 0) {
      EXPECT_LT(row.issue_rel_err, 0.01) << "point " << row.point_index << " G=" << row.gap_s;
      EXPECT_LT(row.period_rel_err, 0.01) << "point " << row.point_index << " G=" << row.gap_s;
    }
    if (row.suite == Suite::kIsolated) {
      EXPECT_LT(row.issue_rel_err, 0.02) << "point " << row.point_index << " K=" << row.num_producers
                                         << " B=" << row.bytes_per_producer;
    }
  }
  EXPECT_LT(v.issue_median_rel_err, 0.01);
  EXPECT_LT(v.period_median_rel_err, 0.01);
  EXPECT_LT(v.isolated_p90_rel_err, 0.02);

  const nlohmann::json j = v.to_json();
  ASSERT_EQ(j["rows"].size(), v.rows.size());
  for (const auto& row : j["rows"]) EXPECT_EQ(row.size(), j["columns"].size());
  EXPECT_TRUE(j["isolated_p90_rel_err"].is_number());
}

TEST(FitValidation, EmptyKindsAreNullNotNaN) {
  const sim::SimParams params;
  auto points = noiseless_sim_sweep(params);
  const model::PlatformModel platform = fit_calibration(points).to_platform_model();
  std::vector<PointRecord> periodic_only;
  for (auto& p : points)
    if (p.spec.suite == Suite::kPeriodic) periodic_only.push_back(p);
  const nlohmann::json j = validate(periodic_only, platform).to_json();
  EXPECT_TRUE(j["isolated_median_rel_err"].is_null());
  EXPECT_TRUE(j["issue_median_rel_err"].is_number());
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
