// tests/fit: the gap-reach rule (fit/gap_reach.hpp) on hand-made sweeps and on every shipped calibration
// config: with the H200 host path's copy-engine rate as the bound on R, each gap sweep reaches
// plateau_gap_factor x V/R; the K = 132 sweep to 9.6 us that host-small-k.json had before issue 27 does not.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "xs/bench/sweep.hpp"
#include "xs/fit/fit.hpp"
#include "xs/fit/gap_reach.hpp"

namespace xs::fit {
namespace {

constexpr double kH200HostCopyEngineBps = 55.3e9;  // README: copy engine D2H, same runs as R = 52.3 GB/s

PointSpec periodic(int k, std::uint64_t b, double gap_s, const std::string& target = "host") {
  PointSpec s;
  s.suite = Suite::kPeriodic;
  s.target = target;
  s.num_producers = k;
  s.bytes_per_producer = b;
  s.gap_s = gap_s;
  return s;
}

TEST(GapReach, ShortSweepIsNamedWithTheGapItNeeds) {
  std::vector<PointSpec> points;
  for (int g = 0; g <= 24; ++g) points.push_back(periodic(132, 16384, 400e-9 * g));
  for (int g = 0; g <= 24; ++g) points.push_back(periodic(33, 16384, 2e-6 * g));  // to 48 us: past 1.5 x 10.1 us
  const double factor = FitOptions{}.plateau_gap_factor;
  const auto short_of = gap_sweep_shortfalls(points, kH200HostCopyEngineBps, factor);
  ASSERT_EQ(short_of.size(), 1u);
  EXPECT_EQ(short_of[0].num_producers, 132);
  EXPECT_DOUBLE_EQ(short_of[0].largest_gap_s, 9.6e-6);
  EXPECT_NEAR(short_of[0].needed_gap_s, factor * 132 * 16384 / kH200HostCopyEngineBps, 1e-12);
  const std::string text = describe_shortfalls(short_of, factor);
  EXPECT_NE(text.find("K=132 B=16384"), std::string::npos) << text;
  EXPECT_NE(text.find("needs G >= 58.6"), std::string::npos) << text;
}

TEST(GapReach, LocalControlAndZeroGapPointsAreNotGapSweeps) {
  std::vector<PointSpec> points = {periodic(132, 16384, 0), periodic(132, 16384, 1e-6, "local")};
  EXPECT_TRUE(gap_sweep_shortfalls(points, kH200HostCopyEngineBps, 1.5).empty());
}

TEST(GapReach, EveryShippedCalibrationConfigReachesThePlateauOnTheH200Host) {
  const std::filesystem::path dir = std::filesystem::path(XS_TEST_DATA_DIR) / "../../configs/calibrate";
  int num_configs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++num_configs;
    std::vector<PointSpec> specs;
    for (const auto& p : bench::expand(bench::load_sweep_config(entry.path().string()))) specs.push_back(p.spec);
    const auto short_of = gap_sweep_shortfalls(specs, kH200HostCopyEngineBps, FitOptions{}.plateau_gap_factor);
    EXPECT_TRUE(short_of.empty()) << entry.path().filename() << ": "
                                  << describe_shortfalls(short_of, FitOptions{}.plateau_gap_factor);
  }
  EXPECT_GE(num_configs, 3);
}

}  // namespace
}  // namespace xs::fit
