// xstage attention host layer: where one instrumented FlashAttention launch spends its time, from its
// per-tile records (kernels/attention TileRecord): how long the persistent CTAs wait to start, how far
// their finishing times spread (the static schedule ends with the slowest CTA), how much of each tile lies
// outside its Q-loop, and how much the SMs differ in Q-loop speed. A diagnostic of the FA speed bar (issue
// 13), stored beside each point; and the launch's SM clock, which the clock-normalized E_res uses. Plain C++;
// the CPU tests feed hand-made timelines.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "attention/layout.cuh"

namespace xs::attention {

// The launch's SM clock: per CTA (TileRecord::cta_idx), its SM cycles over its %globaltimer span from its first
// tile start to its last store issued; the median over CTAs whose span exceeds min_span_ns (the global
// timer's resolution makes shorter spans unreliable). 0 when no CTA qualifies.
double launch_sm_clock_hz(const kernels::attention::TileRecord* records, std::size_t count, int grid,
                          double min_span_ns = 20'000);

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

// Empty (all zero) when grid <= 0, clock <= 0 or no record is written.
LaunchTimeline launch_timeline(const kernels::attention::TileRecord* records, std::size_t count, int grid,
                               double sm_clock_hz);

// Same-round differences (fused - FA-only) of the critical path's parts. parts[v][k] = {Q-loop, epilogue, other}
// of variant v's (0 FA-only, 1 fused) k-th kept launch in SM cycles, launches_per_round per round, the same
// rounds in the same order for both; per round each part's mean over its launches, the difference converted to
// seconds at ref_hz. Returns [part][round]; all empty where a variant has fewer than rounds x L launches, or
// ref_hz <= 0.
std::array<std::vector<double>, 3> critical_path_round_differences(const std::vector<std::array<double, 3>> (&parts)[2],
                                                                   std::size_t launches_per_round, std::size_t rounds,
                                                                   double ref_hz);

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
