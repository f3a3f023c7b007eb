// xstage moe host layer: bf16 conversions the MoE reference needs. float <-> bf16 are common/bf16.hpp's
// (one implementation, round-to-nearest-even); double -> bf16 rounds once, directly from float64,
// so the float64 reference does not round twice (double -> float -> bf16) at its rounding points.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "xs/common/bf16.hpp"

namespace xs::moe {

using xs::bf16_to_float;
using xs::float_to_bf16;
using xs::kBf16Poison;  // 0xFFFF, a NaN

inline double bf16_to_double(std::uint16_t bits) { return static_cast<double>(bf16_to_float(bits)); }

// Round-to-nearest-even onto the bf16 grid (8 significant bits; subnormal spacing 2^-133), NaN -> 0x7FC0,
// overflow -> +-inf. The rounded value is a float exactly (or inf), whose top 16 bits are the bf16.
inline std::uint16_t double_to_bf16(double x) {
  if (std::isnan(x)) return 0x7FC0;
  if (std::isinf(x) || x == 0) return float_to_bf16(static_cast<float>(x));
  int exponent = 0;
  std::frexp(x, &exponent);                    // |x| = m 2^exponent, m in [0.5, 1)
  int ulp_exp = exponent - 8;                  // 8 significant bits
  if (ulp_exp < -133) ulp_exp = -133;          // bf16 subnormals: spacing 2^-126 / 2^7
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(x, -ulp_exp)), ulp_exp);  // ties to even
  const float f = static_cast<float>(rounded);  // exact, or +-inf past the bf16 range
  std::uint32_t w;
  std::memcpy(&w, &f, sizeof w);
  return static_cast<std::uint16_t>(w >> 16);
}

}  // namespace xs::moe
