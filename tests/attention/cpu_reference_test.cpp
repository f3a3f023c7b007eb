// xstage attention unit tests: the CPU float64 reference (closed-form cases), the error comparison, the
// destination check catching wrong/unwritten/foreign elements, and the fa_a2a model predictions.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "xs/attention/reference/bf16.hpp"
#include "xs/attention/reference/cpu_reference.hpp"
#include "xs/common/error.hpp"

namespace xs::attention {
namespace {

std::vector<std::uint16_t> random_bf16(std::size_t n, std::mt19937& rng, float stddev = 1.0f) {
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) x = float_to_bf16(dist(rng));
  return v;
}

TEST(Bf16, RoundTripAndRounding) {
  for (float f : {0.0f, 1.0f, -2.5f, 3.140625f}) EXPECT_EQ(bf16_to_float(float_to_bf16(f)), f);
  EXPECT_EQ(float_to_bf16(1.0f + 1.0f / 512), float_to_bf16(1.0f));  // tie -> even
  EXPECT_TRUE(std::isnan(bf16_to_float(kBf16Poison)));
}

TEST(CpuReference, ConstantValuesGiveThatConstant) {
  // softmax weights sum to one: V constant per column -> O equals that row for every query.
  std::mt19937 rng(1);
  const int H = 2, M = 16, d = 32;
  auto q = random_bf16(H * M * d, rng, 2.0f), k = random_bf16(H * M * d, rng);
  std::vector<std::uint16_t> v(H * M * d);
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < M; ++t)
      for (int c = 0; c < d; ++c) v[(h * M + t) * d + c] = float_to_bf16(0.25f * c - h);
  const auto o = cpu_attention_reference(q, k, v, H, M, d);
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < M; ++t)
      for (int c = 0; c < d; ++c) EXPECT_NEAR(o[(h * M + t) * d + c], 0.25 * c - h, 1e-12);
}

TEST(CpuReference, DominantKeySelectsItsValue) {
  // One key aligned with a large query dominates: O ~ that key's V row.
  const int M = 8, d = 32;
  std::vector<std::uint16_t> q(M * d, float_to_bf16(0.0f)), k(M * d, float_to_bf16(0.0f)), v(M * d);
  for (int c = 0; c < d; ++c) {
    q[c] = float_to_bf16(8.0f);
    k[5 * d + c] = float_to_bf16(8.0f);
  }
  for (int t = 0; t < M; ++t)
    for (int c = 0; c < d; ++c) v[t * d + c] = float_to_bf16(static_cast<float>(t));
  const auto o = cpu_attention_reference(q, k, v, 1, M, d);
  EXPECT_NEAR(o[0], 5.0, 1e-6);
  EXPECT_NEAR(o[d], 3.5, 1e-12);  // query 1 is zero: uniform weights, mean of 0..7
}

TEST(CpuReference, RowStepMatchesFullRows) {
  std::mt19937 rng(2);
  const int H = 1, M = 12, d = 32;
  auto q = random_bf16(M * d, rng), k = random_bf16(M * d, rng), v = random_bf16(M * d, rng);
  const auto full = cpu_attention_reference(q, k, v, H, M, d, 1);
  const auto sub = cpu_attention_reference(q, k, v, H, M, d, 4);
  ASSERT_EQ(sub.size(), 3u * d);
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < d; ++c) EXPECT_DOUBLE_EQ(sub[i * d + c], full[(4 * i) * d + c]);
}

TEST(CompareSampledRows, ReportsRelativeErrorAndPoison) {
  const int H = 1, M = 4, d = 32;
  std::vector<double> ref(M * d, 1.0);
  std::vector<std::uint16_t> out(M * d, float_to_bf16(1.0f));
  EXPECT_EQ(compare_sampled_rows(out.data(), H, M, d, 1, ref.data()).rel_error, 0.0);
  out[3] = float_to_bf16(2.0f);
  const ErrorStats e = compare_sampled_rows(out.data(), H, M, d, 1, ref.data());
  EXPECT_NEAR(e.rel_error, std::sqrt(1.0 / (M * d)), 1e-12);
  EXPECT_EQ(e.worst_idx, 3u);
  out[7] = kBf16Poison;
  EXPECT_TRUE(std::isinf(compare_sampled_rows(out.data(), H, M, d, 1, ref.data()).rel_error));
  EXPECT_EQ(count_poison(out.data(), out.size()), 1u);
}

TEST(DestinationCheck, CatchesWrongUnwrittenAndForeign) {
  using xs::kernels::attention::UlyssesLayout;
  const UlyssesLayout u{8, 2, 1, 2, 1, 32};  // sender owns dst head 1 of 2
  std::mt19937 rng(3);
  const auto local = random_bf16(8 * 32, rng);
  std::vector<std::vector<std::uint16_t>> dst(2, std::vector<std::uint16_t>(u.dst_bytes_per_rank() / 2, kBf16Poison));
  for (std::uint32_t t = 0; t < 8; ++t)
    for (int c = 0; c < 32; ++c) dst[u.owner_rank(t)][u.dst_element_offset(0, t) + c] = local[t * 32 + c];
  auto ptrs = [&] { return std::vector<const std::uint16_t*>{dst[0].data(), dst[1].data()}; };
  EXPECT_TRUE(check_ulysses_destination(u, local.data(), ptrs()).ok());
  dst[1][u.dst_element_offset(0, 6) + 3] ^= 1;
  auto c = check_ulysses_destination(u, local.data(), ptrs());
  EXPECT_EQ(c.num_wrong, 1u);
  EXPECT_NE(c.first_wrong.find("token 6"), std::string::npos) << c.first_wrong;
  dst[1][u.dst_element_offset(0, 6) + 3] = kBf16Poison;
  EXPECT_EQ(check_ulysses_destination(u, local.data(), ptrs()).num_unwritten, 1u);
  dst[1][u.dst_element_offset(0, 6) + 3] = local[6 * 32 + 3];
  dst[0][0] = 0;  // head 0 belongs to another sender
  EXPECT_EQ(check_ulysses_destination(u, local.data(), ptrs()).num_foreign_written, 1u);
  EXPECT_FALSE(check_ulysses_destination(u, local.data(), ptrs()).ok());
}

// The receive side of a multi-rank exchange: every sender's block must equal the rank's own slice; a block a
// sender missed (poison) and a block with one flipped bit are both caught and the first one is named.
TEST(ReceivedBlocks, EverySendersBlockMustEqualTheOwnSlice) {
  std::mt19937 rng(11);
  const std::size_t n = 96;
  std::vector<std::uint16_t> own(n);
  for (auto& x : own) x = static_cast<std::uint16_t>(rng() & 0x7FFF);  // never the poison pattern
  std::vector<std::uint16_t> window;
  for (int s = 0; s < 4; ++s) window.insert(window.end(), own.begin(), own.end());
  EXPECT_TRUE(check_received_blocks(window.data(), 4, own.data(), n).ok());
  EXPECT_EQ(check_received_blocks(window.data(), 4, own.data(), n).num_checked, 4 * n);
  std::fill(window.begin() + 2 * n, window.begin() + 3 * n, kBf16Poison);  // sender 2 never wrote
  window[3 * n + 5] ^= 1;                                                  // sender 3 one bit off
  const DestinationCheck c = check_received_blocks(window.data(), 4, own.data(), n);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.num_unwritten, n);
  EXPECT_EQ(c.num_wrong, n + 1);
  EXPECT_NE(c.first_wrong.find("sender 2 element 0"), std::string::npos) << c.first_wrong;
}

}  // namespace
}  // namespace xs::attention
