// xstage GPU moe tests: fp8 quantization on the device. fp8.hpp's encoder and decoder against the hardware
// conversions over every float bit pattern and every code, and the quantize kernels bit-exact against the
// host quantization (fp8_host.hpp) on fresh random inputs, plus their argument checks.
#include <gtest/gtest.h>

#include <cuda_fp8.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "../gpu_common/sm90_environment.hpp"
#include "xs/common/error.hpp"
#include "xs/moe/reference/bf16.hpp"
#include "xs/kernels/moe/fp8.hpp"
#include "xs/moe/reference/fp8_host.hpp"
#include "xs/moe/run/moe_device.hpp"
#include "xs/kernels/moe/quantize.hpp"
#include "xs/kernels/moe/random_fill.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::moe::test {
namespace {

namespace km = xs::kernels::moe;

[[maybe_unused]] auto* const kEnv = ::testing::AddGlobalTestEnvironment(new xs::test::Sm90Environment);

TEST(E4m3Hardware, EncoderAndDecoderMatchTheHardwareOnEveryPattern) {
  DeviceBuffer result(sizeof(km::E4m3ConversionCheck));
  km::E4m3ConversionCheckArgs a;
  a.result = result.as<km::E4m3ConversionCheck>();
  km::launch_e4m3_conversion_check(a, nullptr);
  XS_CUDA_CHECK(cudaDeviceSynchronize());
  km::E4m3ConversionCheck r;
  runtime::copy_to_host(&r, result.get(), sizeof r);
  const std::uint64_t nan_patterns = 2 * ((1ull << 23) - 1);  // exponent all ones, mantissa non-zero, two signs
  EXPECT_EQ(r.nan_inputs, nan_patterns);
  EXPECT_EQ(r.encode_checked, (1ull << 32) - nan_patterns);
  EXPECT_EQ(r.encode_mismatches, 0u) << "first mismatch: float bits 0x" << std::hex << r.first_mismatch_bits
                                     << ", hardware code 0x" << r.first_mismatch_hw;
  EXPECT_EQ(r.nan_not_nan, 0u) << "a NaN input encoded as a number";
  EXPECT_EQ(r.decode_mismatches, 0u) << "first mismatching code " << r.first_decode_mismatch;
  std::printf("hardware NaN codes seen: %s%s\n", r.nan_codes_seen & 1 ? "0x7F " : "",
              r.nan_codes_seen & 2 ? "0xFF" : "");
}

// CUDA's host emulation of the conversions (cuda_fp8.hpp, compiled here without __CUDA_ARCH__) as a second
// opinion next to the hardware: every 61st float pattern and all 256 codes. (The full 2^32 sweep agreed
// when fp8.hpp was written; this keeps the test fast.)
TEST(E4m3Hardware, EncoderAndDecoderMatchCudaHostEmulation) {
  std::uint64_t checked = 0;
  for (std::uint64_t b = 0; b < (1ull << 32); b += 61) {
    const auto bits = static_cast<std::uint32_t>(b);
    float x;
    std::memcpy(&x, &bits, sizeof x);
    const auto want = static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
    ASSERT_EQ(km::float_to_e4m3(x), want) << "float bits 0x" << std::hex << bits;
    ++checked;
  }
  EXPECT_GT(checked, 70000000u);
  for (int c = 0; c < 256; ++c) {
    const float want = __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<std::uint8_t>(c), __NV_E4M3)));
    const float got = km::e4m3_to_float(static_cast<std::uint8_t>(c));
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got)) << c;
    else
      EXPECT_EQ(std::memcmp(&want, &got, sizeof got), 0) << "code " << c << ": " << got << " vs " << want;
  }
}

std::vector<std::uint16_t> fill_bf16(DeviceBuffer& b, std::uint64_t seed, float scale) {
  km::launch_fill_uniform_bf16(b.get(), b.bytes() / 2, seed, scale, nullptr);
  XS_CUDA_CHECK(cudaDeviceSynchronize());
  return runtime::download<std::uint16_t>(b);
}

// Element-by-element equality with the first difference named.
template <class T>
void expect_same(const std::vector<T>& device, const std::vector<T>& host, const char* what) {
  ASSERT_EQ(device.size(), host.size()) << what;
  std::size_t diff = 0, first = device.size();
  for (std::size_t i = 0; i < device.size(); ++i)
    if (std::memcmp(&device[i], &host[i], sizeof(T)) != 0) {
      ++diff;
      if (first == device.size()) first = i;
    }
  EXPECT_EQ(diff, 0u) << what << ": " << diff << " of " << device.size() << " differ, first at " << first << " (device "
                      << +device[first] << ", host " << +host[first] << ")";
}

class QuantizeRowsDevice : public ::testing::TestWithParam<int> {};  // group_cols

TEST_P(QuantizeRowsDevice, BitExactWithTheHostRule) {
  const int group = GetParam(), rows = 333, cols = 1024;
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  DeviceBuffer in(std::size_t(rows) * cols * 2), codes(std::size_t(rows) * cols),
      scales(std::size_t(rows) * (cols / group) * 4);
  std::vector<std::uint16_t> host_in = fill_bf16(in, seed, 2.5f);
  // Row 7 scaled down to ~1e-30 (tiny scales), group 0 of row 9 all zeros (the scale-1 rule).
  for (int c = 0; c < cols; ++c)
    host_in[std::size_t(7) * cols + c] = float_to_bf16(bf16_to_float(host_in[7 * cols + c]) * 1e-30f);
  for (int c = 0; c < group; ++c) host_in[std::size_t(9) * cols + c] = 0;
  runtime::copy_to_device(in.get(), host_in.data(), in.bytes());
  km::QuantizeRowsFp8Args a;
  a.input = in.get();
  a.output = codes.get();
  a.scales = scales.as<float>();
  a.rows = rows;
  a.cols = cols;
  a.group_cols = group;
  km::launch_quantize_rows_fp8(a, nullptr);
  XS_CUDA_CHECK(cudaDeviceSynchronize());
  const Fp8Tensor want = quantize_rows_fp8(host_in, rows, cols, group);
  expect_same(runtime::download<std::uint8_t>(codes), want.codes, "codes");
  expect_same(runtime::download<float>(scales), want.scales, "scales");
  EXPECT_EQ(want.scales[std::size_t(9) * (cols / group)], 1.0f);
}

INSTANTIATE_TEST_SUITE_P(Groups, QuantizeRowsDevice, ::testing::Values(128, 64));

TEST(QuantizeBlocksDevice, BitExactWithTheHostRule) {
  const int mats = 3, n = 384, k = 256;
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  DeviceBuffer in(std::size_t(mats) * n * k * 2), codes(std::size_t(mats) * n * k),
      scales(std::size_t(mats) * (n / 128) * (k / 128) * 4);
  std::vector<std::uint16_t> host_in = fill_bf16(in, seed, 0.1f);
  host_in[(std::size_t(2) * n + 200) * k + 131] = float_to_bf16(30.0f);  // one block with a large scale
  runtime::copy_to_device(in.get(), host_in.data(), in.bytes());
  km::QuantizeBlocksFp8Args a;
  a.input = in.get();
  a.output = codes.get();
  a.scales = scales.as<float>();
  a.num_matrices = mats;
  a.n = n;
  a.k = k;
  km::launch_quantize_blocks_fp8(a, nullptr);
  XS_CUDA_CHECK(cudaDeviceSynchronize());
  const Fp8Tensor want = quantize_blocks_fp8(host_in, mats, n, k);
  expect_same(runtime::download<std::uint8_t>(codes), want.codes, "codes");
  expect_same(runtime::download<float>(scales), want.scales, "scales");
  EXPECT_EQ(want.scales[(2 * 3 + 1) * 2 + 1], 30.0f / 448.0f);
}

std::string field_of(const auto& launch) {
  try {
    launch();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.field();
  }
  return "(no error)";
}

TEST(QuantizeArgs, RejectsBadShapesAndPointers) {
  DeviceBuffer buf(128 * 128 * 2), scales(64);
  km::QuantizeRowsFp8Args r;
  r.input = buf.get();
  r.output = buf.get();
  r.scales = scales.as<float>();
  r.rows = 2;
  r.cols = 200;  // not a multiple of 128
  EXPECT_EQ(field_of([&] { km::launch_quantize_rows_fp8(r, nullptr); }), "cols");
  r.cols = 256;
  r.group_cols = 0;
  EXPECT_EQ(field_of([&] { km::launch_quantize_rows_fp8(r, nullptr); }), "cols");
  r.group_cols = 128;
  r.scales = nullptr;
  EXPECT_EQ(field_of([&] { km::launch_quantize_rows_fp8(r, nullptr); }), "input");
  km::QuantizeBlocksFp8Args b;
  b.input = buf.get();
  b.output = buf.get();
  b.scales = scales.as<float>();
  b.num_matrices = 1;
  b.n = 100;
  b.k = 128;
  EXPECT_EQ(field_of([&] { km::launch_quantize_blocks_fp8(b, nullptr); }), "n");
  b.n = 128;
  b.k = 0;
  EXPECT_EQ(field_of([&] { km::launch_quantize_blocks_fp8(b, nullptr); }), "k");
  b.k = 128;
  b.input = static_cast<const char*>(buf.get()) + 1;  // misaligned bf16
  EXPECT_EQ(field_of([&] { km::launch_quantize_blocks_fp8(b, nullptr); }), "input");
  km::E4m3ConversionCheckArgs c;
  EXPECT_EQ(field_of([&] { km::launch_e4m3_conversion_check(c, nullptr); }), "result");
}

}  // namespace
}  // namespace xs::moe::test
