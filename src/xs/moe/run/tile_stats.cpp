// xstage moe host layer: per-tile record summaries (see tile_stats.hpp).
#include "xs/moe/run/tile_stats.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "xs/common/stats.hpp"

namespace xs::moe {
namespace {

namespace km = xs::kernels::moe;

// Interpolated quantile of common/stats; 0 (not NaN) for no tiles, so an empty summary stays numeric.
double quantile(const std::vector<double>& v, double q) { return v.empty() ? 0.0 : xs::quantile(v, q); }

struct Tile {
  const km::TileRecord* rec;
  km::TileKind kind;
};

}  // namespace

TileDistributions summarize_tiles(const std::vector<km::TileRecord>& records, const km::TileSpace& tiles,
                                  double nominal_clock_hz) {
  TileDistributions d;
  std::map<std::uint32_t, std::vector<Tile>> by_cta;
  for (std::uint32_t i = 0; i < records.size() && i < tiles.num_tiles(); ++i) {
    const km::TileRecord& r = records[i];
    if (r.store_end_cycles == 0 || r.mainloop_end_cycles == 0) continue;
    by_cta[r.cta].push_back(Tile{&r, tiles.tile_at(i).kind});
    ++d.num_tiles;
  }
  if (d.num_tiles == 0) return d;
  // SM clock: %clock64 cycles against %globaltimer ns between a CTA's first and last tile.
  std::vector<double> clocks;
  for (auto& [cta, list] : by_cta) {
    std::sort(list.begin(), list.end(), [](const Tile& a, const Tile& b) { return a.rec->sequence < b.rec->sequence; });
    const km::TileRecord& first = *list.front().rec;
    const km::TileRecord& last = *list.back().rec;
    const double ns = static_cast<double>(last.start_ns) - static_cast<double>(first.start_ns);
    if (ns > 50e3 && last.mainloop_start_cycles > first.mainloop_start_cycles)
      clocks.push_back(static_cast<double>(last.mainloop_start_cycles - first.mainloop_start_cycles) / (ns * 1e-9));
  }
  d.sm_clock_hz = clocks.empty() ? nominal_clock_hz : quantile(clocks, 0.5);
  const double s_per_cycle = d.sm_clock_hz > 0 ? 1.0 / d.sm_clock_hz : 0.0;

  std::vector<double> l1_main, l2_main, l2_rs, l1_rs, waits, spins, queues;
  double wait_total = 0, spin_total = 0, predicted_total = 0, measured_total = 0;
  double first_wait_l1 = 0, first_wait_l2 = 0;
  double t_begin = 1e300, t_end = 0;
  std::vector<double> startup, teardown, busy;
  for (auto& [cta, list] : by_cta) {
    const km::TileRecord& first = *list.front().rec;
    const km::TileRecord& last = *list.back().rec;
    if (first.cta_boundary_ns != 0 && first.start_ns >= first.cta_boundary_ns)
      startup.push_back(static_cast<double>(first.start_ns - first.cta_boundary_ns) * 1e-9);
    if (last.cta_boundary_ns != 0) {
      const double end_s = static_cast<double>(last.start_ns) * 1e-9 +
                           static_cast<double>(last.store_end_cycles - last.mainloop_start_cycles) * s_per_cycle;
      teardown.push_back(std::max(0.0, static_cast<double>(last.cta_boundary_ns) * 1e-9 - end_s));
    }
    double busy_s = 0;
    for (const auto& t : list)
      busy_s += static_cast<double>(t.rec->mainloop_end_cycles - t.rec->mainloop_start_cycles) * s_per_cycle;
    busy.push_back(busy_s);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const km::TileRecord& r = *list[i].rec;
      const double main_s = static_cast<double>(r.mainloop_end_cycles - r.mainloop_start_cycles) * s_per_cycle;
      const double rs_s = static_cast<double>(r.store_end_cycles - r.store_start_cycles) * s_per_cycle;
      const double wait_s = r.staging_wait_cycles * s_per_cycle;
      const double spin_s = r.dependency_spin_cycles * s_per_cycle;
      (list[i].kind == km::TileKind::kL1 ? l1_main : l2_main).push_back(main_s);
      (list[i].kind == km::TileKind::kL1 ? l1_rs : l2_rs).push_back(rs_s);
      waits.push_back(wait_s);
      queues.push_back(r.queue_cycles * s_per_cycle);
      wait_total += wait_s;
      (list[i].kind == km::TileKind::kL1 ? first_wait_l1 : first_wait_l2) += r.first_stage_wait_cycles * s_per_cycle;
      if (list[i].kind == km::TileKind::kL2) {
        spins.push_back(spin_s);
        spin_total += spin_s;
      }
      if (i + 1 < list.size()) {  // eq. 15: this tile's span against its successor's mainloop (the cover)
        const km::TileRecord& next = *list[i + 1].rec;
        const double cover_s =
            static_cast<double>(next.mainloop_end_cycles - next.mainloop_start_cycles) * s_per_cycle;
        predicted_total += std::max(0.0, rs_s - cover_s);
        measured_total += next.staging_wait_cycles * s_per_cycle;
      }
      const double start_s = static_cast<double>(r.start_ns) * 1e-9;
      t_begin = std::min(t_begin, start_s);
      t_end = std::max(t_end, start_s + static_cast<double>(r.store_end_cycles - r.mainloop_start_cycles) * s_per_cycle);
    }
  }
  const double num_ctas = static_cast<double>(by_cta.size());
  d.l1_mainloop_median_s = quantile(l1_main, 0.5);
  d.l2_mainloop_median_s = quantile(l2_main, 0.5);
  d.l2_store_span_median_s = quantile(l2_rs, 0.5);
  d.l2_store_span_p90_s = quantile(l2_rs, 0.9);
  d.l1_store_span_median_s = quantile(l1_rs, 0.5);
  d.staging_wait_median_s = quantile(waits, 0.5);
  d.staging_wait_p90_s = quantile(waits, 0.9);
  d.staging_wait_total_s = wait_total / num_ctas;
  d.l2_spin_median_s = quantile(spins, 0.5);
  d.l2_spin_p90_s = quantile(spins, 0.9);
  d.l2_spin_total_s = spin_total / num_ctas;
  d.l1_first_wait_total_s = first_wait_l1 / num_ctas;
  d.l2_first_wait_total_s = first_wait_l2 / num_ctas;
  d.queue_median_s = quantile(queues, 0.5);
  d.eq15_predicted_stall_s = predicted_total / num_ctas;
  d.eq15_measured_wait_s = measured_total / num_ctas;
  d.kernel_span_s = t_end > t_begin ? t_end - t_begin : 0;
  d.entry_to_first_start_median_s = quantile(startup, 0.5);
  d.entry_to_first_start_max_s = quantile(startup, 1.0);
  d.last_store_to_exit_median_s = quantile(teardown, 0.5);
  d.last_store_to_exit_max_s = quantile(teardown, 1.0);
  d.cta_busy_median_s = quantile(busy, 0.5);
  const auto& cta0 = by_cta.begin()->second;
  const double t0 = static_cast<double>(cta0.front().rec->start_ns) * 1e-9;
  for (std::size_t i = 0; i < cta0.size() && i < 64; ++i) {
    const km::TileRecord& r = *cta0[i].rec;
    d.timeline.push_back({{"l2", cta0[i].kind == km::TileKind::kL2 ? 1.0 : 0.0},
                          {"start_s", static_cast<double>(r.start_ns) * 1e-9 - t0},
                          {"mainloop_s", static_cast<double>(r.mainloop_end_cycles - r.mainloop_start_cycles) * s_per_cycle},
                          {"store_span_s", static_cast<double>(r.store_end_cycles - r.store_start_cycles) * s_per_cycle},
                          {"staging_wait_s", r.staging_wait_cycles * s_per_cycle},
                          {"spin_s", r.dependency_spin_cycles * s_per_cycle},
                          {"first_wait_s", r.first_stage_wait_cycles * s_per_cycle}});
  }
  return d;
}

}  // namespace xs::moe
