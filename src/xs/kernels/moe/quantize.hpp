// xstage kernels layer (moe): device quantization of bf16 tensors to the fp8 W8A8 operands of MegaMoE
// (megamoe.hpp data contract): per row per column group (activations: arrival rows, 128-K groups) and
// per 128 x 128 block (weights). Scale s = amax / 448 (1 when amax is 0), code = cvt.rn.satfinite e4m3
// of value / s (fp32 division), so the result is bit-exact with the host rule of fp8.hpp. Also a check
// of fp8.hpp's encoder and decoder against the hardware conversions.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace xs::kernels::moe {

// [rows][cols] bf16 -> [rows][cols] e4m3 and scales [rows][cols / group_cols] fp32 (row-major: arrival_scale).
struct QuantizeRowsFp8Args {
  const void* input = nullptr;  // bf16, 2-byte aligned
  void* output = nullptr;       // e4m3, 1 byte per element
  float* scales = nullptr;      // 4-byte aligned
  std::int64_t rows = 0;        // >= 0 (0: nothing is launched)
  int cols = 0;                 // > 0, a multiple of group_cols
  int group_cols = 128;         // > 0
};

// Throws xs::input_error naming the field (null or misaligned pointers with rows > 0, cols not a positive
// multiple of group_cols), xs::Error on a launch failure. Enqueues on `stream`, does not wait.
void launch_quantize_rows_fp8(const QuantizeRowsFp8Args& args, cudaStream_t stream);

// [num_matrices][n][k] bf16 -> e4m3 of the same shape and scales [num_matrices][n / 128][k / 128] fp32:
// one scale per 128 x 128 block (w1 with n = 2I, k = h: w1_scale; w2 with n = h, k = I: w2_scale).
inline constexpr int kQuantBlock = 128;
struct QuantizeBlocksFp8Args {
  const void* input = nullptr;  // bf16, 2-byte aligned
  void* output = nullptr;       // e4m3
  float* scales = nullptr;      // 4-byte aligned
  int num_matrices = 0;         // >= 0 (0: nothing is launched)
  int n = 0;                    // rows of each matrix, a positive multiple of 128
  int k = 0;                    // columns, a positive multiple of 128
};

// Throws xs::input_error naming the field (null/misaligned pointers, n or k not a positive multiple of
// 128, more than 2^31 - 1 blocks), xs::Error on a launch failure.
void launch_quantize_blocks_fp8(const QuantizeBlocksFp8Args& args, cudaStream_t stream);

// fp8.hpp against the hardware on the device: float_to_e4m3 vs cvt.rn.satfinite.e4m3x2.f32 for every
// float bit pattern in [first_bits, first_bits + num_patterns), and e4m3_to_float vs the hardware
// e4m3 -> f16 conversion for all 256 codes. NaN inputs are compared only for giving a NaN code.
struct E4m3ConversionCheck {
  std::uint64_t encode_checked = 0;          // non-NaN patterns compared bit for bit
  std::uint64_t encode_mismatches = 0;
  std::uint64_t nan_inputs = 0;
  std::uint64_t nan_not_nan = 0;             // NaN inputs the hardware encoded as a non-NaN code
  std::uint32_t first_mismatch_bits = ~0u;   // smallest mismatching input pattern, ~0 if none
  std::uint32_t first_mismatch_hw = 0;       // the hardware's code for it
  std::uint32_t nan_codes_seen = 0;          // bit 0: hardware gave 0x7F for a NaN, bit 1: 0xFF
  std::uint32_t decode_mismatches = 0;       // of the 256 codes
  std::uint32_t first_decode_mismatch = ~0u; // smallest mismatching code, ~0 if none
  std::uint32_t reserved = 0;
};

struct E4m3ConversionCheckArgs {
  std::uint32_t first_bits = 0;
  std::uint64_t num_patterns = 1ull << 32;  // at most 2^32 - first_bits
  E4m3ConversionCheck* result = nullptr;    // device memory, overwritten
};

// Throws xs::input_error on a null result or a range past 2^32, xs::Error on a launch failure.
void launch_e4m3_conversion_check(const E4m3ConversionCheckArgs& args, cudaStream_t stream);

}  // namespace xs::kernels::moe
