// xstage GPU moe tests: an fp8 W8A8 problem for the reference tests. A routed MoeProblem (moe/point/problem.hpp,
// so the float64 CPU references apply), fresh random bf16 inputs on the device, their device quantization
// (quantize.hpp, as the runner does) and host copies of the codes and scales.
#pragma once
#include <cmath>
#include <cstdint>

#include "xs/moe/reference/cpu_reference.hpp"
#include "xs/moe/reference/fp8_host.hpp"
#include "xs/moe/run/moe_device.hpp"
#include "xs/moe/point/problem.hpp"
#include "xs/kernels/moe/quantize.hpp"
#include "xs/kernels/moe/random_fill.hpp"
#include "xs/kernels/moe/reference.hpp"
#include "xs/moe/point/routing.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::moe::test {

struct Fp8Shape {
  int hidden = 256, intermediate = 128, num_ranks = 4, tokens_per_rank = 64, num_experts = 16, top_k = 4;
  double zipf_alpha = 0.5;
};

// One quantized tensor on the device.
struct DeviceFp8 {
  DeviceBuffer codes, scales;
};

struct Fp8Problem {
  Fp8Shape shape;
  MoeProblem problem;
  DeviceBuffer arrival_bf16, w1_bf16, w2_bf16;
  DeviceFp8 arrival, w1, w2;

  Fp8Problem(const Fp8Shape& sh, std::uint64_t seed) : shape(sh) {
    namespace km = kernels::moe;
    RoutingParams rp;
    rp.num_ranks = sh.num_ranks;
    rp.tokens_per_rank = sh.tokens_per_rank;
    rp.num_experts = sh.num_experts;
    rp.top_k = sh.top_k;
    rp.zipf_alpha = sh.zipf_alpha;
    rp.seed = seed;
    problem = build_problem(generate_routing(rp), sh.hidden, sh.intermediate);
    const int h = sh.hidden, inter = sh.intermediate, e = problem.num_local_experts;
    const std::size_t arrivals = static_cast<std::size_t>(problem.num_arrivals());
    arrival_bf16 = DeviceBuffer(arrivals * h * 2);
    w1_bf16 = DeviceBuffer(std::size_t(e) * 2 * inter * h * 2);
    w2_bf16 = DeviceBuffer(std::size_t(e) * h * inter * 2);
    // Uniform [-s, s] (variance s^2 / 3): 3 / sqrt(k) keeps gate, up and the outputs near unit scale.
    km::launch_fill_uniform_bf16(arrival_bf16.get(), arrival_bf16.bytes() / 2, seed * 3 + 1, 1.0f, nullptr);
    km::launch_fill_uniform_bf16(w1_bf16.get(), w1_bf16.bytes() / 2, seed * 3 + 2, 3.0f / std::sqrt(float(h)), nullptr);
    km::launch_fill_uniform_bf16(w2_bf16.get(), w2_bf16.bytes() / 2, seed * 3 + 3, 3.0f / std::sqrt(float(inter)),
                                 nullptr);
    arrival = quantize_rows(arrival_bf16, static_cast<std::int64_t>(arrivals), h);
    w1 = quantize_blocks(w1_bf16, e, 2 * inter, h);
    w2 = quantize_blocks(w2_bf16, e, h, inter);
    XS_CUDA_CHECK(cudaDeviceSynchronize());
  }

  static DeviceFp8 quantize_rows(const DeviceBuffer& in, std::int64_t rows, int cols) {
    DeviceFp8 q{DeviceBuffer(in.bytes() / 2), DeviceBuffer(std::size_t(rows) * (cols / 128) * 4)};
    kernels::moe::QuantizeRowsFp8Args a;
    a.input = in.get();
    a.output = q.codes.get();
    a.scales = q.scales.as<float>();
    a.rows = rows;
    a.cols = cols;
    kernels::moe::launch_quantize_rows_fp8(a, nullptr);
    return q;
  }
  static DeviceFp8 quantize_blocks(const DeviceBuffer& in, int mats, int n, int k) {
    DeviceFp8 q{DeviceBuffer(in.bytes() / 2), DeviceBuffer(std::size_t(mats) * (n / 128) * (k / 128) * 4)};
    kernels::moe::QuantizeBlocksFp8Args a;
    a.input = in.get();
    a.output = q.codes.get();
    a.scales = q.scales.as<float>();
    a.num_matrices = mats;
    a.n = n;
    a.k = k;
    kernels::moe::launch_quantize_blocks_fp8(a, nullptr);
    return q;
  }
  static Fp8Tensor download(const DeviceFp8& q) {
    return {runtime::download<std::uint8_t>(q.codes), runtime::download<float>(q.scales)};
  }
  Fp8Operands host_operands() const { return {download(arrival), download(w1), download(w2)}; }

  RoutingHostView routing_view() const {
    return {problem.pool_arrival, problem.pool_dst_rank, problem.pool_dst_slot,
            problem.pool_weight,  problem.row_block_expert, problem.expert_first_block};
  }

  // Reference arguments (dst, scratch and row range left to the caller).
  kernels::moe::MoeReferenceArgs reference_args(const DeviceRouting& routing, bool fp8) const {
    kernels::moe::MoeReferenceArgs a;
    a.hidden = shape.hidden;
    a.intermediate = shape.intermediate;
    a.num_experts = problem.num_local_experts;
    a.top_k = shape.top_k;
    a.tokens_per_rank = shape.tokens_per_rank;
    a.num_ranks = shape.num_ranks;
    a.num_row_blocks = static_cast<int>(problem.num_row_blocks);
    a.num_arrivals = problem.num_arrivals();
    a.routing = routing.tables();
    if (fp8) {
      a.precision = kernels::moe::Precision::kFp8;
      a.arrival = arrival.codes.get();
      a.w1 = w1.codes.get();
      a.w2 = w2.codes.get();
      a.arrival_scale = arrival.scales.as<const float>();
      a.w1_scale = w1.scales.as<const float>();
      a.w2_scale = w2.scales.as<const float>();
    } else {
      a.arrival = arrival_bf16.get();
      a.w1 = w1_bf16.get();
      a.w2 = w2_bf16.get();
    }
    return a;
  }
};

}  // namespace xs::moe::test
