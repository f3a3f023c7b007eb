// xstage bench layer: per-rank measurement and verification merge (see rank_merge.hpp). Not wired into any run yet.
#include "bench/rank_merge.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.hpp"

namespace xs::bench {

Summary merge_rank_trials(const std::vector<std::vector<double>>& seconds_by_rank) {
  if (seconds_by_rank.empty()) throw input_error("ranks", "no rank reported a measurement; need at least one");
  const std::size_t num_trials = seconds_by_rank.front().size();
  if (num_trials == 0) throw input_error("rank 0", "reported no trials; every rank must report the same trials");
  for (std::size_t r = 0; r < seconds_by_rank.size(); ++r) {
    const auto& trials = seconds_by_rank[r];
    if (trials.size() != num_trials) {
      throw input_error("rank " + std::to_string(r),
                        "ragged input: " + std::to_string(trials.size()) + " trials, rank 0 has " +
                            std::to_string(num_trials) + "; every rank must report the same trials");
    }
    for (std::size_t t = 0; t < num_trials; ++t) {
      if (!std::isfinite(trials[t])) {
        throw input_error("rank " + std::to_string(r), "trial " + std::to_string(t) + " time is not finite");
      }
    }
  }
  std::vector<double> slowest_s(num_trials);
  for (std::size_t t = 0; t < num_trials; ++t) {
    double max_s = seconds_by_rank.front()[t];
    for (const auto& trials : seconds_by_rank) max_s = std::max(max_s, trials[t]);
    slowest_s[t] = max_s;
  }
  return summarize(std::move(slowest_s));
}

RankVerification merge_rank_verification(const std::vector<RankVerification>& by_rank) {
  if (by_rank.empty()) throw input_error("ranks", "no rank reported a verification; need at least one");
  RankVerification merged;
  merged.verified = true;
  for (const auto& v : by_rank) {
    merged.verified = merged.verified && v.verified;
    merged.num_wrong += v.num_wrong;
    merged.num_unwritten += v.num_unwritten;
    merged.num_unexpected += v.num_unexpected;
  }
  return merged;
}

}  // namespace xs::bench
