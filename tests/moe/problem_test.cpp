// xstage moe unit tests: the emulated rank's problem (pool, routing tables, expert ranges, arrival rows,
// counts), the tile-shape checks and the expected Combine slots, against the routing it was built from.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "xs/common/error.hpp"
#include "xs/moe/point/problem.hpp"
#include "xs/moe/point/routing.hpp"

namespace xs::moe {
namespace {

Routing make_routing(int ranks, int tokens, int experts, int top_k, double alpha, std::uint64_t seed) {
  RoutingParams p;
  p.num_ranks = ranks;
  p.tokens_per_rank = tokens;
  p.num_experts = experts;
  p.top_k = top_k;
  p.zipf_alpha = alpha;
  p.seed = seed;
  return generate_routing(p);
}

using Pair = std::tuple<int, int, int>;  // (src_rank, token, k)

// Every (src_rank, token, k) whose expert lives on the emulated rank, with its local expert.
std::map<Pair, int> local_pairs(const Routing& r) {
  std::map<Pair, int> pairs;
  const auto& p = r.params;
  for (int rank = 0; rank < p.num_ranks; ++rank)
    for (int t = 0; t < p.tokens_per_rank; ++t)
      for (int k = 0; k < p.top_k; ++k)
        if (r.rank_of_expert(r.expert(rank, t, k)) == r.emulated_rank)
          pairs[{rank, t, k}] = r.expert(rank, t, k) - r.emulated_rank * r.experts_per_rank();
  return pairs;
}

void check_problem(const Routing& r, const MoeProblem& pb) {
  const auto expected = local_pairs(r);
  ASSERT_EQ(pb.pool_arrival.size(), pb.num_pool_rows());
  ASSERT_EQ(pb.expert_first_block.size(), static_cast<std::size_t>(pb.num_local_experts + 1));
  EXPECT_EQ(pb.expert_first_block.front(), 0u);
  EXPECT_EQ(pb.expert_first_block.back(), pb.num_row_blocks);
  EXPECT_EQ(pb.num_received_pairs, expected.size());
  EXPECT_EQ(pb.num_received_pairs, r.pairs_per_rank[r.emulated_rank]);

  std::map<Pair, int> seen;
  std::uint64_t remote = 0;
  for (int e = 0; e < pb.num_local_experts; ++e) {
    EXPECT_EQ(pb.pairs_per_local_expert[e], r.pairs_per_expert[pb.first_expert + e]);
    const std::uint64_t blocks = pb.expert_first_block[e + 1] - pb.expert_first_block[e];
    EXPECT_EQ(blocks, (pb.pairs_per_local_expert[e] + 127) / 128)
        << "expert " << e << " padded to whole 128-row blocks";
    for (std::uint32_t b = pb.expert_first_block[e]; b < pb.expert_first_block[e + 1]; ++b)
      ASSERT_EQ(pb.row_block_expert[b], static_cast<std::uint32_t>(e));
    const std::uint64_t first = std::uint64_t{pb.expert_first_block[e]} * 128,
                        end = std::uint64_t{pb.expert_first_block[e + 1]} * 128;
    Pair previous{-1, -1, -1};
    for (std::uint64_t row = first; row < end; ++row) {
      const bool valid = row - first < pb.pairs_per_local_expert[e];
      if (!valid) {  // padding: after the valid rows, every field marked
        EXPECT_EQ(pb.pool_arrival[row], -1);
        EXPECT_EQ(pb.pool_dst_rank[row], -1);
        EXPECT_EQ(pb.pool_dst_slot[row], -1);
        EXPECT_EQ(pb.pool_weight[row], 0.0f);
        continue;
      }
      const int arrival = pb.pool_arrival[row], rank = pb.pool_dst_rank[row], slot = pb.pool_dst_slot[row];
      ASSERT_GE(arrival, 0);
      ASSERT_LT(arrival, pb.num_arrivals());
      ASSERT_GE(rank, 0);
      ASSERT_LT(rank, pb.num_ranks);
      ASSERT_GE(slot, 0);
      ASSERT_LT(slot, pb.slots_per_rank());
      const Pair pair{rank, slot / pb.top_k, slot % pb.top_k};
      EXPECT_EQ(pb.arrival_src_rank[arrival], rank);
      EXPECT_EQ(pb.arrival_token[arrival], slot / pb.top_k);
      const auto it = expected.find(pair);
      ASSERT_NE(it, expected.end()) << "pool row " << row << " holds a pair not routed here";
      EXPECT_EQ(it->second, e) << "pool row " << row << " sits in the wrong expert's range";
      EXPECT_EQ(pb.pool_weight[row], r.weight(rank, slot / pb.top_k, slot % pb.top_k));
      EXPECT_LT(previous, pair) << "expert rows in (src_rank, token, k) order";
      previous = pair;
      EXPECT_EQ(++seen[pair], 1) << "pair appears twice";
      remote += rank != pb.emulated_rank;
    }
  }
  EXPECT_EQ(seen.size(), expected.size()) << "every routed pair appears in the pool";
  EXPECT_EQ(pb.num_remote_pairs, remote);

  // Arrival rows: strictly increasing (src_rank, token), exactly the tokens with a local pair.
  std::set<std::pair<int, int>> tokens;
  for (const auto& [pair, e] : expected) tokens.insert({std::get<0>(pair), std::get<1>(pair)});
  ASSERT_EQ(static_cast<std::size_t>(pb.num_arrivals()), tokens.size());
  int i = 0;
  for (const auto& tok : tokens) {
    EXPECT_EQ(pb.arrival_src_rank[i], tok.first);
    EXPECT_EQ(pb.arrival_token[i], tok.second);
    ++i;
  }
}

TEST(Problem, PoolHoldsEveryRoutedPairOnce) {
  for (double alpha : {0.0, 0.5, 1.0}) {
    const Routing r = make_routing(4, 96, 16, 4, alpha, 17);
    SCOPED_TRACE(alpha);
    check_problem(r, build_problem(r, 256, 128));
  }
}

TEST(Problem, MultiBlockExpertsAndEmptyExperts) {
  // Few experts per rank and many tokens: experts span several 128-row blocks.
  const Routing r = make_routing(2, 700, 4, 2, 0.5, 23);
  const MoeProblem pb = build_problem(r, 128, 64);
  check_problem(r, pb);
  EXPECT_GT(pb.num_row_blocks, 4u);
  EXPECT_GT(pb.num_remote_pairs, 0u);
  EXPECT_LT(pb.num_remote_pairs, pb.num_received_pairs);
  // Heavy skew with P = 8, E = 64, k = 1 and few tokens leaves some local experts without any pair:
  // they own no row block.
  const Routing sparse = make_routing(8, 8, 64, 1, 1.0, 5);
  const MoeProblem sp = build_problem(sparse, 128, 64);
  check_problem(sparse, sp);
  int empty = 0;
  for (int e = 0; e < sp.num_local_experts; ++e) empty += sp.expert_first_block[e] == sp.expert_first_block[e + 1];
  EXPECT_GT(empty, 0);
}

TEST(Problem, ExpectedSlotsAreTheValidPoolRows) {
  const Routing r = make_routing(4, 64, 16, 4, 0.5, 29);
  const MoeProblem pb = build_problem(r, 256, 128);
  const ExpectedSlots slots = expected_written_slots(pb);
  ASSERT_EQ(slots.num_ranks, 4);
  ASSERT_EQ(slots.slots_per_rank, 64 * 4);
  std::uint64_t total = 0;
  for (int rank = 0; rank < 4; ++rank) {
    for (int t = 0; t < 64; ++t)
      for (int k = 0; k < 4; ++k)
        EXPECT_EQ(slots.is_written(rank, t * 4 + k), r.rank_of_expert(r.expert(rank, t, k)) == pb.emulated_rank);
    total += slots.count(rank);
  }
  EXPECT_EQ(total, pb.num_received_pairs);
}

TEST(Problem, TileSpaceAndShapeChecks) {
  const Routing r = make_routing(4, 64, 16, 4, 0.5, 31);
  const MoeProblem pb = build_problem(r, 1408, 1408);
  const auto t128 = pb.tile_space(128);
  EXPECT_EQ(t128.num_row_blocks, pb.num_row_blocks);
  EXPECT_EQ(t128.l1_tiles_per_row, 2u * 1408 / 128);
  EXPECT_EQ(t128.l2_tiles_per_row, 1408u / 128);
  const auto field_of = [](const MoeProblem& p, int block_n) {
    try {
      p.tile_space(block_n);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      return e.field();
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(field_of(pb, 256), "hidden");  // 1408 = 5.5 x 256
  EXPECT_EQ(field_of(pb, 64), "block_n");
  EXPECT_EQ(field_of(build_problem(r, 256, 96), 128), "intermediate");  // 2I = 192
  EXPECT_EQ(field_of(build_problem(r, 256, 64), 256), "intermediate");  // 2I = 128 < 256
  EXPECT_EQ(build_problem(r, 4096, 2048).tile_space(256).l1_tiles_per_row, 16u);
  EXPECT_THROW(build_problem(r, 0, 128), Error);
  EXPECT_THROW(build_problem(r, 128, -1), Error);
  try {
    validate_tile_shape(1408, 1408, 256);
    FAIL() << "expected input_error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("multiple of b_n = 256"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace xs::moe
