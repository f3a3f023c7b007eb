// xstage attention layer (CUDA): the sender-side boundary of one fa_a2a point (fa_sender.hpp says why not
// events): rounds of L instrumented back-to-back launches of FA-only, fused, cc and serial, what the kept launches'
// records say (back-to-back statistics, clocks, same-round cycle differences, burst alignment), and FA-only by
// position in a CUDA graph.
#pragma once
#include "xs/attention/point/fa_point.hpp"
#include "xs/attention/run/fa_point_device.hpp"
#include "xs/backends/gpu/variant_timer.hpp"

namespace xs::attention {

// Fills the point's sender_*, e_*_sender_*, back_to_back_*, clock_*, sigma_rounds_*, critical_*_paired,
// burst-alignment and fa_by_position_* fields; L launches per round, rounds started together across ranks by
// `barrier`. Throws xs::Error (exit 3) on CUDA failures (the graph diagnostic records its own in the point).
void measure_sender_side(const FaPointDevice& d, int L, const runtime::ReplayBarrier& barrier, FaA2aPointResult& r);

}  // namespace xs::attention
