// xstage moe unit tests: the e4m3 format of src/xs/kernels/moe/fp8.hpp (all 256 codes, encode against a brute-force
// nearest search over a sweep of float patterns, ties, saturation, NaN), the host quantization rule and
// the accuracy measure (fp8_host.hpp), and the float64 fp8 reference against a naive computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "xs/common/error.hpp"
#include "xs/moe/reference/bf16.hpp"
#include "xs/moe/reference/cpu_reference.hpp"
#include "xs/kernels/moe/fp8.hpp"
#include "xs/moe/reference/fp8_host.hpp"
#include "xs/moe/point/problem.hpp"
#include "xs/moe/point/routing.hpp"

namespace xs::moe {
namespace {

namespace km = xs::kernels::moe;

float from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// The 127 non-negative finite e4m3 values by code 0x00..0x7E, from the format's definition written out.
std::vector<double> positive_values() {
  std::vector<double> v;
  for (int m = 0; m < 8; ++m) v.push_back(m / 512.0);  // subnormals m 2^-9
  for (int e = 1; e < 16; ++e)
    for (int m = 0; m < 8; ++m)
      if (!(e == 15 && m == 7)) v.push_back((1.0 + m / 8.0) * std::ldexp(1.0, e - 7));
  return v;
}

// Nearest code by search (ties to the even code), saturating; independent of the encoder under test.
std::uint8_t nearest_code(double x) {
  static const std::vector<double> values = positive_values();
  const double a = std::fabs(x);
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
  if (a >= values.back()) return static_cast<std::uint8_t>(sign | 0x7E);
  const auto hi = static_cast<int>(std::upper_bound(values.begin(), values.end(), a) - values.begin());
  const int lo = hi - 1;  // values[lo] <= a < values[hi]
  const double dlo = a - values[lo], dhi = values[hi] - a;
  const int code = dlo < dhi ? lo : dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi);
  return static_cast<std::uint8_t>(sign | code);
}

TEST(E4m3, DecodesAll256CodesByTheFormatDefinition) {
  const std::vector<double> values = positive_values();
  ASSERT_EQ(values.size(), 127u);
  for (int c = 0; c < 256; ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    const float f = km::e4m3_to_float(code);
    if ((c & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(f)) << c;
      EXPECT_TRUE(km::e4m3_is_nan(code));
      continue;
    }
    EXPECT_FALSE(km::e4m3_is_nan(code));
    const double want = (c & 0x80 ? -1.0 : 1.0) * values[c & 0x7F];
    EXPECT_EQ(double(f), want) << "code " << c;
    EXPECT_EQ(std::signbit(f), (c & 0x80) != 0) << "code " << c;  // also -0 for 0x80
  }
  EXPECT_EQ(km::e4m3_to_float(0x38), 1.0f);
  EXPECT_EQ(km::e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(km::e4m3_to_float(0x01), 0x1p-9f);
  EXPECT_EQ(km::e4m3_to_float(0x08), 0x1p-6f);
  EXPECT_EQ(km::e4m3_to_float(0xFE), -448.0f);
}

TEST(E4m3, EncodingEveryDecodedValueGivesItsCodeBack) {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F) continue;
    EXPECT_EQ(km::float_to_e4m3(km::e4m3_to_float(static_cast<std::uint8_t>(c))), c) << "code " << c;
  }
}

TEST(E4m3, EncodesToTheNearestValueOverASweepOfFloatPatterns) {
  // Every 257th float bit pattern (16.7M patterns, all binades and signs), NaNs excluded.
  std::uint64_t checked = 0;
  for (std::uint64_t bits = 0; bits < (1ull << 32); bits += 257) {
    const float x = from_bits(static_cast<std::uint32_t>(bits));
    if (std::isnan(x)) continue;
    ASSERT_EQ(km::float_to_e4m3(x), nearest_code(x)) << "x = " << x << " (bits " << bits << ")";
    ++checked;
  }
  EXPECT_GT(checked, 16000000u);
}

TEST(E4m3, TiesGoToTheEvenCodeAndNeighboursOfTiesToTheNearer) {
  const std::vector<double> values = positive_values();
  for (std::size_t i = 0; i + 1 < values.size(); ++i) {
    const float mid = static_cast<float>((values[i] + values[i + 1]) / 2);  // exact: few significant bits
    ASSERT_EQ(double(mid), (values[i] + values[i + 1]) / 2);
    const std::uint8_t even = static_cast<std::uint8_t>(i % 2 == 0 ? i : i + 1);
    EXPECT_EQ(km::float_to_e4m3(mid), even) << "tie between codes " << i << " and " << i + 1;
    EXPECT_EQ(km::float_to_e4m3(-mid), 0x80 | even);
    EXPECT_EQ(km::float_to_e4m3(std::nextafter(mid, 0.0f)), i) << "just below the tie " << mid;
    EXPECT_EQ(km::float_to_e4m3(std::nextafter(mid, 1000.0f)), i + 1) << "just above the tie " << mid;
  }
  EXPECT_EQ(km::float_to_e4m3(0x1p-10f), 0x00);  // half the smallest subnormal: tie to 0
  EXPECT_EQ(km::float_to_e4m3(-0x1p-10f), 0x80);  // keeps the sign
  EXPECT_EQ(km::float_to_e4m3(1e-30f), 0x00);
  EXPECT_EQ(km::float_to_e4m3(-1e-30f), 0x80);
  EXPECT_EQ(km::float_to_e4m3(0.0f), 0x00);
  EXPECT_EQ(km::float_to_e4m3(-0.0f), 0x80);
}

TEST(E4m3, SaturatesAt448AndMapsNanToTheCanonicalNan) {
  for (float x : {448.0f, 449.0f, 464.0f, 479.0f, 480.0f, 1e6f, 3e38f, std::numeric_limits<float>::infinity()}) {
    EXPECT_EQ(km::float_to_e4m3(x), 0x7E) << x;
    EXPECT_EQ(km::float_to_e4m3(-x), 0xFE) << -x;
  }
  EXPECT_EQ(km::float_to_e4m3(432.0f), 0x7E);  // tie between 416 (0x7D) and 448 (0x7E): even
  EXPECT_EQ(km::float_to_e4m3(431.0f), 0x7D);
  EXPECT_EQ(km::float_to_e4m3(440.0f), 0x7E);
  EXPECT_EQ(km::float_to_e4m3(std::numeric_limits<float>::quiet_NaN()), km::kE4m3NanCode);
  EXPECT_EQ(km::float_to_e4m3(-std::numeric_limits<float>::quiet_NaN()), km::kE4m3NanCode);
  EXPECT_EQ(km::float_to_e4m3(std::numeric_limits<float>::signaling_NaN()), km::kE4m3NanCode);
  EXPECT_EQ(km::float_to_e4m3(from_bits(0xFF800001u)), km::kE4m3NanCode);
}

TEST(E4m3, DoubleEncoderAgreesOnFloatsAndRoundsOnceOtherwise) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<std::uint32_t> pattern;
  for (int i = 0; i < 200000; ++i) {
    const float x = from_bits(pattern(rng));
    if (std::isnan(x)) continue;
    ASSERT_EQ(double_to_e4m3(x), km::float_to_e4m3(x)) << x;
  }
  // Just above the tie 1 + 2^-4 between 1 (0x38) and 1.125 (0x39): a float loses the tail (back to the tie,
  // then to even 0x38); rounding once from double goes up.
  const double above_tie = 1.0 + 0x1p-4 + 0x1p-40;
  EXPECT_EQ(double_to_e4m3(above_tie), 0x39);
  EXPECT_EQ(km::float_to_e4m3(static_cast<float>(above_tie)), 0x38);
  EXPECT_EQ(double_to_e4m3(1e300), 0x7E);
  EXPECT_EQ(double_to_e4m3(-1e-300), 0x80);
  EXPECT_EQ(double_to_e4m3(std::nan("")), km::kE4m3NanCode);
}

std::vector<std::uint16_t> random_bf16(std::size_t n, std::mt19937& rng, float stddev) {
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) {
    do x = float_to_bf16(dist(rng));
    while (bf16_to_float(x) == 0.0f);  // never zeros
  }
  return v;
}

TEST(Fp8Quantize, RowGroupsUseAmaxOver448AndRoundEachElementToNearest) {
  std::mt19937 rng(21);
  const int rows = 5, cols = 384, group = 128;
  std::vector<std::uint16_t> in = random_bf16(std::size_t(rows) * cols, rng, 3.0f);
  for (int c = 128; c < 256; ++c) in[std::size_t(2) * cols + c] = 0;  // row 2, group 1: all zeros
  const Fp8Tensor q = quantize_rows_fp8(in, rows, cols, group);
  ASSERT_EQ(q.scales.size(), std::size_t(rows) * 3);
  for (int r = 0; r < rows; ++r)
    for (int g = 0; g < 3; ++g) {
      float amax = 0;
      for (int c = g * group; c < (g + 1) * group; ++c)
        amax = std::max(amax, std::fabs(bf16_to_float(in[r * cols + c])));
      const float s = q.scales[r * 3 + g];
      if (amax == 0) {
        EXPECT_EQ(s, 1.0f);
      } else {
        EXPECT_EQ(s, amax / 448.0f);
      }
      bool max_code_seen = amax == 0;
      for (int c = g * group; c < (g + 1) * group; ++c) {
        const float v = bf16_to_float(in[r * cols + c]);
        const std::uint8_t code = q.codes[r * cols + c];
        EXPECT_EQ(code, nearest_code(double(v / s))) << r << "/" << c;
        max_code_seen |= (code & 0x7F) == 0x7E;
      }
      EXPECT_TRUE(max_code_seen) << "the group's largest element maps to +-448";
    }
  const std::vector<double> back = dequantize_rows_fp8(q, rows, cols, group);
  for (std::size_t i = 0; i < back.size(); ++i) {  // half an e4m3 step: 2^-4 relative, 2^-10 s absolute
    const double v = bf16_to_float(in[i]);
    EXPECT_LE(std::fabs(back[i] - v), std::fabs(v) / 16 + q.scales[i / group] * 0x1p-10 + 1e-30) << i;
  }
  EXPECT_THROW(quantize_rows_fp8(in, rows, 300, 128), Error);   // cols not a multiple of the group
  EXPECT_THROW(quantize_rows_fp8(in, rows + 1, cols, 128), Error);  // size mismatch
}

TEST(Fp8Quantize, BlocksGetOneScaleEach) {
  std::mt19937 rng(22);
  const int mats = 2, n = 256, k = 384;
  std::vector<std::uint16_t> in = random_bf16(std::size_t(mats) * n * k, rng, 0.05f);
  // Plant a large element in matrix 1, block (1, 2): only that block's scale changes to 100 / 448.
  in[(std::size_t(1) * n + 130) * k + 300] = float_to_bf16(100.0f);
  const Fp8Tensor q = quantize_blocks_fp8(in, mats, n, k);
  ASSERT_EQ(q.scales.size(), std::size_t(mats) * 2 * 3);
  for (std::size_t b = 0; b < q.scales.size(); ++b) {
    if (b == (1 * 2 + 1) * 3 + 2)
      EXPECT_EQ(q.scales[b], 100.0f / 448.0f);
    else
      EXPECT_LT(q.scales[b], 0.5f / 448.0f) << "block " << b;
    EXPECT_GT(q.scales[b], 0.0f);
  }
  EXPECT_EQ(q.codes[(std::size_t(1) * n + 130) * k + 300], 0x7E);
  const std::vector<double> back = dequantize_blocks_fp8(q, mats, n, k);
  for (std::size_t i = 0; i < back.size(); ++i) {  // half an e4m3 step of the element's own block scale
    const std::size_t m = i / (std::size_t(n) * k), row = i / k % n, col = i % k;
    const float s = q.scales[(m * 2 + row / 128) * 3 + col / 128];
    const double v = bf16_to_float(in[i]);
    ASSERT_LE(std::fabs(back[i] - v), std::fabs(v) / 16 + s * 0x1p-10) << i;
  }
  EXPECT_THROW(quantize_blocks_fp8(in, mats, n, 200), Error);
}

TEST(Fp8Accuracy, RelativeDifferenceMeasure) {
  const std::vector<double> x = {1.0, -2.0, 3.0, 0.5};
  std::vector<double> y = x;
  EXPECT_EQ(relative_difference(x, y), 0.0);
  for (double& v : y) v = -v;
  EXPECT_DOUBLE_EQ(relative_difference(x, y), 2.0);
  EXPECT_DOUBLE_EQ(relative_difference(x, std::vector<double>(4, 0.0)), 1.0);
  // |x - y|^2 / (|x|^2 + |y|^2) for y = x (1 + e): e^2 / (2 + 2e + e^2).
  const double e = 1e-3;
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * (1 + e);
  EXPECT_NEAR(relative_difference(x, y), e * e / (2 + 2 * e + e * e), 1e-15);
  EXPECT_EQ(relative_difference(std::vector<double>(3, 0.0), std::vector<double>(3, 0.0)), 0.0);
  EXPECT_THROW(relative_difference(x, std::vector<double>(3, 1.0)), Error);
  EXPECT_EQ(km::relative_difference_from_sums(2.0, 1.0, 4.0), 1.0 - 4.0 / 5.0);
}

// ---- the float64 fp8 reference ---------------------------------------------------------------------------

struct Fp8Case {
  Routing routing;
  MoeProblem problem;
  std::vector<std::uint16_t> arrival, w1, w2;  // bf16
  Fp8Operands ops;
};

Fp8Case make_fp8_case(std::uint64_t seed, int hidden = 256, int inter = 128) {
  RoutingParams rp;
  rp.num_ranks = 4;
  rp.tokens_per_rank = 24;
  rp.num_experts = 8;
  rp.top_k = 3;
  rp.zipf_alpha = 0.5;
  rp.seed = seed;
  Fp8Case c{generate_routing(rp), {}, {}, {}, {}, {}};
  c.problem = build_problem(c.routing, hidden, inter);
  std::mt19937 rng(static_cast<unsigned>(seed));
  const int e = c.problem.num_local_experts, arrivals = c.problem.num_arrivals();
  c.arrival = random_bf16(std::size_t(arrivals) * hidden, rng, 1.0f);
  c.w1 = random_bf16(std::size_t(e) * 2 * inter * hidden, rng, 1.0f / std::sqrt(float(hidden)));
  c.w2 = random_bf16(std::size_t(e) * hidden * inter, rng, 1.0f / std::sqrt(float(inter)));
  c.ops.arrival = quantize_rows_fp8(c.arrival, arrivals, hidden);
  c.ops.w1 = quantize_blocks_fp8(c.w1, e, 2 * inter, hidden);
  c.ops.w2 = quantize_blocks_fp8(c.w2, e, hidden, inter);
  return c;
}

// Straight from the routing and the contract's layouts, with its own indexing of every scale and the
// nearest-code search for the activation.
struct NaiveRow {
  std::vector<double> out;
  std::vector<std::uint8_t> act_codes;
  std::vector<float> act_scales;
};
NaiveRow naive_fp8_row(const Fp8Case& c, int src, int token, int k) {
  const MoeProblem& p = c.problem;
  const int h = p.hidden, inter = p.intermediate;
  int arrival = -1;
  for (int a = 0; a < p.num_arrivals(); ++a)
    if (p.arrival_src_rank[a] == src && p.arrival_token[a] == token) arrival = a;
  EXPECT_GE(arrival, 0);
  const std::size_t e = c.routing.expert(src, token, k) - p.first_expert;
  const double weight = c.routing.weight(src, token, k);
  const auto x = [&](int i) {
    return double(km::e4m3_to_float(c.ops.arrival.codes[std::size_t(arrival) * h + i])) *
           c.ops.arrival.scales[std::size_t(arrival) * (h / 128) + i / 128];
  };
  const auto w1 = [&](int n, int i) {
    return double(km::e4m3_to_float(c.ops.w1.codes[(e * 2 * inter + n) * h + i])) *
           c.ops.w1.scales[(e * (2 * inter / 128) + n / 128) * (h / 128) + i / 128];
  };
  const auto w2 = [&](int col, int j) {
    return double(km::e4m3_to_float(c.ops.w2.codes[(e * h + col) * inter + j])) *
           c.ops.w2.scales[(e * (h / 128) + col / 128) * (inter / 128) + j / 128];
  };
  std::vector<double> a(inter), act(inter);
  for (int j = 0; j < inter; ++j) {
    double gate = 0, up = 0;
    for (int i = 0; i < h; ++i) {
      gate += x(i) * w1(2 * j, i);
      up += x(i) * w1(2 * j + 1, i);
    }
    a[j] = gate / (1.0 + std::exp(-gate)) * up * weight;
  }
  NaiveRow row;
  for (int g = 0; g < inter / 64; ++g) {
    double amax = 0;
    for (int j = 64 * g; j < 64 * g + 64; ++j) amax = std::max(amax, std::fabs(a[j]));
    const double s = amax > 0 ? amax / 448 : 1.0;
    row.act_scales.push_back(static_cast<float>(s));
    for (int j = 64 * g; j < 64 * g + 64; ++j) {
      row.act_codes.push_back(nearest_code(a[j] / s));
      act[j] = double(km::e4m3_to_float(row.act_codes.back())) * double(static_cast<float>(s));
    }
  }
  row.out.assign(h, 0.0);
  for (int col = 0; col < h; ++col)
    for (int j = 0; j < inter; ++j) row.out[col] += act[j] * w2(col, j);
  return row;
}

TEST(MoeCpuReferenceFp8, MatchesANaiveComputationFromTheRouting) {
  const Fp8Case c = make_fp8_case(31);
  const MoeReferenceFp8 ref = cpu_moe_reference_fp8(c.problem, c.ops);
  const MoeProblem& p = c.problem;
  const int h = p.hidden, inter = p.intermediate;
  const std::uint64_t rows = p.num_pool_rows();
  std::vector<int> pool_row_of(std::size_t(p.num_ranks) * p.slots_per_rank(), -1);
  for (std::uint64_t r = 0; r < rows; ++r)
    if (p.pool_arrival[r] >= 0)
      pool_row_of[std::size_t(p.pool_dst_rank[r]) * p.slots_per_rank() + p.pool_dst_slot[r]] = int(r);
  int checked = 0;
  double max_abs = 0;
  for (int src = 0; src < p.num_ranks; ++src)
    for (int t = 0; t < p.tokens_per_rank; ++t)
      for (int k = 0; k < p.top_k; ++k) {
        if (c.routing.rank_of_expert(c.routing.expert(src, t, k)) != p.emulated_rank) continue;
        const NaiveRow want = naive_fp8_row(c, src, t, k);
        const int slot = t * p.top_k + k;
        const int row = pool_row_of[std::size_t(src) * p.slots_per_rank() + slot];
        ASSERT_GE(row, 0);
        for (int j = 0; j < inter; ++j) ASSERT_EQ(ref.act_e4m3[std::size_t(row) * inter + j], want.act_codes[j]) << j;
        for (int g = 0; g < inter / 64; ++g) ASSERT_EQ(ref.act_scale[std::size_t(g) * rows + row], want.act_scales[g]);
        for (int col = 0; col < h; ++col) {
          const double got = ref.combine[src][std::size_t(slot) * h + col];
          ASSERT_NEAR(got, want.out[col], 1e-12 * (1 + std::abs(want.out[col]))) << "rank " << src << " slot " << slot;
          ASSERT_EQ(ref.combine_bf16[src][std::size_t(slot) * h + col], double_to_bf16(got));
          max_abs = std::max(max_abs, std::abs(want.out[col]));
        }
        ++checked;
      }
  EXPECT_EQ(checked, static_cast<int>(p.num_received_pairs));
  EXPECT_GT(max_abs, 0.01) << "outputs are not degenerate";
  for (std::uint64_t r = 0; r < rows; ++r) {
    if (p.pool_arrival[r] >= 0) continue;
    for (int j = 0; j < inter; ++j) ASSERT_EQ(ref.act_e4m3[r * inter + j], 0u) << "padding row " << r;
    for (int g = 0; g < inter / 64; ++g) ASSERT_EQ(ref.act_scale[std::size_t(g) * rows + r], 1.0f);
  }
}

// The quantized path approximates the bf16 one: e4m3 keeps 4 significant bits (relative rounding error
// rms ~2.5%), four quantized operands on the path give a relative difference of a few 1e-3; a wrong
// scale index or an inverted scale gives O(1). Also not zero: the quantization happened.
TEST(MoeCpuReferenceFp8, ApproximatesTheBf16PathWithinQuantizationError) {
  const Fp8Case c = make_fp8_case(32);
  const MoeReferenceFp8 fp8 = cpu_moe_reference_fp8(c.problem, c.ops);
  const MoeReference bf16 = cpu_moe_reference(c.problem, c.arrival, c.w1, c.w2);
  std::vector<double> x, y;
  for (int r = 0; r < c.problem.num_ranks; ++r)
    for (std::size_t i = 0; i < fp8.combine[r].size(); ++i) {
      ASSERT_EQ(std::isnan(fp8.combine[r][i]), std::isnan(bf16.combine[r][i]));
      if (std::isnan(fp8.combine[r][i])) continue;
      x.push_back(fp8.combine[r][i]);
      y.push_back(bf16.combine[r][i]);
    }
  ASSERT_GT(x.size(), 1000u);
  const double diff = relative_difference(x, y);
  std::printf("fp8 vs bf16 reference: relative difference %.3e over %zu elements\n", diff, x.size());
  EXPECT_LT(diff, 1e-2);
  EXPECT_GT(diff, 1e-5);
}

TEST(MoeCpuReferenceFp8, RejectsMismatchedOperands) {
  const Fp8Case c = make_fp8_case(33);
  const auto field_of = [&](Fp8Operands ops) {
    try {
      cpu_moe_reference_fp8(c.problem, ops);
    } catch (const Error& e) {
      return e.field();
    }
    return std::string("(no error)");
  };
  Fp8Operands o = c.ops;
  o.w1.scales.pop_back();
  EXPECT_EQ(field_of(o), "w1_scale");
  o = c.ops;
  o.arrival.codes.pop_back();
  EXPECT_EQ(field_of(o), "arrival");
  o = c.ops;
  o.w2.scales.push_back(1.0f);
  EXPECT_EQ(field_of(o), "w2_scale");
  const MoeProblem small = build_problem(c.routing, 256, 64);  // I not a multiple of 128
  EXPECT_THROW(cpu_moe_reference_fp8(small, c.ops), Error);
}

}  // namespace
}  // namespace xs::moe
