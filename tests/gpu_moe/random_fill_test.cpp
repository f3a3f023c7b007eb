// xstage GPU moe tests: the seeded uniform bf16 fill (bounds, spread, reproducibility) and the 16-bit
// pattern fill used to poison destinations.
#include <gtest/gtest.h>

#include <cmath>

#include "moe_test_problem.hpp"

namespace xs::moe::test {
namespace {

namespace km = xs::kernels::moe;

TEST(MoeRandomFill, UniformWithinScaleSpreadAndReproducible) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr std::size_t kCount = 1 << 20;
  constexpr float kScale = 0.25f;
  DeviceBuffer a(kCount * 2), b(kCount * 2), c(kCount * 2);
  km::launch_fill_uniform_bf16(a.get(), kCount, seed, kScale, nullptr);
  km::launch_fill_uniform_bf16(b.get(), kCount, seed, kScale, nullptr);
  km::launch_fill_uniform_bf16(c.get(), kCount, seed + 1, kScale, nullptr);
  const auto ha = runtime::download<std::uint16_t>(a), hb = runtime::download<std::uint16_t>(b),
             hc = runtime::download<std::uint16_t>(c);
  EXPECT_EQ(ha, hb) << "same seed, different values";
  std::size_t same_as_other_seed = 0, zeros = 0;
  double sum = 0, sum2 = 0, lo = 1, hi = -1;
  for (std::size_t i = 0; i < kCount; ++i) {
    const double v = bf16_to_float(ha[i]);
    same_as_other_seed += ha[i] == hc[i];
    zeros += v == 0.0;
    sum += v;
    sum2 += v * v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -kScale);
  EXPECT_LE(hi, kScale);
  EXPECT_LT(lo, -0.99 * kScale);
  EXPECT_GT(hi, 0.99 * kScale);
  // Uniform on [-s, s]: mean 0 (standard error s / sqrt(3n) ~ 1.4e-4 here), variance s^2 / 3.
  EXPECT_NEAR(sum / kCount, 0.0, 2e-3);
  EXPECT_NEAR(sum2 / kCount, kScale * kScale / 3, 0.01 * kScale * kScale);
  EXPECT_LT(zeros, kCount / 1000);
  EXPECT_LT(same_as_other_seed, kCount / 50) << "seed + 1 repeats the fill";
}

TEST(MoeRandomFill, PatternFillsEveryElementAndNothingBeyond) {
  constexpr std::size_t kCount = 100003;  // not a multiple of the block
  DeviceBuffer buf((kCount + 8) * 2);
  km::launch_fill_bits16(buf.get(), kCount + 8, 0x0000, nullptr);
  km::launch_fill_bits16(buf.get(), kCount, 0xABCD, nullptr);
  const auto h = runtime::download<std::uint16_t>(buf);
  for (std::size_t i = 0; i < kCount; ++i) ASSERT_EQ(h[i], 0xABCD) << "element " << i;
  for (std::size_t i = kCount; i < h.size(); ++i) ASSERT_EQ(h[i], 0x0000) << "element " << i << " past the count";
}

TEST(MoeRandomFill, RejectsBadScale) {
  DeviceBuffer buf(64);
  EXPECT_THROW(km::launch_fill_uniform_bf16(buf.get(), 32, 1, 0.0f, nullptr), Error);
  EXPECT_THROW(km::launch_fill_uniform_bf16(buf.get(), 32, 1, NAN, nullptr), Error);
  EXPECT_THROW(km::launch_fill_uniform_bf16(nullptr, 32, 1, 1.0f, nullptr), Error);
}

}  // namespace
}  // namespace xs::moe::test
