// xstage moe host layer: float64 CPU reference of one emulated rank (see cpu_reference.hpp).
#include "xs/moe/reference/cpu_reference.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "xs/common/error.hpp"
#include "xs/moe/reference/bf16.hpp"

namespace xs::moe {
namespace {

void require_size(const std::vector<std::uint16_t>& v, std::uint64_t expected, const char* field, const char* shape) {
  if (v.size() != expected)
    throw input_error(field, std::string("expected ") + shape + " = " + std::to_string(expected) +
                                 " bf16 elements, got " + std::to_string(v.size()));
}

std::vector<double> widen(const std::vector<std::uint16_t>& v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = bf16_to_double(v[i]);
  return out;
}

double dot(const double* a, const double* b, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

MoeReference cpu_moe_reference(const MoeProblem& problem, const std::vector<std::uint16_t>& arrival,
                               const std::vector<std::uint16_t>& w1, const std::vector<std::uint16_t>& w2) {
  const int h = problem.hidden, inter = problem.intermediate, num_local = problem.num_local_experts;
  require_size(arrival, std::uint64_t(problem.num_arrivals()) * h, "arrival", "[num_arrivals][h]");
  require_size(w1, std::uint64_t(num_local) * 2 * inter * h, "w1", "[E/P][2I][h]");
  require_size(w2, std::uint64_t(num_local) * h * inter, "w2", "[E/P][h][I]");
  const std::vector<double> x = widen(arrival), g1 = widen(w1), g2 = widen(w2);

  MoeReference ref;
  const std::uint64_t rows = problem.num_pool_rows();
  const std::size_t rank_elems = static_cast<std::size_t>(problem.slots_per_rank()) * h;
  ref.act_bf16.assign(rows * inter, 0);
  ref.combine.assign(problem.num_ranks, std::vector<double>(rank_elems, std::numeric_limits<double>::quiet_NaN()));
  ref.combine_bf16.assign(problem.num_ranks, std::vector<std::uint16_t>(rank_elems, kBf16Poison));
  std::vector<double> act(inter);
  for (std::uint64_t row = 0; row < rows; ++row) {
    if (problem.pool_arrival[row] < 0) continue;  // padding: zero input -> act 0, no Combine row
    const int expert = static_cast<int>(problem.row_block_expert[row / kPoolBlockRows]);
    const double* xr = &x[std::size_t(problem.pool_arrival[row]) * h];
    const double* w1e = &g1[std::size_t(expert) * 2 * inter * h];
    const double weight = problem.pool_weight[row];
    for (int j = 0; j < inter; ++j) {
      const double gate = dot(xr, w1e + std::size_t(2 * j) * h, h);
      const double up = dot(xr, w1e + std::size_t(2 * j + 1) * h, h);
      const std::uint16_t a = double_to_bf16(gate / (1.0 + std::exp(-gate)) * up * weight);  // Linear-1 output
      ref.act_bf16[row * inter + j] = a;
      act[j] = bf16_to_double(a);
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
