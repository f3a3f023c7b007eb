// xstage moe unit tests: the seeded Zipf top-k routing generator (determinism, validity of every token's
// choice, balanced vs skewed load, the emulated rank) and its input checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "xs/common/error.hpp"
#include "xs/moe/point/routing.hpp"

namespace xs::moe {
namespace {

RoutingParams small_params(double alpha, std::uint64_t seed) {
  RoutingParams p;
  p.num_ranks = 8;
  p.tokens_per_rank = 1024;
  p.num_experts = 64;
  p.top_k = 8;
  p.zipf_alpha = alpha;
  p.gain = 1;
  p.seed = seed;
  return p;
}

TEST(Routing, SameSeedSameRouting) {
  const Routing a = generate_routing(small_params(0.5, 7));
  const Routing b = generate_routing(small_params(0.5, 7));
  EXPECT_EQ(a.experts, b.experts);
  EXPECT_EQ(a.weights, b.weights);
  EXPECT_EQ(a.expert_popularity_rank, b.expert_popularity_rank);
  EXPECT_EQ(a.emulated_rank, b.emulated_rank);
}

TEST(Routing, DifferentSeedsDiffer) {
  const Routing a = generate_routing(small_params(0.5, 7));
  const Routing b = generate_routing(small_params(0.5, 8));
  EXPECT_NE(a.experts, b.experts);
  EXPECT_NE(a.expert_popularity_rank, b.expert_popularity_rank);
}

// Pins the generator (mt19937_64 raw bits + our own Fisher-Yates and polar Box-Muller): a change of algorithm,
// draw order or distribution shows up here, so a recorded seed keeps meaning the same routing.
TEST(Routing, RecordedSeedReproduces) {
  RoutingParams p;
  p.num_ranks = 2;
  p.tokens_per_rank = 3;
  p.num_experts = 8;
  p.top_k = 2;
  p.zipf_alpha = 0.5;
  p.seed = 42;
  const Routing r = generate_routing(p);
  const std::vector<std::int32_t> expected = {5, 7, 7, 0, 3, 1, 4, 7, 7, 2, 1, 3};
  EXPECT_EQ(r.experts, expected);
}

TEST(Routing, EveryTokenChoosesDistinctExpertsWithUnitWeight) {
  for (double alpha : {0.0, 0.5, 1.0}) {
    const Routing r = generate_routing(small_params(alpha, 3));
    const auto& p = r.params;
    for (int rank = 0; rank < p.num_ranks; ++rank) {
      for (int t = 0; t < p.tokens_per_rank; ++t) {
        std::set<int> chosen;
        double sum = 0;
        for (int k = 0; k < p.top_k; ++k) {
          const int e = r.expert(rank, t, k);
          ASSERT_GE(e, 0);
          ASSERT_LT(e, p.num_experts);
          chosen.insert(e);
          const float w = r.weight(rank, t, k);
          ASSERT_GT(w, 0.0f);
          if (k > 0) {
            ASSERT_LE(w, r.weight(rank, t, k - 1)) << "k orders by descending score";
          }
          sum += w;
        }
        ASSERT_EQ(static_cast<int>(chosen.size()), p.top_k) << "rank " << rank << " token " << t;
        ASSERT_NEAR(sum, 1.0, 1e-5);
      }
    }
  }
}

TEST(Routing, CountsMatchChoicesAndEmulatedRankIsArgmax) {
  const Routing r = generate_routing(small_params(1.0, 11));
  const auto& p = r.params;
  std::vector<std::uint64_t> per_rank(p.num_ranks, 0), per_expert(p.num_experts, 0);
  for (std::int32_t e : r.experts) {
    ++per_expert[e];
    ++per_rank[e / (p.num_experts / p.num_ranks)];
  }
  EXPECT_EQ(per_rank, r.pairs_per_rank);
  EXPECT_EQ(per_expert, r.pairs_per_expert);
  for (int rank = 0; rank < p.num_ranks; ++rank) {
    if (rank < r.emulated_rank) {
      EXPECT_LT(per_rank[rank], per_rank[r.emulated_rank]) << "ties go to the lowest rank";
    } else {
      EXPECT_LE(per_rank[rank], per_rank[r.emulated_rank]);
    }
  }
  EXPECT_EQ(r.rank_of_expert(p.num_experts - 1), p.num_ranks - 1);
}

TEST(Routing, SkewConcentratesLoadOnPopularExperts) {
  const Routing balanced = generate_routing(small_params(0.0, 5));
  const Routing skewed = generate_routing(small_params(0.5, 5));
  const Routing heavy = generate_routing(small_params(1.0, 5));
  // Balanced: 8192 pairs per expert expected (1024 * 8 * 8 / 64), binomial spread ~ 1%: ranks within a few %.
  EXPECT_LT(rank_load_imbalance(balanced), 1.05);
  EXPECT_GT(rank_load_imbalance(skewed), rank_load_imbalance(balanced));
  EXPECT_GT(rank_load_imbalance(heavy), rank_load_imbalance(skewed));
  // The most popular expert (pi = 0) receives more than the least popular (pi = E - 1) under skew.
  const auto by_popularity = [](const Routing& r, int pi) {
    const auto it = std::find(r.expert_popularity_rank.begin(), r.expert_popularity_rank.end(), pi);
    return r.pairs_per_expert[it - r.expert_popularity_rank.begin()];
  };
  EXPECT_GT(by_popularity(heavy, 0), 4 * by_popularity(heavy, 63));
  EXPECT_GT(by_popularity(skewed, 0), by_popularity(skewed, 63));
}

// Two experts, top-1: the popular one wins iff z1 - z2 > -(b1 - b2), z1 - z2 ~ N(0, 2), so its share is
// Phi((b1 - b2) / sqrt 2) with b_i = gain log(E p_i). alpha = 1: p = (2/3, 1/3), b1 - b2 = log 2 -> 0.688.
// Checks the Gaussian's scale and the Zipf bias together (N(0, 2) scores would give 0.635).
TEST(Routing, PopularShareFollowsTheScoreDistribution) {
  RoutingParams p;
  p.num_ranks = 2;
  p.tokens_per_rank = 65536;
  p.num_experts = 2;
  p.top_k = 1;
  p.seed = 77;
  for (const double gain : {1.0, 2.0}) {
    p.zipf_alpha = 1.0;
    p.gain = gain;
    const Routing r = generate_routing(p);
    const int popular = r.expert_popularity_rank[0] == 0 ? 0 : 1;
    const double share = static_cast<double>(r.pairs_per_expert[popular]) / (2.0 * 65536);
    const double expected = 0.5 * std::erfc(-(gain * std::log(2.0) / std::sqrt(2.0)) / std::sqrt(2.0));
    EXPECT_NEAR(share, expected, 0.006) << "gain " << gain;  // binomial sd 0.0013
  }
}

TEST(Routing, NamedModes) {
  EXPECT_EQ(find_routing_mode("balanced").zipf_alpha, 0.0);
  EXPECT_EQ(find_routing_mode("skewed").zipf_alpha, 0.5);
  EXPECT_EQ(find_routing_mode("skewed").gain, 1.0);
  EXPECT_EQ(find_routing_mode("heavy").zipf_alpha, 1.0);
  try {
    find_routing_mode("zipf");
    FAIL() << "expected input_error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "routing");
    EXPECT_NE(std::string(e.what()).find("balanced, skewed, heavy"), std::string::npos);
  }
}

TEST(Routing, RejectsBadParameters) {
  const auto field_of = [](RoutingParams p) {
    try {
      generate_routing(p);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      return e.field();
    }
    return std::string("(no error)");
  };
  RoutingParams p = small_params(0.5, 1);
  p.num_experts = 60;  // not a multiple of P = 8
  EXPECT_EQ(field_of(p), "num_experts");
  p = small_params(0.5, 1);
  p.top_k = 65;
  EXPECT_EQ(field_of(p), "top_k");
  p.top_k = 0;
  EXPECT_EQ(field_of(p), "top_k");
  p = small_params(-0.5, 1);
  EXPECT_EQ(field_of(p), "zipf_alpha");
  p = small_params(0.5, 1);
  p.tokens_per_rank = 0;
  EXPECT_EQ(field_of(p), "tokens_per_rank");
  p = small_params(0.5, 1);
  p.num_ranks = 0;
  EXPECT_EQ(field_of(p), "num_ranks");
  p = small_params(0.5, 1);
  p.gain = NAN;
  EXPECT_EQ(field_of(p), "gain");
}

}  // namespace
}  // namespace xs::moe
