// xstage moe host layer: is a measured megamoe point's clock fit to compare its schedules? From the SM clock
// of each variant's instrumented launch (%clock64 over %globaltimer): re-run when the variants ran at clocks
// further apart than a spread limit (the same-round ratio would be skewed) or one ran below a floor fraction
// of the peak (a hardware or thermal slowdown, not the steady power cap a long tensor kernel settles at).
// Plain C++.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "xs/moe/point/moe_point.hpp"

namespace xs::moe {

struct PointClocks {
  nlohmann::json record;  // {sm_clock_hz: {variant: Hz}, peak_sm_clock_hz, spread, min_fraction_of_peak, measured}
  std::string rerun_reason;  // empty: fine (also when no variant was instrumented)
};

PointClocks check_point_clocks(const MoePointResult& result, double peak_clock_hz, double spread_limit,
                               double floor_fraction);

}  // namespace xs::moe
