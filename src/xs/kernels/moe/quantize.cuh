// xstage kernels layer (moe): device helpers of the fp8 quantization rule (fp8.hpp), shared by the
// quantize kernels and the GPU reference's activation quantization: the hardware e4m3 conversion and
// warp reductions of a group's largest magnitude.
#pragma once
#include <cstdint>

#include "xs/kernels/moe/fp8.hpp"

namespace xs::kernels::moe {

// PTX ISA, "cvt" (f32 -> f8x2): d.hi = cvt(a), d.lo = cvt(b), round to nearest even, satfinite
// (|x| > 448 and inf -> +-448, NaN -> NaN). sm_89+.
__device__ __forceinline__ std::uint16_t cvt_e4m3x2_rn_satfinite(float hi, float lo) {
  std::uint16_t d;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}
__device__ __forceinline__ std::uint8_t cvt_e4m3_rn_satfinite(float x) {
  return static_cast<std::uint8_t>(cvt_e4m3x2_rn_satfinite(0.0f, x) & 0xFFu);
}

__device__ __forceinline__ float warp_max_all(float v) {  // every lane gets the maximum
  for (int off = 16; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, off));
  return v;
}

// One warp quantizes `n` values v(i), i in [0, n), of one group: returns the group's scale (every lane)
// and has store(i, code) called once per element. Two passes over v (the loader re-reads).
template <class Load, class Store>
__device__ __forceinline__ float warp_quantize_group(int n, int lane, Load v, Store store) {
  float amax = 0.0f;
  for (int i = lane; i < n; i += 32) amax = fmaxf(amax, fabsf(v(i)));
  const float scale = e4m3_scale_for_amax(warp_max_all(amax));
  for (int i = lane; i < n; i += 32) store(i, cvt_e4m3_rn_satfinite(__fdiv_rn(v(i), scale)));
  return scale;
}

}  // namespace xs::kernels::moe
