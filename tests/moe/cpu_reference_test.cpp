// xstage moe unit tests: the float64 MoE reference (against a naive computation straight from the
// routing, pool-order independence, the bf16 rounding points, unwritten slots) and double -> bf16 rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "xs/common/error.hpp"
#include "xs/moe/reference/bf16.hpp"
#include "xs/moe/reference/cpu_reference.hpp"
#include "xs/moe/point/problem.hpp"
#include "xs/moe/point/routing.hpp"

namespace xs::moe {
namespace {

std::vector<std::uint16_t> random_bf16(std::size_t n, std::mt19937& rng, float stddev) {
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) {
    do x = float_to_bf16(dist(rng));
    while (bf16_to_float(x) == 0.0f);  // never zeros
  }
  return v;
}

struct Case {
  Routing routing;
  MoeProblem problem;
  std::vector<std::uint16_t> arrival, w1, w2;
};

Case make_case(std::uint64_t seed, int hidden = 128, int inter = 64) {
  RoutingParams rp;
  rp.num_ranks = 4;
  rp.tokens_per_rank = 40;
  rp.num_experts = 8;
  rp.top_k = 3;
  rp.zipf_alpha = 0.5;
  rp.seed = seed;
  Case c{generate_routing(rp), {}, {}, {}, {}};
  c.problem = build_problem(c.routing, hidden, inter);
  std::mt19937 rng(static_cast<unsigned>(seed));
  const std::size_t e = c.problem.num_local_experts;
  c.arrival = random_bf16(std::size_t(c.problem.num_arrivals()) * hidden, rng, 1.0f);
  c.w1 = random_bf16(e * 2 * inter * hidden, rng, 1.0f / std::sqrt(float(hidden)));
  c.w2 = random_bf16(e * hidden * inter, rng, 1.0f / std::sqrt(float(inter)));
  return c;
}

// Straight from the routing: find the token's arrival row, run the expert on it, no pool involved.
// round_act = false keeps the activation in float64 (to show the reference does round it).
std::vector<double> naive_row(const Case& c, int src, int token, int k, bool round_act) {
  const MoeProblem& p = c.problem;
  const int h = p.hidden, inter = p.intermediate;
  int arrival = -1;
  for (int a = 0; a < p.num_arrivals(); ++a)
    if (p.arrival_src_rank[a] == src && p.arrival_token[a] == token) arrival = a;
  EXPECT_GE(arrival, 0);
  const int e = c.routing.expert(src, token, k) - p.first_expert;
  const double weight = c.routing.weight(src, token, k);
  std::vector<double> act(inter), out(h);
  for (int j = 0; j < inter; ++j) {
    double gate = 0, up = 0;
    for (int i = 0; i < h; ++i) {
      const double xi = bf16_to_float(c.arrival[std::size_t(arrival) * h + i]);
      gate += xi * bf16_to_float(c.w1[(std::size_t(e) * 2 * inter + 2 * j) * h + i]);
      up += xi * bf16_to_float(c.w1[(std::size_t(e) * 2 * inter + 2 * j + 1) * h + i]);
    }
    const double a = gate / (1.0 + std::exp(-gate)) * up * weight;
    act[j] = round_act ? bf16_to_double(double_to_bf16(a)) : a;
  }
  for (int col = 0; col < h; ++col)
    for (int j = 0; j < inter; ++j) out[col] += act[j] * bf16_to_float(c.w2[(std::size_t(e) * h + col) * inter + j]);
  return out;
}

TEST(MoeBf16, DoubleRoundsOnceToNearestEven) {
  std::mt19937 rng(4);
  std::normal_distribution<float> dist(0.0f, 100.0f);
  for (int i = 0; i < 10000; ++i) {  // values that are floats: same as the float path
    const float f = dist(rng);
    ASSERT_EQ(double_to_bf16(f), float_to_bf16(f)) << f;
  }
  EXPECT_EQ(bf16_to_double(double_to_bf16(1.0 + 0x1p-8)), 1.0);                   // tie -> even
  EXPECT_EQ(bf16_to_double(double_to_bf16(1.0 + 0x1p-7 + 0x1p-8)), 1.0 + 0x1p-6);  // tie -> even (up)
  // Just above a tie, but the tail is lost by a float: direct rounding goes up, double rounding would not.
  const double above_tie = 1.0 + 0x1p-8 + 0x1p-40;
  EXPECT_EQ(bf16_to_double(double_to_bf16(above_tie)), 1.0 + 0x1p-7);
  EXPECT_EQ(bf16_to_double(float_to_bf16(static_cast<float>(above_tie))), 1.0);
  EXPECT_EQ(double_to_bf16(-2.5), float_to_bf16(-2.5f));
  EXPECT_EQ(double_to_bf16(0x1p-133 * 3), float_to_bf16(0x1p-133f * 3));  // subnormal grid
  EXPECT_EQ(double_to_bf16(0x1p-135), 0u);                                 // below half the smallest: 0
  EXPECT_TRUE(std::isinf(bf16_to_double(double_to_bf16(1e39))));
  EXPECT_TRUE(std::isnan(bf16_to_double(double_to_bf16(NAN))));
}

TEST(MoeCpuReference, MatchesANaiveComputationFromTheRouting) {
  const Case c = make_case(12);
  const MoeReference ref = cpu_moe_reference(c.problem, c.arrival, c.w1, c.w2);
  const int h = c.problem.hidden, k_max = c.problem.top_k;
  int checked = 0;
  double max_abs = 0;
  for (int src = 0; src < c.problem.num_ranks; ++src)
    for (int t = 0; t < c.problem.tokens_per_rank; ++t)
      for (int k = 0; k < k_max; ++k) {
        if (c.routing.rank_of_expert(c.routing.expert(src, t, k)) != c.problem.emulated_rank) continue;
        const std::vector<double> want = naive_row(c, src, t, k, true);
        const std::size_t base = std::size_t(t * k_max + k) * h;
        for (int col = 0; col < h; ++col) {
          const double got = ref.combine[src][base + col];
          ASSERT_NEAR(got, want[col], 1e-12 * (1 + std::abs(want[col])))
              << "rank " << src << " token " << t << " k " << k;
          ASSERT_EQ(ref.combine_bf16[src][base + col], double_to_bf16(got));
          max_abs = std::max(max_abs, std::abs(want[col]));
        }
        ++checked;
      }
  EXPECT_EQ(checked, static_cast<int>(c.problem.num_received_pairs));
  EXPECT_GT(max_abs, 0.01) << "outputs are not degenerate";
}

TEST(MoeCpuReference, RoundsTheActivationToBf16BeforeLinear2) {
  const Case c = make_case(13);
  const MoeReference ref = cpu_moe_reference(c.problem, c.arrival, c.w1, c.w2);
  // The first valid pool row: its act row is the bf16 of the unrounded activation, and the Combine row
  // follows the rounded act (the unrounded one differs by far more than float64 noise).
  const MoeProblem& p = c.problem;
  const int row = 0;
  ASSERT_GE(p.pool_arrival[row], 0);
  const int src = p.pool_dst_rank[row], t = p.pool_dst_slot[row] / p.top_k, k = p.pool_dst_slot[row] % p.top_k;
  const std::vector<double> rounded = naive_row(c, src, t, k, true), exact = naive_row(c, src, t, k, false);
  double max_gap = 0;
  for (int col = 0; col < p.hidden; ++col) {
    const double got = ref.combine[src][std::size_t(p.pool_dst_slot[row]) * p.hidden + col];
    EXPECT_NEAR(got, rounded[col], 1e-12 * (1 + std::abs(rounded[col])));
    max_gap = std::max(max_gap, std::abs(got - exact[col]));
  }
  EXPECT_GT(max_gap, 1e-6);
  for (std::uint64_t r = 0; r < p.num_pool_rows(); ++r) {
    if (p.pool_arrival[r] >= 0) continue;
    for (int j = 0; j < p.intermediate; ++j) ASSERT_EQ(ref.act_bf16[r * p.intermediate + j], 0u) << "padding row " << r;
  }
}

TEST(MoeCpuReference, PoolOrderDoesNotChangeAnySlot) {
  const Case c = make_case(14);
  const MoeReference ref = cpu_moe_reference(c.problem, c.arrival, c.w1, c.w2);
  // Shuffle rows (padding included) inside each expert's range: same slots, same values, bit for bit.
  MoeProblem shuffled = c.problem;
  std::mt19937 rng(99);
  std::vector<std::uint64_t> source_row(c.problem.num_pool_rows());
  for (int e = 0; e < c.problem.num_local_experts; ++e) {
    const std::uint64_t first = std::uint64_t{c.problem.expert_first_block[e]} * kPoolBlockRows;
    const std::uint64_t end = std::uint64_t{c.problem.expert_first_block[e + 1]} * kPoolBlockRows;
    for (std::uint64_t r = first; r < end; ++r) source_row[r] = r;
    std::shuffle(source_row.begin() + first, source_row.begin() + end, rng);
  }
  for (std::uint64_t r = 0; r < source_row.size(); ++r) {
    shuffled.pool_arrival[r] = c.problem.pool_arrival[source_row[r]];
    shuffled.pool_dst_rank[r] = c.problem.pool_dst_rank[source_row[r]];
    shuffled.pool_dst_slot[r] = c.problem.pool_dst_slot[source_row[r]];
    shuffled.pool_weight[r] = c.problem.pool_weight[source_row[r]];
  }
  const MoeReference moved = cpu_moe_reference(shuffled, c.arrival, c.w1, c.w2);
  EXPECT_EQ(moved.combine_bf16, ref.combine_bf16);
  for (int rank = 0; rank < c.problem.num_ranks; ++rank)
    for (std::size_t i = 0; i < ref.combine[rank].size(); ++i) {
      const double a = ref.combine[rank][i], b = moved.combine[rank][i];
      ASSERT_TRUE((std::isnan(a) && std::isnan(b)) || a == b) << "rank " << rank << " element " << i;
    }
  const int inter = c.problem.intermediate;
  for (std::uint64_t r = 0; r < source_row.size(); ++r)
    for (int j = 0; j < inter; ++j)
      ASSERT_EQ(moved.act_bf16[r * inter + j], ref.act_bf16[source_row[r] * inter + j]);
}

TEST(MoeCpuReference, WritesExactlyTheExpectedSlots) {
  const Case c = make_case(15);
  const MoeReference ref = cpu_moe_reference(c.problem, c.arrival, c.w1, c.w2);
  const ExpectedSlots expected = expected_written_slots(c.problem);
  const int h = c.problem.hidden;
  for (int rank = 0; rank < c.problem.num_ranks; ++rank)
    for (int slot = 0; slot < c.problem.slots_per_rank(); ++slot)
      for (int col = 0; col < h; ++col) {
        const std::size_t i = std::size_t(slot) * h + col;
        ASSERT_EQ(std::isnan(ref.combine[rank][i]), !expected.is_written(rank, slot)) << rank << "/" << slot;
        ASSERT_EQ(ref.combine_bf16[rank][i] == kBf16Poison, !expected.is_written(rank, slot)) << rank << "/" << slot;
      }
}

TEST(MoeCpuReference, RejectsMismatchedInputs) {
  const Case c = make_case(16);
  const auto field_of = [&](const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& w1,
                            const std::vector<std::uint16_t>& w2) {
    try {
      cpu_moe_reference(c.problem, a, w1, w2);
    } catch (const Error& e) {
      return e.field();
    }
    return std::string("(no error)");
  };
  auto shorter = [](std::vector<std::uint16_t> v) {
    v.pop_back();
    return v;
  };
  EXPECT_EQ(field_of(shorter(c.arrival), c.w1, c.w2), "arrival");
  EXPECT_EQ(field_of(c.arrival, shorter(c.w1), c.w2), "w1");
  EXPECT_EQ(field_of(c.arrival, c.w1, shorter(c.w2)), "w2");
}

}  // namespace
}  // namespace xs::moe
