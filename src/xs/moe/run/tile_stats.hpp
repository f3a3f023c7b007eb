// xstage moe host layer: turns one instrumented launch's per-tile records (layout.cuh TileRecord) into the
// distributions a megamoe point reports: mainloop times per GEMM, the storer span T_RS, the MMA-side
// staging wait, the Linear-2 dependency spin, eq. 15 with each tile's measured successor, and a sampled
// timeline. Plain C++: CPU tests feed it synthetic records.
#pragma once
#include <vector>

#include "xs/kernels/moe/layout.cuh"
#include "xs/moe/point/moe_point.hpp"

namespace xs::moe {

// records[i] belongs to tile tiles.tile_at(i); a record whose store_end_cycles is 0 was never filled (a
// tile the launch did not run) and is ignored. nominal_clock_hz is used when the records span too little
// time to estimate the SM clock from %clock64 against %globaltimer.
TileDistributions summarize_tiles(const std::vector<kernels::moe::TileRecord>& records,
                                  const kernels::moe::TileSpace& tiles, double nominal_clock_hz);

}  // namespace xs::moe
