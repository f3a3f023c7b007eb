// xstage GPU moe tests: a small hand-built MegaMoE problem (routing of P source ranks' tokens to this
// rank's experts, expert-sorted pool with padding, random bf16 inputs on the device) and a float64 loop
// of the data path written here, independently of the kernels' code.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <ostream>
#include <random>
#include <vector>

#include "xs/attention/reference/bf16.hpp"
#include "xs/common/error.hpp"
#include "xs/moe/run/moe_device.hpp"
#include "xs/kernels/moe/random_fill.hpp"
#include "xs/kernels/moe/reference.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::moe::test {

using attention::bf16_to_float;
using attention::float_to_bf16;

struct TestShape {
  int hidden = 256, intermediate = 128, top_k = 2, num_ranks = 4, tokens_per_rank = 96;
  std::vector<double> expert_share = {0.5, 0.3, 0.2, 0.0};  // local experts' share of local picks (0: no rows)
  double local_fraction = 0.4;  // probability that a (token, k) pick is one of this rank's experts
  int num_experts() const { return static_cast<int>(expert_share.size()); }
  std::uint32_t slots_per_rank() const { return static_cast<std::uint32_t>(tokens_per_rank * top_k); }
};
inline void PrintTo(const TestShape& s, std::ostream* os) {  // gtest's parameter name
  *os << "h " << s.hidden << ", I " << s.intermediate << ", E " << s.num_experts() << ", top-" << s.top_k << ", P "
      << s.num_ranks << ", T " << s.tokens_per_rank;
}

struct HostRouting {
  std::vector<std::int32_t> pool_arrival, pool_dst_rank, pool_dst_slot;
  std::vector<float> pool_weight;
  std::vector<std::uint32_t> row_block_expert, expert_first_block;
  int num_arrivals = 0, num_pairs = 0;
  int num_row_blocks() const { return static_cast<int>(row_block_expert.size()); }
  int num_pool_rows() const { return static_cast<int>(pool_arrival.size()); }
  RoutingHostView view() const {
    return {pool_arrival, pool_dst_rank, pool_dst_slot, pool_weight, row_block_expert, expert_first_block};
  }
};

// Each (source rank s, token t, k) pick goes to a local expert with probability local_fraction; a token
// with at least one local pick arrives once (arrival rows in order of first pick); pairs are grouped by
// expert in shuffled order and each expert's rows padded to a multiple of 128.
inline HostRouting build_routing(const TestShape& sh, std::mt19937_64& rng) {
  struct Pair { int rank, slot, arrival; float weight; };
  std::vector<std::vector<Pair>> by_expert(sh.expert_share.size());
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  std::uniform_real_distribution<float> weight(0.05f, 1.0f);
  std::discrete_distribution<int> expert(sh.expert_share.begin(), sh.expert_share.end());
  HostRouting r;
  for (int s = 0; s < sh.num_ranks; ++s)
    for (int t = 0; t < sh.tokens_per_rank; ++t) {
      int arrival = -1;
      for (int k = 0; k < sh.top_k; ++k) {
        if (u01(rng) >= sh.local_fraction) continue;
        if (arrival < 0) arrival = r.num_arrivals++;
        by_expert[expert(rng)].push_back({s, t * sh.top_k + k, arrival, weight(rng)});
        ++r.num_pairs;
      }
    }
  for (std::size_t e = 0; e < by_expert.size(); ++e) {
    r.expert_first_block.push_back(static_cast<std::uint32_t>(r.row_block_expert.size()));
    std::shuffle(by_expert[e].begin(), by_expert[e].end(), rng);
    const std::size_t blocks = (by_expert[e].size() + 127) / 128;
    for (std::size_t i = 0; i < blocks * 128; ++i) {
      const bool pad = i >= by_expert[e].size();
      const Pair p = pad ? Pair{-1, -1, -1, 0.0f} : by_expert[e][i];
      r.pool_arrival.push_back(p.arrival);
      r.pool_dst_rank.push_back(p.rank);
      r.pool_dst_slot.push_back(p.slot);
      r.pool_weight.push_back(p.weight);
    }
    for (std::size_t b = 0; b < blocks; ++b) r.row_block_expert.push_back(static_cast<std::uint32_t>(e));
  }
  r.expert_first_block.push_back(static_cast<std::uint32_t>(r.row_block_expert.size()));
  return r;
}

// Inputs on the device, uniform in [-scale, scale] from a fresh seed; scales keep gate, up and the output
// near unit variance (uniform [-s, s] has variance s^2 / 3: 3 / sqrt(k) over k terms gives 1).
struct DeviceInputs {
  DeviceBuffer arrival, w1, w2;
  DeviceInputs(const TestShape& sh, int num_arrivals, std::uint64_t seed)
      : arrival(std::size_t(std::max(num_arrivals, 1)) * sh.hidden * 2),
        w1(std::size_t(sh.num_experts()) * 2 * sh.intermediate * sh.hidden * 2),
        w2(std::size_t(sh.num_experts()) * sh.hidden * sh.intermediate * 2) {
    namespace km = kernels::moe;
    km::launch_fill_uniform_bf16(arrival.get(), arrival.bytes() / 2, seed * 3 + 1, 1.0f, nullptr);
    km::launch_fill_uniform_bf16(w1.get(), w1.bytes() / 2, seed * 3 + 2, 3.0f / std::sqrt(float(sh.hidden)), nullptr);
    km::launch_fill_uniform_bf16(w2.get(), w2.bytes() / 2, seed * 3 + 3, 3.0f / std::sqrt(float(sh.intermediate)),
                                 nullptr);
  }
};

inline std::vector<double> to_double(const std::vector<std::uint16_t>& bits) {
  std::vector<double> v(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) v[i] = bf16_to_float(bits[i]);
  return v;
}

// The float64 data path: value[rank][slot * h + c], act rounded to bf16 as the kernel does (slots no row
// writes: NaN), and flip_scale[rank][slot * h + c] = max_j |act_j * w2[c][j]|: an act element whose fp32
// value rounds to the other bf16 neighbour moves the output by at most 2^-7 of that.
struct Float64Combine {
  std::vector<std::vector<double>> value, flip_scale;
};

// Only pool rows [row_begin, row_end) are computed (row_end -1: all).
inline Float64Combine float64_moe(const TestShape& sh, const HostRouting& rt, const std::vector<double>& arrival,
                                  const std::vector<double>& w1, const std::vector<double>& w2, int row_begin = 0,
                                  int row_end = -1) {
  const int h = sh.hidden, inter = sh.intermediate;
  const std::size_t per_rank = std::size_t(sh.slots_per_rank()) * h;
  Float64Combine out{std::vector<std::vector<double>>(sh.num_ranks, std::vector<double>(per_rank, NAN)),
                     std::vector<std::vector<double>>(sh.num_ranks, std::vector<double>(per_rank, 0.0))};
  std::vector<double> act(inter);
  for (int r = row_begin; r < (row_end < 0 ? rt.num_pool_rows() : row_end); ++r) {
    if (rt.pool_arrival[r] < 0) continue;
    const std::size_t e = rt.row_block_expert[r / 128];
    const double* x = &arrival[std::size_t(rt.pool_arrival[r]) * h];
    for (int j = 0; j < inter; ++j) {
      const double* wg = &w1[(e * 2 * inter + 2 * j) * h];
      const double* wu = wg + h;
      double g = 0, u = 0;
      for (int k = 0; k < h; ++k) {
        g += x[k] * wg[k];
        u += x[k] * wu[k];
      }
      const double a = g / (1.0 + std::exp(-g)) * u * double(rt.pool_weight[r]);
      act[j] = bf16_to_float(float_to_bf16(static_cast<float>(a)));
    }
    const std::size_t base = std::size_t(rt.pool_dst_slot[r]) * h;
    for (int c = 0; c < h; ++c) {
      const double* w = &w2[(e * h + c) * inter];
      double acc = 0, flip = 0;
      for (int j = 0; j < inter; ++j) {
        acc += act[j] * w[j];
        flip = std::max(flip, std::fabs(act[j] * w[j]));
      }
      out.value[rt.pool_dst_rank[r]][base + c] = acc;
      out.flip_scale[rt.pool_dst_rank[r]][base + c] = flip;
    }
  }
  return out;
}

// Reference arguments for this problem (dst and row range left to the caller).
inline kernels::moe::MoeReferenceArgs reference_args(const TestShape& sh, const HostRouting& rt,
                                                     const DeviceRouting& routing, const DeviceInputs& in) {
  kernels::moe::MoeReferenceArgs a;
  a.hidden = sh.hidden;
  a.intermediate = sh.intermediate;
  a.num_experts = sh.num_experts();
  a.top_k = sh.top_k;
  a.tokens_per_rank = sh.tokens_per_rank;
  a.num_ranks = sh.num_ranks;
  a.num_row_blocks = rt.num_row_blocks();
  a.num_arrivals = rt.num_arrivals;
  a.arrival = in.arrival.get();
  a.w1 = in.w1.get();
  a.w2 = in.w2.get();
  a.routing = routing.tables();
  return a;
}

}  // namespace xs::moe::test
