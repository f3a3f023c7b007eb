// Tests for attention/fa_report: measured quantities (eq. 21), predictions only for the calibrated target,
// and the agreement verdict against the 2% full-hiding threshold.
#include "attention/fa_report.hpp"

#include <gtest/gtest.h>

namespace xs::attention {
namespace {

FaA2aPointResult measured(double t_fa_s, double t_fused_s, double t_serial_s) {
  FaA2aPointResult r;
  r.num_ctas = 132;
  r.num_tiles = 512;
  r.t_fa.median_s = t_fa_s;
  r.t_fused.median_s = t_fused_s;
  r.t_serial.median_s = t_serial_s;
  r.t_cc.median_s = t_fused_s * 1.1;
  r.sigma_s_per_kv_tile = 0.79e-6;
  r.e_res_paired.median_s = t_fused_s - t_fa_s;
  r.e_cc_paired.median_s = r.t_cc.median_s - t_fa_s;
  r.verified = true;
  return r;
}

FaA2aPointSpec spec_for(const std::string& target) {
  FaA2aPointSpec s;
  s.seq_len = 8192;
  s.target = target;
  return s;
}

TEST(FaReport, MeasuredQuantitiesFollowEq21) {
  const auto j = fa_point_json(spec_for("host"), measured(85.4e-6, 99.4e-6, 140.9e-6), std::nullopt, "");
  EXPECT_NEAR(j["measured"]["H"].get<double>(), 0.748, 0.001);  // the paper's FA4 M=8192 column
  EXPECT_NEAR(j["measured"]["speedup"].get<double>(), 1.417, 0.001);
  EXPECT_NEAR(j["measured"]["E_res_s"].get<double>(), 14.0e-6, 1e-9);
  EXPECT_FALSE(j.contains("prediction"));
}

TEST(FaReport, PredictsOnlyForTheCalibratedTarget) {
  const auto platform = model::PlatformModel::constant(717e9, 0.76e-6, 4.25 * 1048576);
  const auto host = fa_point_json(spec_for("host"), measured(85.4e-6, 85.5e-6, 140.9e-6), platform, "host");
  ASSERT_TRUE(host.contains("prediction"));
  // The paper's audit (section 4.3): V = 148 x 32 KiB is below Q at K = 148; here K = 132, still below.
  EXPECT_TRUE(host["prediction"]["capacity_bound_ok"].get<bool>());
  EXPECT_EQ(host["prediction"]["verdict"], "piggyback");
  EXPECT_NE(host["agreement"].get<std::string>().find("agrees"), std::string::npos);
  const auto local = fa_point_json(spec_for("local"), measured(85.4e-6, 85.5e-6, 140.9e-6), platform, "host");
  EXPECT_FALSE(local.contains("prediction"));
  EXPECT_TRUE(local.contains("prediction_note"));
}

TEST(FaReport, FlagsAResidualThePiggybackVerdictDoesNotExplain) {
  const auto platform = model::PlatformModel::constant(717e9, 0.76e-6, 4.25 * 1048576);
  const auto j = fa_point_json(spec_for("host"), measured(85.4e-6, 99.4e-6, 140.9e-6), platform, "");
  EXPECT_EQ(j["prediction"]["verdict"], "piggyback");
  EXPECT_NE(j["agreement"].get<std::string>().find("DISAGREES"), std::string::npos);
}

TEST(FaReport, CapacityViolationGivesAnAlignedCaseExposure) {
  // Q below the aligned burst (132 x 32 KiB = 4.1 MiB): each of the N_t waves waits (V - Q)/R - T_iss^0.
  const auto platform = model::PlatformModel::constant(52e9, 0.19e-6, 2.0 * 1048576);
  const auto j = fa_point_json(spec_for("host"), measured(415e-6, 659e-6, 760e-6), platform, "host");
  EXPECT_FALSE(j["prediction"]["capacity_bound_ok"].get<bool>());
  EXPECT_EQ(j["prediction"]["verdict"], "reshape");
  const double v = 132.0 * 32768, q = 2.0 * 1048576;
  const double waves = j["prediction"]["N_t"].get<double>();
  EXPECT_NEAR(j["prediction"]["E_cap_aligned_s"].get<double>(), waves * ((v - q) / 52e9 - 0.19e-6), 1e-9);
}

TEST(FaReport, AnUnidentifiedQLeavesTheCapacityBoundUndecided) {
  // The H200 case: Q(132) not identified. No neighbour's Q and no "met by default": the verdict waits.
  const auto platform = model::PlatformModel::from_json(nlohmann::json::parse(R"({"R_Bps": 52e9,
      "tiss0": [{"K": 132, "V_bytes": 2162688, "s": 2.2e-7}],
      "Q": [{"K": 66, "bytes": 2e6, "bound": "fit"}, {"K": 132, "bytes": null, "bound": "not_identified"}]})"));
  FaA2aPointSpec spec = spec_for("host");
  spec.seq_len = 16384;  // G_Qloop = 128 x 0.79 us = 101 us > G* = 4.1 MiB / 52 GB/s = 83 us: rate bound holds
  const auto j = fa_point_json(spec, measured(1650e-6, 2032e-6, 2310e-6), platform, "host");
  EXPECT_TRUE(j["prediction"]["rate_bound_ok"].get<bool>());
  EXPECT_TRUE(j["prediction"]["capacity_bound_ok"].is_null());
  EXPECT_TRUE(j["prediction"]["Q_bytes"].is_null());
  EXPECT_TRUE(j["prediction"]["E_cap_aligned_s"].is_null());
  EXPECT_EQ(j["prediction"]["verdict"], "undecided");
  EXPECT_NE(j["agreement"].get<std::string>().find("not identified"), std::string::npos) << j["agreement"];
  std::FILE* sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  EXPECT_NO_THROW(print_fa_table({j}, sink));  // the table prints "-" for what was not predicted
  std::fclose(sink);
}

}  // namespace
}  // namespace xs::attention
