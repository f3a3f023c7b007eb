// xstage attention point: launches kept by their position in a round (point/fa_launch_timeline.hpp).
#include "xs/attention/point/fa_launch_timeline.hpp"

namespace xs::attention {

void PositionTimelines::add(std::size_t launch_index, double sm_clock_hz, const LaunchTimeline& tl) {
  if (positions.empty() || sm_clock_hz <= 0 || tl.span_s <= 0) return;
  Position& p = positions[launch_index % positions.size()];
  p.span_s.push_back(tl.span_s);
  p.clock_hz.push_back(sm_clock_hz);
  p.span_cycles.push_back(tl.span_s * sm_clock_hz);
  p.sigma_median_s_per_kv_tile.push_back(tl.cta_sigma_s_per_kv_tile.median);
  p.tail_idle_fraction.push_back(tl.tail_idle_fraction);
  const std::size_t L = positions.size();
  if (launch_index % L != 0 && launch_index == prev_index + 1 && tl.origin_ns >= prev_end_ns && prev_end_ns > 0) {
    p.gap_from_previous_s.push_back(static_cast<double>(tl.origin_ns - prev_end_ns) * 1e-9);
    p.period_from_previous_s.push_back(static_cast<double>(tl.origin_ns - prev_origin_ns) * 1e-9);
  }
  prev_index = launch_index;
  prev_origin_ns = tl.origin_ns;
  prev_end_ns = tl.end_ns;
}

bool PositionTimelines::empty() const {
  for (const Position& p : positions)
    if (!p.span_s.empty()) return false;
  return true;
}

}  // namespace xs::attention
