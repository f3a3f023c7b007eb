// xstage attention point: what one instrumented FlashAttention launch's timeline holds (plain data, part of
// FaA2aPointResult). run/fa_timeline.hpp computes them from the kernel's per-tile records. Plain C++.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace xs::attention {

struct Quantiles {
  double min = 0, median = 0, max = 0;
};

// The launch's critical path: the consumer warpgroup whose last store issued ends the launch, its span split
// into the time it spent in Q-loops, in epilogues (Q-loop end to every store issued: staging and the stores'
// issue) and elsewhere (span - both: its first tile's start after the launch's origin and the gaps between its
// tiles). Between a fused and an FA-only launch, the Q-loop part is the compute and its K/V loads (slowed while
// stores are outstanding: issue 13 item 4, which the Burst-Gap model does not describe) and the epilogue part
// the stores' issue with any backpressure (what E_issue and E_cap predict). The staging before the stores is in
// the epilogue of both; a split-tail piece's partial write and combine are in its epilogue.
struct CriticalPath {
  int cta_idx = -1;          // -1: none (no written record)
  int num_tiles = 0;         // the warpgroup's tiles
  double num_kv_tiles = 0;   // summed over them
  double qloop_s = 0, epilogue_s = 0, other_s = 0;  // qloop + epilogue + other = span_s
};

struct LaunchTimeline {
  double span_s = 0;                 // earliest tile start to latest store issued (launch_sender_span_s)
  int num_ctas = 0;                  // CTAs with at least one written record
  Quantiles cta_start_s;             // each CTA's first tile start, from the earliest one (launch ramp)
  Quantiles cta_finish_s;            // each CTA's last store issued, from the earliest start
  // Time the CTAs sit idle before the launch's end: sum over CTAs of (span - its finish) / (CTAs x span).
  double tail_idle_fraction = 0;
  Quantiles tiles_per_cta;
  // Per warpgroup record: Q-loop = qloop_end - qloop_start (includes the wait for Q), epilogue = store
  // issued - qloop_end; gap = next tile's start - this tile's store issued, for the same warpgroup of a CTA.
  double qloop_median_s = 0, epilogue_median_s = 0, gap_median_s = 0;
  // Outside the Q-loops: span - (the slowest CTA's summed Q-loops), as a fraction of span.
  double outside_qloop_fraction = 0;
  // Per CTA, the mean Q-loop time per KV tile over its tiles: how far the SMs differ in speed.
  Quantiles cta_sigma_s_per_kv_tile;
  // The launch's earliest tile start and latest store issued, %globaltimer ns (absolute: launches compare).
  std::uint64_t origin_ns = 0, end_ns = 0;
  CriticalPath critical;
};

// Launches of rounds of L back-to-back launches, kept by their position in the round (0 = the first after the
// round's synchronization): does a launch right after another one run longer, and by clock or by cycles?
struct PositionTimelines {
  struct Position {
    std::vector<double> span_s, clock_hz, span_cycles, sigma_median_s_per_kv_tile, tail_idle_fraction;
    // Positions >= 1, when the launch before it in the same round was kept: its last store issued to this one's
    // first tile start (what a launch costs outside its span), and first tile start to first tile start.
    std::vector<double> gap_from_previous_s, period_from_previous_s;
  };
  std::vector<Position> positions;  // [L]
  std::size_t prev_index = static_cast<std::size_t>(-1);
  std::uint64_t prev_origin_ns = 0, prev_end_ns = 0;
  explicit PositionTimelines(int launches_per_round = 0)
      : positions(static_cast<std::size_t>(launches_per_round > 0 ? launches_per_round : 0)) {}
  // The launch_index-th kept launch (counted from 0 over all rounds, in order) ran with this clock and timeline;
  // a launch without a clock or a timeline is left out. No-op without positions.
  void add(std::size_t launch_index, double sm_clock_hz, const LaunchTimeline& tl);
  bool empty() const;
};

}  // namespace xs::attention
