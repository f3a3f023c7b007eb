// xstage moe host layer: the float64 CPU reference of the fp8 W8A8 data path (cpu_reference.hpp).
#include <cmath>
#include <limits>
#include <string>

#include "xs/common/error.hpp"
#include "xs/moe/reference/bf16.hpp"
#include "xs/moe/reference/cpu_reference.hpp"
#include "xs/kernels/moe/fp8.hpp"

namespace xs::moe {

namespace km = xs::kernels::moe;

namespace {

void require(std::uint64_t got, std::uint64_t expected, const std::string& field, const char* shape) {
  if (got != expected)
    throw input_error(field, std::string("expected ") + shape + " = " + std::to_string(expected) + " elements, got " +
                                 std::to_string(got));
}

double dot(const double* a, const double* b, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

std::uint8_t double_to_e4m3(double x) {
  if (std::isnan(x)) return km::kE4m3NanCode;
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const double magnitude = std::fabs(x);
  if (magnitude > double(km::kE4m3Max)) return static_cast<std::uint8_t>(sign | km::kE4m3MaxCode);
  if (magnitude == 0) return sign;
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude = m 2^exponent, m in [0.5, 1)
  const int floor_log2 = exponent - 1;
  if (floor_log2 < -10) return sign;  // below 2^-10, half the smallest subnormal
  const int ulp_exp = floor_log2 < -6 ? -9 : floor_log2 - 3;
  const auto units = static_cast<std::uint32_t>(std::nearbyint(std::ldexp(magnitude, -ulp_exp)));  // ties to even
  const std::uint32_t code = floor_log2 < -6 ? units : static_cast<std::uint32_t>(floor_log2 + 6) * 8u + units;
  return static_cast<std::uint8_t>(sign | code);
}

MoeReferenceFp8 cpu_moe_reference_fp8(const MoeProblem& problem, const Fp8Operands& ops) {
  const int h = problem.hidden, inter = problem.intermediate, num_local = problem.num_local_experts;
  if (h % 128 != 0 || inter % 128 != 0)
    throw input_error("hidden", "the fp8 reference needs h and I multiples of 128, got h " + std::to_string(h) +
                                    ", I " + std::to_string(inter));
  const std::uint64_t arrivals = problem.num_arrivals(), e = num_local;
  require(ops.arrival.codes.size(), arrivals * h, "arrival", "[num_arrivals][h]");
  require(ops.arrival.scales.size(), arrivals * (h / 128), "arrival_scale", "[num_arrivals][h/128]");
  require(ops.w1.codes.size(), e * 2 * inter * h, "w1", "[E/P][2I][h]");
  require(ops.w1.scales.size(), e * (2 * inter / 128) * (h / 128), "w1_scale", "[E/P][2I/128][h/128]");
  require(ops.w2.codes.size(), e * h * inter, "w2", "[E/P][h][I]");
  require(ops.w2.scales.size(), e * (h / 128) * (inter / 128), "w2_scale", "[E/P][h/128][I/128]");
  const std::vector<double> x = dequantize_rows_fp8(ops.arrival, std::int64_t(arrivals), h);
  const std::vector<double> g1 = dequantize_blocks_fp8(ops.w1, num_local, 2 * inter, h);
  const std::vector<double> g2 = dequantize_blocks_fp8(ops.w2, num_local, h, inter);

  MoeReferenceFp8 ref;
  const std::uint64_t rows = problem.num_pool_rows();
  const std::size_t rank_elems = static_cast<std::size_t>(problem.slots_per_rank()) * h;
  ref.act_e4m3.assign(rows * inter, 0);
  ref.act_scale.assign(rows * (inter / kActGroupCols), 1.0f);
  ref.combine.assign(problem.num_ranks, std::vector<double>(rank_elems, std::numeric_limits<double>::quiet_NaN()));
  ref.combine_bf16.assign(problem.num_ranks, std::vector<std::uint16_t>(rank_elems, kBf16Poison));
  std::vector<double> a(inter), act(inter);
  for (std::uint64_t row = 0; row < rows; ++row) {
    if (problem.pool_arrival[row] < 0) continue;  // padding: zero input -> act codes 0, scale 1, no Combine row
    const int expert = static_cast<int>(problem.row_block_expert[row / kPoolBlockRows]);
    const double* xr = &x[std::size_t(problem.pool_arrival[row]) * h];
    const double* w1e = &g1[std::size_t(expert) * 2 * inter * h];
    const double weight = problem.pool_weight[row];
    for (int j = 0; j < inter; ++j) {
      const double gate = dot(xr, w1e + std::size_t(2 * j) * h, h);
      const double up = dot(xr, w1e + std::size_t(2 * j + 1) * h, h);
      a[j] = gate / (1.0 + std::exp(-gate)) * up * weight;
    }
    for (int g = 0; g < inter / kActGroupCols; ++g) {  // Linear-1 output: e4m3 per 64 columns
      double amax = 0;
      for (int j = g * kActGroupCols; j < (g + 1) * kActGroupCols; ++j) amax = std::fmax(amax, std::fabs(a[j]));
      const double scale = amax == 0 ? 1.0 : amax / double(km::kE4m3Max);
      const float stored_scale = static_cast<float>(scale);
      ref.act_scale[std::size_t(g) * rows + row] = stored_scale;
      for (int j = g * kActGroupCols; j < (g + 1) * kActGroupCols; ++j) {
        const std::uint8_t code = double_to_e4m3(a[j] / scale);
        ref.act_e4m3[row * inter + j] = code;
        act[j] = double(km::e4m3_to_float(code)) * double(stored_scale);
      }
    }
    const double* w2e = &g2[std::size_t(expert) * h * inter];
    const std::size_t base = std::size_t(problem.pool_dst_slot[row]) * h;
    std::vector<double>& out = ref.combine[problem.pool_dst_rank[row]];
    std::vector<std::uint16_t>& out_bf16 = ref.combine_bf16[problem.pool_dst_rank[row]];
    for (int c = 0; c < h; ++c) {
      const double y = dot(act.data(), w2e + std::size_t(c) * inter, inter);
      out[base + c] = y;
      out_bf16[base + c] = double_to_bf16(y);
    }
  }
  return ref;
}

}  // namespace xs::moe
