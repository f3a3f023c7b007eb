// xstage attention host layer: where one instrumented FlashAttention launch spends its time, from its
// per-tile records (src/xs/kernels/attention TileRecord): how long the persistent CTAs wait to start, how far
// their finishing times spread (the static schedule ends with the slowest CTA), how much of each tile lies
// outside its Q-loop, and how much the SMs differ in Q-loop speed. A diagnostic of the FA speed bar (issue
// 13), stored beside each point; and the launch's SM clock, which the clock-normalized E_res uses. Plain C++;
// the CPU tests feed hand-made timelines.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "xs/kernels/attention/layout.cuh"
#include "xs/attention/point/fa_launch_timeline.hpp"
#include "xs/common/stats.hpp"

namespace xs::attention {

// The launch's SM clock: per CTA (TileRecord::cta_idx), its SM cycles over its %globaltimer span from its first
// tile start to its last store issued; the median over CTAs whose span exceeds min_span_ns (the global
// timer's resolution makes shorter spans unreliable). 0 when no CTA qualifies.
double launch_sm_clock_hz(const kernels::attention::TileRecord* records, std::size_t count, int grid,
                          double min_span_ns = 20'000);

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

// Median, p10 and p90 at the nearest rank (the value at round(q (n - 1)) of the sorted values); all zero when empty.
Summary stats_of(std::vector<double> v);

}  // namespace xs::attention
