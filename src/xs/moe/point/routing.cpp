// xstage moe host layer: the seeded Zipf-biased top-k routing generator (see routing.hpp).
#include "xs/moe/point/routing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>

#include "xs/common/error.hpp"

namespace xs::moe {
namespace {

// Our own transforms of std::mt19937_64's raw 64-bit output (whose sequence the standard fixes): the std
// distributions are implementation-defined, so they would make a seed mean different routings under
// different standard libraries. Only libm's log remains (last-ulp differences at most).
double uniform_open0(std::mt19937_64& rng) {  // (0, 1]: 53 random bits
  return (static_cast<double>(rng() >> 11) + 1.0) * 0x1.0p-53;
}

std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {  // [0, n), unbiased by rejection
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
  std::uint64_t x;
  do x = rng(); while (x >= limit);
  return x % n;
}

// Marsaglia's polar form of Box-Muller: a point (u, v) uniform in the unit disc gives two independent
// N(0, 1) draws with one log and one sqrt (no sin/cos; 21% of points are rejected). The second draw is kept
// for the next call.
class NormalSource {
 public:
  explicit NormalSource(std::mt19937_64& rng) : rng_(rng) {}
  double next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = 2.0 * uniform_open0(rng_) - 1.0;
      v = 2.0 * uniform_open0(rng_) - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double scale = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * scale;
    has_spare_ = true;
    return u * scale;
  }

 private:
  std::mt19937_64& rng_;
  double spare_ = 0;
  bool has_spare_ = false;
};

void validate(const RoutingParams& p) {
  if (p.num_ranks < 1) throw input_error("num_ranks", "P must be an integer >= 1, got " + std::to_string(p.num_ranks));
  if (p.tokens_per_rank < 1)
    throw input_error("tokens_per_rank", "T must be an integer >= 1, got " + std::to_string(p.tokens_per_rank));
  if (p.num_experts < 1)
    throw input_error("num_experts", "E must be an integer >= 1, got " + std::to_string(p.num_experts));
  if (p.num_experts % p.num_ranks != 0)
    throw input_error("num_experts", "E = " + std::to_string(p.num_experts) + " must be a multiple of P = " +
                                         std::to_string(p.num_ranks) + " (expert e lives on rank e / (E/P))");
  if (p.top_k < 1 || p.top_k > p.num_experts)
    throw input_error("top_k", "k must be in [1, E = " + std::to_string(p.num_experts) + "], got " +
                                   std::to_string(p.top_k));
  if (!std::isfinite(p.zipf_alpha) || p.zipf_alpha < 0)
    throw input_error("zipf_alpha", "alpha must be a finite number >= 0 (0 = balanced)");
  if (!std::isfinite(p.gain)) throw input_error("gain", "the Zipf gain must be a finite number");
}

}  // namespace

Routing generate_routing(const RoutingParams& params) {
  validate(params);
  const int num_experts = params.num_experts, top_k = params.top_k;
  Routing out;
  out.params = params;
  std::mt19937_64 rng(params.seed);

  // pi: a seeded permutation (Fisher-Yates), shared by all ranks: expert e has popularity rank pi(e).
  std::vector<std::int32_t> order(num_experts);
  std::iota(order.begin(), order.end(), 0);
  for (int i = num_experts - 1; i > 0; --i)
    std::swap(order[i], order[uniform_below(rng, static_cast<std::uint64_t>(i) + 1)]);
  out.expert_popularity_rank.resize(num_experts);
  for (int i = 0; i < num_experts; ++i) out.expert_popularity_rank[order[i]] = i;

  // bias[e] = gain * log(E p_{pi(e)}), p_i = i^-alpha / sum_j j^-alpha (i = 1..E); 0 for alpha = 0.
  double norm = 0;
  for (int i = 1; i <= num_experts; ++i) norm += std::pow(static_cast<double>(i), -params.zipf_alpha);
  std::vector<double> bias(num_experts);
  for (int e = 0; e < num_experts; ++e) {
    const double p = std::pow(static_cast<double>(out.expert_popularity_rank[e] + 1), -params.zipf_alpha) / norm;
    bias[e] = params.gain * std::log(num_experts * p);
  }

  const std::size_t num_pairs = static_cast<std::size_t>(params.num_ranks) * params.tokens_per_rank * top_k;
  out.experts.resize(num_pairs);
  out.weights.resize(num_pairs);
  out.pairs_per_rank.assign(params.num_ranks, 0);
  out.pairs_per_expert.assign(num_experts, 0);

  NormalSource normal(rng);
  std::vector<double> best_score(top_k);
  std::vector<std::int32_t> best_expert(top_k);
  const int experts_per_rank = num_experts / params.num_ranks;
  for (int r = 0; r < params.num_ranks; ++r) {
    for (int t = 0; t < params.tokens_per_rank; ++t) {
      // Top-k by insertion into a descending list; a strictly higher score is needed to displace, so
      // (measure-zero) ties keep the lower expert id.
      int count = 0;
      for (int e = 0; e < num_experts; ++e) {
        const double s = normal.next() + bias[e];
        if (count == top_k && s <= best_score[top_k - 1]) continue;
        int pos = count < top_k ? count++ : top_k - 1;
        while (pos > 0 && best_score[pos - 1] < s) {
          best_score[pos] = best_score[pos - 1];
          best_expert[pos] = best_expert[pos - 1];
          --pos;
        }
        best_score[pos] = s;
        best_expert[pos] = e;
      }
      // Weights: softmax over the k chosen scores only (the renormalised top-k gate most MoE models use,
      // e.g. Mixtral/Qwen-style); subtracting the top score keeps exp() in range.
      double sum = 0;
      for (int k = 0; k < top_k; ++k) sum += std::exp(best_score[k] - best_score[0]);
      const std::size_t base = out.pair_index(r, t, 0);
      for (int k = 0; k < top_k; ++k) {
        out.experts[base + k] = best_expert[k];
        out.weights[base + k] = static_cast<float>(std::exp(best_score[k] - best_score[0]) / sum);
        ++out.pairs_per_expert[best_expert[k]];
        ++out.pairs_per_rank[best_expert[k] / experts_per_rank];
      }
    }
  }
  out.emulated_rank = static_cast<int>(std::max_element(out.pairs_per_rank.begin(), out.pairs_per_rank.end()) -
                                       out.pairs_per_rank.begin());  // first maximum = lowest rank on ties
  return out;
}

const RoutingMode& find_routing_mode(const std::string& name) {
  static const RoutingMode kModes[] = {{"balanced", 0.0, 1.0}, {"skewed", 0.5, 1.0}, {"heavy", 1.0, 1.0}};
  for (const RoutingMode& m : kModes)
    if (name == m.name) return m;
  throw input_error("routing", "unknown routing \"" + name + "\"; accepted: balanced, skewed, heavy");
}

double rank_load_imbalance(const Routing& routing) {
  const auto& pairs = routing.pairs_per_rank;
  if (pairs.empty()) return 0;
  const double total = std::accumulate(pairs.begin(), pairs.end(), 0.0);
  if (total == 0) return 0;
  return *std::max_element(pairs.begin(), pairs.end()) / (total / pairs.size());
}

}  // namespace xs::moe
