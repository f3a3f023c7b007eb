// xstage attention host layer: what the instrumented launches' per-tile records (src/xs/kernels/attention
// TileRecord) say about the sender side: the sender-side span of a launch (issue 13 item 3) and how the
// persistent CTAs' store bursts align in time (item 5's input). Plain C++; the CPU tests feed hand-made
// timelines.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "xs/kernels/attention/layout.cuh"

namespace xs::attention {

// Sender-side span of one launch, on the global clock (%globaltimer): from the earliest tile start
// (qloop_start_ns: the first CTA began its first tile) to the latest store_end_ns (the last warpgroup had
// every thread's stores issued), over the written records. Excludes the launch latency before the first
// tile and the post-issue drain after the last store. 0 when no record is written.
double launch_sender_span_s(const xs::kernels::attention::TileRecord* records, std::size_t count);

// The same launch's [earliest tile start, latest store issued] in %globaltimer ns; {0, 0} when none written.
std::pair<std::uint64_t, std::uint64_t> launch_bounds_ns(const xs::kernels::attention::TileRecord* records,
                                                         std::size_t count);

// Per-record durations of one launch in seconds (SM cycles / sm_clock_hz), written records only: every record's
// Q-loop per KV tile (sigma); the Q-loop, store span and (completion-coupled) fence span of the records that
// stored their tile. A split-tail piece that only left its partial (TileRecord::partial_only) has a shorter
// Q-loop, no stores and no fence: it counts in sigma only.
struct RecordDurations {
  std::vector<double> sigma_s_per_kv_tile, qloop_s, store_span_s, fence_span_s;
};
RecordDurations record_durations(const xs::kernels::attention::TileRecord* records, std::size_t count,
                                 double sm_clock_hz, bool completion_coupled);

// One warpgroup's store burst of one tile, on the launch's global clock, seconds from the earliest start.
struct StoreSpan {
  int cta = 0;   // the persistent CTA that ran the tile (TileRecord::cta_idx; either tile scheduler)
  int wave = 0;  // the CTA's n-th tile (TileRecord::cta_tile_idx)
  double start_s = 0, end_s = 0;
};
// end = store_end_ns; start = end - (store_end_cycles - store_start_cycles) / sm_clock_hz (the span in SM
// cycles is exact, %globaltimer is coarse and the SM clocks are not synchronized across SMs). Empty when
// sm_clock_hz <= 0 or grid <= 0. Records of split pieces that only left their partial (TileRecord::partial_only)
// stored nothing and are skipped.
std::vector<StoreSpan> store_spans(const xs::kernels::attention::TileRecord* records, std::size_t count, int grid,
                                   double sm_clock_hz);

// Burst alignment of one launch. A CTA is a storer at time t while any of its warpgroups' store spans
// [start, end) contains t (its spans are merged first; zero-length spans never store).
struct BurstAlignment {
  // Per wave n (the n-th store burst of every CTA, a CTA's burst starting at its warpgroups' earliest
  // start): max - min of the CTAs' burst starts; median (linear interpolation) over the waves with >= 2
  // CTAs. 0 when no wave has two CTAs. Perfect alignment (the paper's aligned case) is 0.
  double phase_spread_median_s = 0;
  double peak_concurrent_storers = 0;  // the most CTAs storing at one instant
  // Time-average of the number of storing CTAs over the time at least one is storing:
  // integral of count dt / |{t : count > 0}|. Equals the peak when every burst is aligned.
  double mean_concurrent_storers = 0;
  int num_waves = 0;                   // waves with >= 2 CTAs that entered the median
};
BurstAlignment burst_alignment(const std::vector<StoreSpan>& spans);

}  // namespace xs::attention
