// xstage bench layer: merging per-rank measurements of one point into the figure the paper reports (per trial
// the slowest rank, then median/p10/p90 over trials) and per-rank verification counts into one. Plain C++.
// Used by the rank-aware loops (bench/app_bench.hpp, bench/runner.hpp) to merge the points rank 0 gathers.
#pragma once
#include <cstdint>
#include <vector>

#include "xs/common/stats.hpp"
#include "xs/report/app_point.hpp"
#include "xs/report/records.hpp"

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

// One application point measured on every rank -> the point the result file holds. One rank: returned as it
// is. Several (the same id and axes on every rank, else input_error naming the rank):
//   status   the worst over ranks (failed > skipped > ok) with "rank r: " before the first such rank's
//            reason; when not ok on every rank, no times (a subset of ranks is not the run's time);
//   variants merge_rank_trials per variant (per trial the slowest rank, then median/p10/p90); every rank
//            must report the same variants;
//   paired   "<a>_minus_<b>" recomputed per trial from the merged a and b (the same-round difference of the
//            slowest ranks); a key not naming two variants is dropped and listed in extra.ranks;
//   verification  checked/passed only when on every rank; detail of the first failing rank; values: rank
//            0's plus "by_rank" (every rank's values);
//   prediction and extra: rank 0's, extra.ranks = {num_ranks, rule, by_rank: status and medians}.
report::AppPoint merge_rank_points(const std::vector<report::AppPoint>& by_rank);

// One remote-store point (a PointRecord: bench/runner.hpp's sweeps, xstage-calibrate) measured on every rank ->
// the record the result file holds. One rank: returned as it is. Several (the same spec on every rank, else
// input_error naming the rank):
//   skipped       when skipped on any rank, reason "rank r: <reason>" of the first such rank; no times;
//   times         issue_time_s, issue_time_max_s, period_s, completion_s: merge_rank_trials per statistic
//                 (per repetition the slowest rank, then median/p10/p90); a statistic is kept only when every
//                 rank has it. The ranks' repetitions are not synchronized (one barrier per point, none between
//                 repetitions), so the i-th repetitions of two ranks overlap in time only roughly;
//   verification  checked only when checked on every rank; bytes and wrong words summed;
//   clock         sm_clock_hz the lowest known over ranks, clock_flagged when flagged on any rank;
//   prediction    none (a prediction is attached after the merge).
PointRecord merge_rank_records(const std::vector<PointRecord>& by_rank);

}  // namespace xs::bench
