// tests/model: lookups honour the fitter's flags (issue 27 item 4). A T_iss^0 row marked unconstrained, an
// upper bound, a row whose note says so, a lower-bound or unconstrained Q, an R that is a lower bound or
// unconstrained, and any value outside the table come back with usable_as_point = false, a reason naming
// the parameter, K and V, and a bracket where the data give one.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "xs/common/error.hpp"
#include "xs/fit/calibration_file.hpp"
#include "xs/model/platform_model.hpp"

namespace m = xs::model;
using nlohmann::json;

namespace {

// K = 132 as the committed host-small-k calibration has it: a floor row at 1 MiB and the gap-sweep row at
// V = 132 x 16 KiB that stopped while still drain-limited (max_gap, 28.8 us, constrained false).
json host_small_k_like() {
  return json::parse(R"({
    "R_Bps": 52.4e9, "R_ci95": [52.0e9, 52.6e9], "R_bound": "fit", "R_constrained": true,
    "tiss0": [
      {"K": 132, "B_bytes": 4096, "V_bytes": 540672, "s": 1.08e-7, "ci95": [1.07e-7, 1.13e-7], "constrained": true, "source": "isolated_floor"},
      {"K": 132, "B_bytes": 8192, "V_bytes": 1081344, "s": 1.268e-7, "ci95": [1.267e-7, 1.297e-7], "constrained": true, "source": "isolated_floor"},
      {"K": 132, "B_bytes": 16384, "V_bytes": 2162688, "s": 2.884e-5, "ci95": null, "constrained": false, "source": "max_gap"},
      {"K": 66, "B_bytes": 8192, "V_bytes": 540672, "s": 1.27e-7, "ci95": [1.26e-7, 1.28e-7], "constrained": true, "source": "isolated_floor"},
      {"K": 66, "B_bytes": 16384, "V_bytes": 1081344, "s": 2.0e-7, "ci95": [1.9e-7, 2.1e-7], "constrained": true, "source": "plateau"}
    ],
    "Q": [{"K": 33, "bytes": 1.0e6, "ci95": [0.9e6, 1.1e6], "bound": "fit", "constrained": true},
          {"K": 66, "bytes": 1.5e6, "ci95": [1.4e6, 1.6e6], "bound": "fit", "constrained": false},
          {"K": 132, "bytes": 2.0e6, "ci95": null, "bound": "lower", "constrained": false}],
    "fit": {"tiss0": [{"K": 66, "B_bytes": 16384, "note": "V on the isolated drain branch: this plateau is T_iss^iso, capacity-limited"}]}
  })");
}

TEST(LookupFlags, UnconstrainedMaxGapRowIsOnlyAnUpperBound) {
  const auto model = m::PlatformModel::from_json(host_small_k_like());
  const m::Lookup t = model.tiss0_s(132, 2162688);
  EXPECT_DOUBLE_EQ(t.value, 2.884e-5);  // the value is kept, for callers that print it
  EXPECT_FALSE(t.usable_as_point);
  EXPECT_TRUE(t.is_upper_bound);
  EXPECT_NE(t.not_point_reason.find("T_iss^0(K=132, V=2162688 B)"), std::string::npos) << t.not_point_reason;
  EXPECT_NE(t.not_point_reason.find("max_gap"), std::string::npos) << t.not_point_reason;
  ASSERT_TRUE(t.has_bracket());
  EXPECT_DOUBLE_EQ(t.bracket_lo, 1.267e-7);  // the floor row below: T_iss^0 grows with V
  EXPECT_DOUBLE_EQ(t.bracket_hi, 2.884e-5);  // the upper bound itself
}

TEST(LookupFlags, InterpolatingTowardAnUpperBoundRowIsNoPoint) {
  const auto model = m::PlatformModel::from_json(host_small_k_like());
  const m::Lookup t = model.tiss0_s(132, 1.5e6);
  EXPECT_FALSE(t.usable_as_point);
  EXPECT_FALSE(t.is_upper_bound);  // a blend of a point and a bound bounds nothing
  EXPECT_GT(t.value, 1e-5);        // what the old lookup fed predictions as a floor
  ASSERT_TRUE(t.has_bracket());
  EXPECT_DOUBLE_EQ(t.bracket_lo, 1.267e-7);
  EXPECT_DOUBLE_EQ(t.bracket_hi, 2.884e-5);
}

TEST(LookupFlags, PointRowsArePointsWithTheirInterval) {
  const auto model = m::PlatformModel::from_json(host_small_k_like());
  const m::Lookup t = model.tiss0_s(132, 1081344);
  EXPECT_TRUE(t.usable_as_point) << t.not_point_reason;
  EXPECT_TRUE(t.not_point_reason.empty());
  EXPECT_DOUBLE_EQ(t.bracket_lo, 1.267e-7);
  EXPECT_DOUBLE_EQ(t.bracket_hi, 1.297e-7);
  const m::Lookup mid = model.tiss0_s(132, 810000);  // between two point rows: interpolated interval
  EXPECT_TRUE(mid.usable_as_point);
  EXPECT_LT(mid.bracket_lo, mid.value);
  EXPECT_GT(mid.bracket_hi, mid.value);
}

TEST(LookupFlags, ExtrapolationIsNoPoint) {
  const auto model = m::PlatformModel::from_json(host_small_k_like());
  const m::Lookup below = model.tiss0_s(132, 1000);
  EXPECT_TRUE(below.extrapolated);
  EXPECT_FALSE(below.usable_as_point);
  EXPECT_NE(below.not_point_reason.find("outside the measured V"), std::string::npos) << below.not_point_reason;
  ASSERT_TRUE(below.has_bracket());  // nothing below it, so no lower bound beyond 0
  EXPECT_EQ(below.bracket_lo, 0.0);
  EXPECT_DOUBLE_EQ(below.bracket_hi, 1.13e-7);
  const m::Lookup other_k = model.tiss0_s(264, 1081344);
  EXPECT_FALSE(other_k.usable_as_point);
  EXPECT_NE(other_k.not_point_reason.find("K lies outside"), std::string::npos) << other_k.not_point_reason;
  EXPECT_FALSE(other_k.has_bracket());
}

TEST(LookupFlags, ANoteThatSaysTissIsoMakesTheRowAnUpperBound) {
  const auto model = m::PlatformModel::from_json(host_small_k_like());
  const m::Lookup t = model.tiss0_s(66, 1081344);
  EXPECT_FALSE(t.usable_as_point);
  EXPECT_NE(t.not_point_reason.find("T_iss^iso"), std::string::npos) << t.not_point_reason;
  // The same file without the note: a point.
  json section = host_small_k_like();
  section["fit"] = json::object();
  EXPECT_TRUE(m::PlatformModel::from_json(section).tiss0_s(66, 1081344).usable_as_point);
}

TEST(LookupFlags, CapacityLowerBoundOrUnconstrainedIsNoPoint) {
  const auto model = m::PlatformModel::from_json(host_small_k_like());
  const m::Lookup q33 = model.capacity_bytes(33);
  EXPECT_TRUE(q33.usable_as_point) << q33.not_point_reason;
  EXPECT_DOUBLE_EQ(q33.bracket_lo, 0.9e6);
  const m::Lookup q66 = model.capacity_bytes(66);
  EXPECT_FALSE(q66.usable_as_point);
  EXPECT_NE(q66.not_point_reason.find("Q(K=66)"), std::string::npos);
  EXPECT_NE(q66.not_point_reason.find("unconstrained"), std::string::npos);
  const m::Lookup q132 = model.capacity_bytes(132);
  EXPECT_FALSE(q132.usable_as_point);
  EXPECT_TRUE(q132.is_lower_bound);
  ASSERT_TRUE(q132.has_bracket());
  EXPECT_GE(q132.bracket_lo, 2.0e6);  // the lower bound, no upper bound
  EXPECT_TRUE(std::isinf(q132.bracket_hi));
}

TEST(LookupFlags, DrainRateFlags) {
  json section = host_small_k_like();
  EXPECT_TRUE(m::PlatformModel::from_json(section).drain_rate().usable_as_point);
  section["R_constrained"] = false;
  section["R_caveat"] = "above the copy-engine rate";
  const m::Lookup r = m::PlatformModel::from_json(section).drain_rate();
  EXPECT_FALSE(r.usable_as_point);
  EXPECT_NE(r.not_point_reason.find("copy-engine"), std::string::npos) << r.not_point_reason;
  section["R_bound"] = "lower";
  const m::Lookup lower = m::PlatformModel::from_json(section).drain_rate();
  EXPECT_FALSE(lower.usable_as_point);
  EXPECT_TRUE(lower.is_lower_bound);
  EXPECT_TRUE(std::isinf(lower.bracket_hi));
}

TEST(LookupFlags, RoundTripKeepsTheFlags) {
  const auto model = m::PlatformModel::from_json(host_small_k_like());
  const auto again = m::PlatformModel::from_json(model.to_json());
  EXPECT_FALSE(again.tiss0_s(132, 2162688).usable_as_point);
  EXPECT_FALSE(again.tiss0_s(66, 1081344).usable_as_point);
  EXPECT_FALSE(again.capacity_bytes(66).usable_as_point);
  EXPECT_TRUE(again.tiss0_s(132, 1081344).usable_as_point);
}

TEST(LookupFlags, BadBoundIsNamed) {
  json section = host_small_k_like();
  section["tiss0"][0]["bound"] = "lower";
  EXPECT_THROW(m::PlatformModel::from_json(section), xs::Error);
}

// The committed calibration behind issue 27: its K = 132 gap sweep stopped at 9.6 us while V/R is ~41 us.
TEST(LookupFlags, CommittedHostSmallKCalibrationNoLongerGivesAFloorAt132) {
  const auto model = xs::fit::load_platform_model(std::string(XS_TEST_DATA_DIR) +
                                            "/../../results/h200/fa_a2a/3238301-bars/results/calibration-host-small-k.json");
  const m::Lookup t = model.tiss0_s(132, 132 * 16384.0);
  EXPECT_NEAR(t.value, 28.8e-6, 0.1e-6);
  EXPECT_FALSE(t.usable_as_point);
  EXPECT_TRUE(t.is_upper_bound);
  ASSERT_TRUE(t.has_bracket());
  EXPECT_LT(t.bracket_lo, 0.2e-6);  // the 8 KiB floor row: T_iss^0 is somewhere between 0.13 and 28.8 us
  EXPECT_TRUE(model.tiss0_s(132, 132 * 8192.0).usable_as_point);
}

}  // namespace
