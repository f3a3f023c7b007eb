// xstage bench layer: merging per-rank measurements of one point into the figure the paper reports (per trial
// the slowest rank, then median/p10/p90 over trials) and per-rank verification counts into one. Plain C++.
// Host-side building block for issue 14: NOT wired into any run yet (nothing gathers ranks today).
#pragma once
#include <cstdint>
#include <vector>

#include "common/stats.hpp"

namespace xs::bench {

// seconds_by_rank[rank][trial_idx]: each rank's time for the same trials. A trial ends when its slowest rank ends,
// so per trial the max over ranks is kept; the Summary (median, p10, p90, min, max, samples) is over those maxima.
// Throws input_error for no ranks, a rank with no trials, ragged input (ranks with different trial counts)
// or a non-finite time, naming the rank.
Summary merge_rank_trials(const std::vector<std::vector<double>>& seconds_by_rank);

// One rank's data check of a point (same meaning as the single-GPU verification counts).
struct RankVerification {
  bool verified = false;
  std::uint64_t num_wrong = 0;       // written with the wrong value
  std::uint64_t num_unwritten = 0;   // expected but never written
  std::uint64_t num_unexpected = 0;  // written where nothing was expected
};

// Counts summed over ranks; verified only when every rank verified. Empty input -> input_error.
RankVerification merge_rank_verification(const std::vector<RankVerification>& by_rank);

}  // namespace xs::bench
