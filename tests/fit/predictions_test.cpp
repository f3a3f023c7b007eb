// fit layer: attach_predictions never predicts from a parameter the calibration did not identify.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "xs/fit/fit.hpp"
#include "fit_helpers.hpp"

namespace xs::fit {
namespace {

nlohmann::json model_section(const char* r_bound) {
  return nlohmann::json::parse(R"({"R_Bps": 5e10, "R_ci95": [4.9e10, 5.1e10], "tiss0": [
      {"K": 33, "V_bytes": 1e5, "s": 2e-7}, {"K": 33, "V_bytes": 1e7, "s": 3e-7},
      {"K": 66, "V_bytes": 1e5, "s": 2e-7}, {"K": 66, "V_bytes": 1e7, "s": 3e-7}],
    "Q": [{"K": 33, "bytes": 1e6, "ci95": [9e5, 1.1e6], "bound": "fit"},
          {"K": 66, "bytes": null, "ci95": null, "bound": "not_identified"}],
    "R_bound": ")" + std::string(r_bound) + R"("})");
}

std::vector<PointRecord> points() {
  return {testing::exact_point(Suite::kIsolated, 33, 256 * 1024, 0, 1e-4, 0),
          testing::exact_point(Suite::kIsolated, 66, 256 * 1024, 0, 1e-4, 0),
          testing::exact_point(Suite::kPeriodic, 66, 16 * 1024, 0, 2e-5, 2.2e-5)};
}

TEST(Predictions, AnUnidentifiedQGivesItsKNoIsolatedPredictionAndNoNeighboursValue) {
  auto pts = points();
  attach_predictions(pts, model::PlatformModel::from_json(model_section("fit")));
  ASSERT_TRUE(pts[0].prediction.has_value()) << "Q(33) is identified";
  EXPECT_GT(pts[0].prediction->issue_time_s, 2e-7);
  EXPECT_FALSE(pts[1].prediction.has_value()) << "Q(66) is not identified: no prediction, not Q(33)'s";
  EXPECT_TRUE(pts[2].prediction.has_value()) << "periodic points need R and T_iss^0 only";
}

TEST(Predictions, AnUnidentifiedRPredictsNothing) {
  auto pts = points();
  for (auto& p : pts) p.prediction = Prediction{};  // a refit reads points that carry an older prediction
  attach_predictions(pts, model::PlatformModel::from_json(model_section("not_identified")));
  for (const auto& p : pts) EXPECT_FALSE(p.prediction.has_value()) << p.id;
}

}  // namespace
}  // namespace xs::fit
