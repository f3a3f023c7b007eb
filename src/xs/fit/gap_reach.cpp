// xstage fit layer: the gap-reach check (see gap_reach.hpp).
#include "xs/fit/gap_reach.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

namespace xs::fit {

std::vector<GapShortfall> gap_sweep_shortfalls(const std::vector<PointSpec>& points, double drain_rate_upper_bps,
                                               double plateau_gap_factor) {
  std::map<std::pair<int, std::uint64_t>, double> largest_gap_s;
  for (const PointSpec& s : points)
    if (s.suite == Suite::kPeriodic && s.target != "local" && s.gap_s > 0) {
      double& g = largest_gap_s[{s.num_producers, s.bytes_per_producer}];
      g = std::max(g, s.gap_s);
    }
  std::vector<GapShortfall> out;
  if (!(drain_rate_upper_bps > 0)) return out;
  for (const auto& [kb, gap_s] : largest_gap_s) {
    const double volume_bytes = static_cast<double>(kb.first) * static_cast<double>(kb.second);
    const double needed_s = plateau_gap_factor * volume_bytes / drain_rate_upper_bps;
    if (gap_s < needed_s) out.push_back({kb.first, kb.second, gap_s, needed_s});
  }
  return out;
}

std::string describe_shortfalls(const std::vector<GapShortfall>& shortfalls, double plateau_gap_factor) {
  std::string text;
  for (const GapShortfall& s : shortfalls)
    text += fmt::format("{}K={} B={}: largest G {:.4g} us, needs G >= {:.4g} us ({} x V/R, V/R >= {:.4g} us)",
                        text.empty() ? "" : "; ", s.num_producers, s.bytes_per_producer, 1e6 * s.largest_gap_s,
                        1e6 * s.needed_gap_s, plateau_gap_factor, 1e6 * s.needed_gap_s / plateau_gap_factor);
  return text;
}

}  // namespace xs::fit
