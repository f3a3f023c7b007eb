// xstage moe unit tests: megamoe on P ranks, where rank r plays EP rank r (moe_bench sets
// routing.emulated_rank = r): the P ranks' problems built from one routing partition its (token, top-k) pairs,
// so every pair is computed once, every Combine slot is written by exactly one rank, and the slowest rank of a
// merged trial is the most loaded one (the rank the one-GPU emulation picks).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "xs/moe/point/problem.hpp"
#include "xs/moe/point/routing.hpp"

namespace xs::moe {
namespace {

Routing skewed_routing(int ranks) {
  RoutingParams p;
  p.num_ranks = ranks;
  p.tokens_per_rank = 96;
  p.num_experts = 32;
  p.top_k = 4;
  p.zipf_alpha = 0.8;
  p.seed = 7;
  return generate_routing(p);
}

TEST(MoeRankShare, TheRanksProblemsPartitionEveryPairAndSlot) {
  for (int ranks : {2, 4, 8}) {
    SCOPED_TRACE(ranks);
    const Routing routing = skewed_routing(ranks);
    const std::size_t slots = static_cast<std::size_t>(ranks) * routing.params.tokens_per_rank * routing.params.top_k;
    std::vector<int> writers(slots, 0);
    std::uint64_t received = 0;
    for (int r = 0; r < ranks; ++r) {
      Routing mine = routing;
      mine.emulated_rank = r;
      const MoeProblem pb = build_problem(mine, 256, 128);
      EXPECT_EQ(pb.emulated_rank, r);
      EXPECT_EQ(pb.first_expert, r * routing.experts_per_rank());
      EXPECT_EQ(pb.num_received_pairs, routing.pairs_per_rank[static_cast<std::size_t>(r)]);
      received += pb.num_received_pairs;
      const ExpectedSlots e = expected_written_slots(pb);
      for (std::size_t i = 0; i < slots; ++i) writers[i] += e.written[i];
    }
    EXPECT_EQ(received, slots);  // every (src, token, k) pair on exactly one rank
    for (std::size_t i = 0; i < slots; ++i) ASSERT_EQ(writers[i], 1) << "slot " << i;
  }
}

TEST(MoeRankShare, TheOneGpuEmulationPicksTheRankThatBoundsTheStep) {
  const Routing routing = skewed_routing(8);
  std::uint64_t most = 0;
  for (auto n : routing.pairs_per_rank) most = std::max(most, n);
  EXPECT_EQ(routing.pairs_per_rank[static_cast<std::size_t>(routing.emulated_rank)], most);
  EXPECT_GT(rank_load_imbalance(routing), 1.0);  // skewed: the ranks differ, so the per-trial max matters
}

}  // namespace
}  // namespace xs::moe
