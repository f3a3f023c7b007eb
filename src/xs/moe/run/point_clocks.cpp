// xstage moe host layer: the clock check of a measured point (see point_clocks.hpp).
#include "xs/moe/run/point_clocks.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace xs::moe {

PointClocks check_point_clocks(const MoePointResult& r, double peak_hz, double spread_limit, double floor_fraction) {
  nlohmann::json per_variant = nlohmann::json::object();
  double lo = 0, hi = 0;
  for (const auto& v : r.variants) {
    if (!(v.tiles.sm_clock_hz > 0)) continue;
    per_variant[v.name] = v.tiles.sm_clock_hz;
    lo = lo == 0 ? v.tiles.sm_clock_hz : std::min(lo, v.tiles.sm_clock_hz);
    hi = std::max(hi, v.tiles.sm_clock_hz);
  }
  PointClocks out;
  const double spread = hi > 0 ? (hi - lo) / hi : 0;
  if (hi > 0 && spread > spread_limit)
    out.rerun_reason =
        fmt::format("the variants' SM clocks differ by {:.1f}% (> {:.1f}%)", 100 * spread, 100 * spread_limit);
  else if (lo > 0 && peak_hz > 0 && lo < floor_fraction * peak_hz)
    out.rerun_reason = fmt::format("SM clock {:.3f} GHz < {:.0f}% of the {:.3f} GHz peak", 1e-9 * lo,
                                   100 * floor_fraction, 1e-9 * peak_hz);
  out.record = {{"sm_clock_hz", per_variant},
                {"peak_sm_clock_hz", peak_hz},
                {"spread", spread},
                {"min_fraction_of_peak", peak_hz > 0 && lo > 0 ? nlohmann::json(lo / peak_hz) : nlohmann::json(nullptr)},
                {"measured", hi > 0 ? "instrumented launch of each variant" : "not measured (--no-instrument)"}};
  return out;
}

}  // namespace xs::moe
