// xstage moe host layer: the seeded routing generator of the MegaMoE experiment (design notes section 2):
// P source ranks x T tokens each choose top-k of E experts by a Zipf-biased Gaussian score; the emulated
// rank is the rank whose experts receive the most (token, top-k) pairs. Plain C++, deterministic per seed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace xs::moe {

struct RoutingParams {
  int num_ranks = 8;          // P, EP degree; expert e lives on rank e / (E / P)
  int tokens_per_rank = 0;    // T, tokens each source rank routes
  int num_experts = 0;        // E, routed experts (a multiple of P)
  int top_k = 0;              // experts per token, 1 <= k <= E
  double zipf_alpha = 0;      // alpha: p_i ~ i^-alpha; 0 = balanced, 0.5 = skewed, 1 = heavy
  double gain = 1;            // weight of the popularity bias log(E p) in the score
  std::uint64_t seed = 1;
};

struct Routing {
  RoutingParams params;
  // expert_popularity_rank[e] = pi(e) in [0, E): expert e gets p_{pi(e)+1} (0 = most popular). Shared by all ranks.
  std::vector<std::int32_t> expert_popularity_rank;
  // [P][T][top_k]: chosen experts of token t of source rank r, by descending score (k = 0 the highest).
  std::vector<std::int32_t> experts;
  // [P][T][top_k]: softmax over the k chosen scores (sums to 1 per token).
  std::vector<float> weights;
  std::vector<std::uint64_t> pairs_per_rank;    // [P] (token, k) pairs routed to each rank's experts
  std::vector<std::uint64_t> pairs_per_expert;  // [E]
  int emulated_rank = 0;  // argmax of pairs_per_rank, lowest rank on ties

  int experts_per_rank() const { return params.num_experts / params.num_ranks; }
  int rank_of_expert(int expert) const { return expert / experts_per_rank(); }
  std::size_t pair_index(int src_rank, int token, int k) const {
    return (static_cast<std::size_t>(src_rank) * params.tokens_per_rank + token) * params.top_k + k;
  }
  int expert(int src_rank, int token, int k) const { return experts[pair_index(src_rank, token, k)]; }
  float weight(int src_rank, int token, int k) const { return weights[pair_index(src_rank, token, k)]; }
};

// The experiment's named routings (design notes section 2): "balanced" (alpha 0), "skewed" (alpha 0.5,
// gain 1), "heavy" (alpha 1, gain 1, the extra point).
struct RoutingMode {
  const char* name;
  double zipf_alpha;
  double gain;
};
// input_error("routing", ...) listing the accepted names for anything else.
const RoutingMode& find_routing_mode(const std::string& name);

// Throws input_error naming the field: P, T, E, k < 1, E not a multiple of P, k > E, alpha < 0 or not
// finite, gain not finite. O(P T E) time, O(P T k + E) memory.
Routing generate_routing(const RoutingParams& params);

// max over ranks / mean over ranks of pairs_per_rank (1 = perfectly balanced).
double rank_load_imbalance(const Routing& routing);

}  // namespace xs::moe
