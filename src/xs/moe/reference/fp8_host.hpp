// xstage moe host layer: fp8 W8A8 on the host. Quantization of bf16 vectors by the data contract's rule
// (src/xs/kernels/moe/fp8.hpp: s = amax / 448 in fp32, code = e4m3_rn_satfinite(v / s)), bit-exact with the
// device quantize kernels; dequantization; and the fp8 accuracy measure for vectors. Plain C++.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace xs::moe {

// e4m3 codes and their fp32 scales in one of the contract's layouts.
struct Fp8Tensor {
  std::vector<std::uint8_t> codes;
  std::vector<float> scales;
};

// [rows][cols] bf16 -> codes [rows][cols], scales [rows][cols / group_cols] (arrival rows: group 128).
// Throws input_error unless cols is a positive multiple of group_cols > 0 and bf16.size() == rows * cols.
Fp8Tensor quantize_rows_fp8(std::span<const std::uint16_t> bf16, std::int64_t rows, int cols, int group_cols = 128);

// [num_matrices][n][k] bf16 -> codes of the same shape, scales [num_matrices][n / 128][k / 128].
// Throws input_error unless n and k are positive multiples of 128 and the size matches.
Fp8Tensor quantize_blocks_fp8(std::span<const std::uint16_t> bf16, int num_matrices, int n, int k);

// Element values (decoded code x scale, exact in double) of a quantize_rows_fp8 / quantize_blocks_fp8 result.
std::vector<double> dequantize_rows_fp8(const Fp8Tensor& t, std::int64_t rows, int cols, int group_cols = 128);
std::vector<double> dequantize_blocks_fp8(const Fp8Tensor& t, int num_matrices, int n, int k);

// 1 - 2<x,y> / (|x|^2 + |y|^2) over all elements (0 when both are zero). Throws input_error on different
// sizes. NaN anywhere gives NaN.
double relative_difference(std::span<const double> x, std::span<const double> y);

}  // namespace xs::moe
