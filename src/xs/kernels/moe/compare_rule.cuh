// xstage kernels layer (moe): the elementwise rule of the Combine comparison, host and device. The device
// comparison (compare_combine_kernel.cu) and the CPU mirror the verification tests run on fabricated
// outputs (src/xs/moe/reference/verification_gate.cpp) evaluate exactly this code.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "xs/kernels/moe/layout.cuh"  // XS_HD

namespace xs::kernels::moe {

XS_HD float bf16_bits_value(std::uint16_t bits) {
  const std::uint32_t w = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &w, sizeof f);
  return f;
}

// |t - r| measured against abs_tol + rel_tol |r|; > 1 is wrong. Bitwise-equal pairs (also equal NaNs) are
// exact; any other pair with a NaN or inf is infinitely wrong (returned as +inf, abs_err and rel_err too).
XS_HD float element_excess(std::uint16_t tb, std::uint16_t rb, float abs_tol, float rel_tol, float& abs_err,
                           float& rel_err) {
  abs_err = rel_err = 0.0f;
  if (tb == rb) return 0.0f;
  const float t = bf16_bits_value(tb), r = bf16_bits_value(rb);
  const float d = fabsf(t - r);
  if (!(d <= 3.402823466e38f)) {  // NaN or inf
    abs_err = rel_err = INFINITY;
    return INFINITY;
  }
  abs_err = d;
  rel_err = r != 0.0f ? d / fabsf(r) : 0.0f;
  const float tol = abs_tol + rel_tol * fabsf(r);
  return tol > 0.0f ? d / tol : (d > 0.0f ? INFINITY : 0.0f);
}

}  // namespace xs::kernels::moe
