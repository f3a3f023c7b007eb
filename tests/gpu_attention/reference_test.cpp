// xstage GPU attention tests: the simple GPU reference against the CPU float64 reference on small
// shapes with fresh random inputs (the oracle the wgmma kernel is then checked against).
#include <gtest/gtest.h>

#include <cmath>

#include "xs/attention/reference/cpu_reference.hpp"
#include "xs/attention/run/fa_device.hpp"
#include "../gpu_common/sm90_environment.hpp"

namespace xs::attention {
namespace {

[[maybe_unused]] auto* const kEnv = ::testing::AddGlobalTestEnvironment(new xs::test::Sm90Environment);

struct Shape {
  int heads, seq_len, head_dim, row_step;
  float q_stddev;
};

class GpuReference : public ::testing::TestWithParam<Shape> {};

TEST_P(GpuReference, MatchesCpuFloat64) {
  const Shape sh = GetParam();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const FaProblem p(sh.heads, sh.seq_len, sh.head_dim, seed, sh.q_stddev);
  const auto gpu = run_gpu_reference(p, sh.row_step, nullptr);
  const auto cpu = cpu_attention_reference(p.download(p.q), p.download(p.k), p.download(p.v), sh.heads, sh.seq_len,
                                           sh.head_dim, sh.row_step);
  ASSERT_EQ(gpu.size(), cpu.size());
  double err2 = 0, ref2 = 0, worst = 0;
  std::size_t worst_i = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    const double d = gpu[i] - cpu[i];
    err2 += d * d;
    ref2 += cpu[i] * cpu[i];
    if (std::fabs(d) > worst) {
      worst = std::fabs(d);
      worst_i = i;
    }
  }
  const double rel = std::sqrt(err2 / ref2);
  EXPECT_LE(rel, 1e-5) << "worst element " << worst_i << ": gpu " << gpu[worst_i] << " cpu " << cpu[worst_i];
  EXPECT_LE(worst, 1e-4 + 1e-4 * std::fabs(cpu[worst_i]));
}

INSTANTIATE_TEST_SUITE_P(Small, GpuReference,
                         ::testing::Values(Shape{1, 128, 128, 1, 1.0f}, Shape{2, 256, 128, 3, 3.0f},
                                           Shape{3, 200, 64, 7, 1.0f}, Shape{1, 512, 128, 5, 1.0f}));

}  // namespace
}  // namespace xs::attention
