// xstage moe host layer: fp8 quantization, dequantization and the accuracy measure (fp8_host.hpp).
#include "xs/moe/reference/fp8_host.hpp"

#include <cmath>
#include <string>

#include "xs/common/error.hpp"
#include "xs/moe/reference/bf16.hpp"
#include "xs/kernels/moe/fp8.hpp"

namespace xs::moe {

namespace km = xs::kernels::moe;

namespace {

constexpr int kBlock = 128;

void check_rows_shape(std::uint64_t size, std::int64_t rows, int cols, int group_cols, const char* what) {
  if (group_cols <= 0 || cols <= 0 || cols % group_cols != 0)
    throw input_error("cols", std::string(what) + " needs cols a positive multiple of group_cols > 0, got cols " +
                                  std::to_string(cols) + ", group_cols " + std::to_string(group_cols));
  if (rows < 0 || size != static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols))
    throw input_error("rows", std::string(what) + " needs rows * cols = " + std::to_string(rows) + " * " +
                                  std::to_string(cols) + " elements, got " + std::to_string(size));
}

void check_blocks_shape(std::uint64_t size, int num_matrices, int n, int k, const char* what) {
  if (n <= 0 || n % kBlock != 0 || k <= 0 || k % kBlock != 0)
    throw input_error("n", std::string(what) + " needs n and k positive multiples of 128, got n " +
                               std::to_string(n) + ", k " + std::to_string(k));
  if (num_matrices < 0 || size != std::uint64_t(num_matrices) * std::uint64_t(n) * std::uint64_t(k))
    throw input_error("num_matrices", std::string(what) + " needs num_matrices * n * k elements, got " +
                                          std::to_string(size));
}

}  // namespace

Fp8Tensor quantize_rows_fp8(std::span<const std::uint16_t> bf16, std::int64_t rows, int cols, int group_cols) {
  check_rows_shape(bf16.size(), rows, cols, group_cols, "quantize_rows_fp8");
  Fp8Tensor t;
  t.codes.resize(bf16.size());
  const std::size_t groups = static_cast<std::size_t>(rows) * (cols / group_cols);
  t.scales.resize(groups);
  for (std::size_t g = 0; g < groups; ++g) {  // groups are contiguous runs of group_cols elements
    const std::size_t base = g * group_cols;
    float amax = 0.0f;
    for (int i = 0; i < group_cols; ++i) amax = std::fmax(amax, std::fabs(bf16_to_float(bf16[base + i])));
    const float scale = km::e4m3_scale_for_amax(amax);
    t.scales[g] = scale;
    for (int i = 0; i < group_cols; ++i) t.codes[base + i] = km::float_to_e4m3(bf16_to_float(bf16[base + i]) / scale);
  }
  return t;
}

Fp8Tensor quantize_blocks_fp8(std::span<const std::uint16_t> bf16, int num_matrices, int n, int k) {
  check_blocks_shape(bf16.size(), num_matrices, n, k, "quantize_blocks_fp8");
  Fp8Tensor t;
  t.codes.resize(bf16.size());
  const int n_blocks = n / kBlock, k_blocks = k / kBlock;
  t.scales.resize(std::size_t(num_matrices) * n_blocks * k_blocks);
  for (std::size_t blk = 0; blk < t.scales.size(); ++blk) {
    const std::size_t matrix = blk / (std::size_t(n_blocks) * k_blocks);
    const std::size_t block_row = blk / k_blocks % n_blocks, block_col = blk % k_blocks;
    const std::size_t origin = (matrix * n + block_row * kBlock) * k + block_col * kBlock;
    float amax = 0.0f;
    for (int r = 0; r < kBlock; ++r)
      for (int c = 0; c < kBlock; ++c) amax = std::fmax(amax, std::fabs(bf16_to_float(bf16[origin + r * k + c])));
    const float scale = km::e4m3_scale_for_amax(amax);
    t.scales[blk] = scale;
    for (int r = 0; r < kBlock; ++r)
      for (int c = 0; c < kBlock; ++c)
        t.codes[origin + r * k + c] = km::float_to_e4m3(bf16_to_float(bf16[origin + r * k + c]) / scale);
  }
  return t;
}

std::vector<double> dequantize_rows_fp8(const Fp8Tensor& t, std::int64_t rows, int cols, int group_cols) {
  check_rows_shape(t.codes.size(), rows, cols, group_cols, "dequantize_rows_fp8");
  if (t.scales.size() != t.codes.size() / group_cols)
    throw input_error("scales", "dequantize_rows_fp8 needs rows * cols / group_cols scales");
  std::vector<double> v(t.codes.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = double(km::e4m3_to_float(t.codes[i])) * double(t.scales[i / group_cols]);
  return v;
}

std::vector<double> dequantize_blocks_fp8(const Fp8Tensor& t, int num_matrices, int n, int k) {
  check_blocks_shape(t.codes.size(), num_matrices, n, k, "dequantize_blocks_fp8");
  const std::size_t n_blocks = n / kBlock, k_blocks = k / kBlock;
  if (t.scales.size() != std::size_t(num_matrices) * n_blocks * k_blocks)
    throw input_error("scales", "dequantize_blocks_fp8 needs num_matrices * n/128 * k/128 scales");
  std::vector<double> v(t.codes.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::size_t matrix = i / (std::size_t(n) * k), row = i / k % n, col = i % k;
    v[i] = double(km::e4m3_to_float(t.codes[i])) *
           double(t.scales[(matrix * n_blocks + row / kBlock) * k_blocks + col / kBlock]);
  }
  return v;
}

double relative_difference(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size())
    throw input_error("y", "relative_difference needs vectors of one length, got " + std::to_string(x.size()) +
                               " and " + std::to_string(y.size()));
  double xy = 0, xx = 0, yy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    xy += x[i] * y[i];
    xx += x[i] * x[i];
    yy += y[i] * y[i];
  }
  return km::relative_difference_from_sums(xy, xx, yy);
}

}  // namespace xs::moe
