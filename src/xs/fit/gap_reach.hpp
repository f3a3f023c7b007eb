// xstage fit layer: whether a sweep's periodic gap sweeps can reach the T_iss^0 plateau, judged before
// anything is measured. The fitter takes T_iss^0 from points with G >= plateau_gap_factor x V/R
// (tiss0.cpp); a (K,B) whose largest G falls short of that gives only an upper bound ("max_gap"), which is
// how issue 27's host-small-k sweep (K = 132 to 9.6 us, V/R ~ 41 us) fed a drain-limited 28.8 us as a floor.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "xs/report/records.hpp"

namespace xs::fit {

struct GapShortfall {
  int num_producers = 0;                 // K
  std::uint64_t bytes_per_producer = 0;  // B
  double largest_gap_s = 0;              // the sweep's largest G at this (K,B)
  double needed_gap_s = 0;               // plateau_gap_factor x V / drain_rate_upper_bps
};

// Every (K,B) with positive-gap periodic points (local-control points excluded) whose largest G is below
// plateau_gap_factor x V / drain_rate_upper_bps. With drain_rate_upper_bps an upper bound on R, V/R >= V /
// drain_rate_upper_bps, so each shortfall is certain: no plateau point can come out of that gap sweep.
std::vector<GapShortfall> gap_sweep_shortfalls(const std::vector<PointSpec>& points, double drain_rate_upper_bps,
                                               double plateau_gap_factor);

// One line per shortfall: "K=132 B=16384: largest G 9.6 us, needs G >= 63.4 us (1.5 x V/R, V/R >= 42.3 us)".
std::string describe_shortfalls(const std::vector<GapShortfall>& shortfalls, double plateau_gap_factor);

}  // namespace xs::fit
