// xstage kernels layer (moe): the e4m3 (OCP FP8 E4M3, "fn": no inf) number format of the fp8 W8A8 path,
// host and device. Decode, and an encode that is bit-exact with PTX cvt.rn.satfinite.e4m3x2.f32, plus
// the scale rule of the data contract (megamoe.hpp): s = amax / 448 (1 when amax is 0), q = e4m3(a / s).
#pragma once
#include <cstdint>
#include <cstring>

#include "xs/kernels/moe/layout.cuh"  // XS_HD

namespace xs::kernels::moe {

// e4m3: sign, 4 exponent bits (bias 7), 3 mantissa bits. Normal codes (exponent field 1..15) are
// (8 + m) 2^(e - 10); subnormals (field 0) m 2^-9; S.1111.111 (0x7F, 0xFF) is NaN; largest finite 448.
inline constexpr float kE4m3Max = 448.0f;
inline constexpr std::uint8_t kE4m3MaxCode = 0x7E;  // +448
inline constexpr std::uint8_t kE4m3NanCode = 0x7F;  // canonical NaN the encoder produces

namespace fp8_detail {
XS_HD float pow2(int e) {  // exact 2^e for -126 <= e <= 127
  const std::uint32_t bits = static_cast<std::uint32_t>(e + 127) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
XS_HD std::uint32_t float_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
}  // namespace fp8_detail

XS_HD bool e4m3_is_nan(std::uint8_t code) { return (code & 0x7Fu) == 0x7Fu; }

// Exact value of a code (every e4m3 value is a float); NaN codes decode to a quiet float NaN.
XS_HD float e4m3_to_float(std::uint8_t code) {
  const int exponent_field = (code >> 3) & 0xF, mantissa = code & 0x7;
  float magnitude;
  if (e4m3_is_nan(code)) {
    const std::uint32_t nan_bits = 0x7FC00000u;
    std::memcpy(&magnitude, &nan_bits, sizeof magnitude);
  } else if (exponent_field == 0) {
    magnitude = static_cast<float>(mantissa) * fp8_detail::pow2(-9);
  } else {
    magnitude = static_cast<float>(8 + mantissa) * fp8_detail::pow2(exponent_field - 10);
  }
  return (code & 0x80u) != 0 ? -magnitude : magnitude;
}

// Round to nearest, ties to even, onto the e4m3 grid, saturating finite: |x| > 448 (also inf) gives
// +-448. NaN gives 0x7F whatever its sign (the CUDA host conversion's canonical NaN; the GPU tests check
// only that the hardware gives a NaN code). Results that round to zero keep the sign (-tiny -> 0x80).
// Integer rounding of an exactly scaled value, so the result does not depend on the FP rounding mode.
XS_HD std::uint8_t float_to_e4m3(float x) {
  const std::uint32_t bits = fp8_detail::float_bits(x);
  const std::uint8_t sign = static_cast<std::uint8_t>((bits >> 24) & 0x80u);
  const std::uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits > 0x7F800000u) return kE4m3NanCode;
  if (abs_bits > 0x43E00000u) return static_cast<std::uint8_t>(sign | kE4m3MaxCode);  // > 448.0f
  const int exponent = static_cast<int>(abs_bits >> 23) - 127;  // floor(log2 |x|) for normal floats
  if (exponent < -10) return sign;  // |x| < 2^-10, below half the smallest subnormal 2^-9: rounds to 0
  const int ulp_exp = exponent < -6 ? -9 : exponent - 3;  // spacing of the e4m3 grid around |x|
  float magnitude;
  std::memcpy(&magnitude, &abs_bits, sizeof magnitude);
  const float scaled = magnitude * fp8_detail::pow2(-ulp_exp);  // exact: a power-of-two scaling, < 16
  std::uint32_t units = static_cast<std::uint32_t>(scaled);     // truncation
  const float fraction = scaled - static_cast<float>(units);    // exact
  if (fraction > 0.5f || (fraction == 0.5f && (units & 1u) != 0)) ++units;
  // Subnormal range: code = units (units 8 is 2^-6, the smallest normal, code 0x08). Normal range: units
  // in [8, 16] and code (exponent + 7) * 8 + (units - 8); units 16 carries into the next exponent.
  const std::uint32_t code = exponent < -6 ? units : static_cast<std::uint32_t>(exponent + 6) * 8u + units;
  return static_cast<std::uint8_t>(sign | code);
}

// The data contract's scale of a group whose largest magnitude is amax (fp32 division, as the device).
XS_HD float e4m3_scale_for_amax(float amax) { return amax == 0.0f ? 1.0f : amax / kE4m3Max; }

// The fp8 accuracy measure of DeepGEMM's tests, from the sums over the compared elements:
// 1 - 2<x,y> / (|x|^2 + |y|^2) = |x - y|^2 / (|x|^2 + |y|^2), in [0, 2]; 0 for equal vectors (also both zero).
XS_HD double relative_difference_from_sums(double sum_xy, double sum_xx, double sum_yy) {
  const double norms = sum_xx + sum_yy;
  return norms > 0.0 ? 1.0 - 2.0 * sum_xy / norms : 0.0;
}

}  // namespace xs::kernels::moe
