// xstage moe unit tests: the clock check that decides whether a megamoe point is re-run: spread between the
// variants' instrumented clocks, the floor against the peak, and a point without instrumentation.
#include <gtest/gtest.h>

#include "xs/moe/run/point_clocks.hpp"

namespace xs::moe {
namespace {

MoePointResult with_clocks(std::initializer_list<double> hz) {
  MoePointResult r;
  int i = 0;
  for (double c : hz) {
    VariantResult v;
    v.name = i++ == 0 ? "expert_wave" : "interleaved";
    v.tiles.sm_clock_hz = c;
    r.variants.push_back(v);
  }
  return r;
}

TEST(PointClocks, CloseClocksAboveTheFloorAreFine) {
  const PointClocks c = check_point_clocks(with_clocks({1.80e9, 1.77e9}), 1.98e9, 0.03, 0.75);
  EXPECT_TRUE(c.rerun_reason.empty()) << c.rerun_reason;
  EXPECT_NEAR(c.record.at("spread").get<double>(), 0.03 / 1.80, 1e-12);
  EXPECT_DOUBLE_EQ(c.record.at("sm_clock_hz").at("interleaved").get<double>(), 1.77e9);
  EXPECT_NEAR(c.record.at("min_fraction_of_peak").get<double>(), 1.77 / 1.98, 1e-12);
}

TEST(PointClocks, SpreadBetweenVariantsAsksForARerun) {
  const PointClocks c = check_point_clocks(with_clocks({1.80e9, 1.70e9}), 1.98e9, 0.03, 0.75);
  EXPECT_NE(c.rerun_reason.find("differ by 5.6%"), std::string::npos) << c.rerun_reason;
}

TEST(PointClocks, ClockBelowTheFloorAsksForARerun) {
  const PointClocks c = check_point_clocks(with_clocks({1.40e9, 1.40e9}), 1.98e9, 0.03, 0.75);
  EXPECT_NE(c.rerun_reason.find("1.400 GHz < 75%"), std::string::npos) << c.rerun_reason;
  // A floor of 0 never asks.
  EXPECT_TRUE(check_point_clocks(with_clocks({1.40e9, 1.40e9}), 1.98e9, 0.03, 0.0).rerun_reason.empty());
}

TEST(PointClocks, WithoutInstrumentationNothingIsMeasuredAndNothingRerun) {
  const PointClocks c = check_point_clocks(with_clocks({0.0, 0.0}), 1.98e9, 0.03, 0.75);
  EXPECT_TRUE(c.rerun_reason.empty());
  EXPECT_TRUE(c.record.at("sm_clock_hz").empty());
  EXPECT_TRUE(c.record.at("min_fraction_of_peak").is_null());
  EXPECT_EQ(c.record.at("measured"), "not measured (--no-instrument)");
}

}  // namespace
}  // namespace xs::moe
