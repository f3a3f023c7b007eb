// xstage backends/gpu layer: aggregation of one loaded-mainloop launch (see loaded_timeline.hpp).
#include "xs/backends/gpu/loaded_timeline.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"

namespace xs::runtime {
namespace {

Error inconsistent(const std::string& what) {
  return Error(ExitCode::kDeviceFailure, "kernel", "loaded_kernel", "loaded_kernel records: " + what);
}

}  // namespace

LoadedLaunchSample aggregate_loaded_launch(const LoadedLaunchTimeline& t, std::uint32_t warmup_tiles,
                                           std::uint32_t warmup_bursts) {
  LoadedLaunchSample s;
  const bool epilogue = t.epilogue_tiles_per_burst > 0;
  std::vector<double> clocks;
  std::uint64_t first_ns = ~0ull, last_ns = 0, done_ns = 0;
  for (std::uint32_t c = 0; c < t.num_ctas; ++c) {
    const auto& r = t.ctas[c];
    if (r.last_ns <= r.first_ns || r.last_cycles <= r.first_cycles)
      throw inconsistent(fmt::format("CTA {}: empty clock window ({} ns, {} cycles)", c, r.last_ns - r.first_ns,
                                     r.last_cycles - r.first_cycles));
    if (epilogue) {
      if (r.num_bursts != t.max_bursts)
        throw inconsistent(fmt::format("CTA {}: {} epilogue bursts, expected {} (one per {} tiles)", c, r.num_bursts,
                                       t.max_bursts, t.epilogue_tiles_per_burst));
    } else switch (kernels::remote_store::judge_storer_count(r.num_bursts, t.max_bursts)) {
      case kernels::remote_store::StorerCount::kValid: break;
      case kernels::remote_store::StorerCount::kAtCap: ++s.num_ctas_at_cap; break;
      case kernels::remote_store::StorerCount::kNone:
        throw inconsistent(fmt::format("CTA {}: no burst in a launch with stores (burst 0 is unconditional)", c));
      case kernels::remote_store::StorerCount::kOverCap:
        throw inconsistent(fmt::format("CTA {}: {} bursts > {} slots", c, r.num_bursts, t.max_bursts));
    }
    clocks.push_back(1e9 * static_cast<double>(r.last_cycles - r.first_cycles) / static_cast<double>(r.last_ns - r.first_ns));
    first_ns = std::min(first_ns, r.first_ns);
    last_ns = std::max(last_ns, r.last_ns);
    s.num_bursts += r.num_bursts;
    if (r.num_bursts > 0) {
      done_ns = std::max(done_ns, r.store_done_ns);
      const std::uint64_t began_ns = epilogue ? r.first_ns : t.bursts[static_cast<std::size_t>(c) * t.max_bursts].start_ns;
      if (r.store_done_ns < began_ns) throw inconsistent(fmt::format("CTA {}: stores done before they began", c));
      s.store_span_s = std::max(s.store_span_s, 1e-9 * static_cast<double>(r.store_done_ns - began_ns));
    }
  }
  s.sm_clock_hz = median(clocks);
  s.mainloop_span_s = 1e-9 * static_cast<double>(last_ns - first_ns);
  s.drain_tail_s = done_ns > last_ns ? 1e-9 * static_cast<double>(done_ns - last_ns) : 0.0;
  s.bytes_issued = static_cast<double>(s.num_bursts) * static_cast<double>(t.bytes_per_burst);

  std::vector<double> tiles, epilogues;
  double with_epilogue_sum = 0, period_sum = 0;
  std::size_t num_periods = 0;
  for (std::uint32_t c = 0; c < t.num_ctas; ++c) {
    std::uint64_t previous_epilogue = 0;  // epilogue start of the CTA's previous steady burst (0: none yet)
    for (std::uint32_t j = warmup_tiles; j < t.tiles_per_cta; ++j) {
      const auto& r = t.tiles[static_cast<std::size_t>(c) * t.tiles_per_cta + j];
      if (r.end_cycles <= r.start_cycles) throw inconsistent(fmt::format("CTA {} tile {}: ends before it starts", c, j));
      const double mainloop = static_cast<double>(r.end_cycles - r.start_cycles) / s.sm_clock_hz;
      tiles.push_back(mainloop);
      double part = 0;
      if (epilogue && (j + 1) % t.epilogue_tiles_per_burst == 0) {
        if (r.epilogue_start_cycles < r.end_cycles || r.epilogue_end_cycles < r.epilogue_start_cycles)
          throw inconsistent(fmt::format("CTA {} tile {}: epilogue [{}, {}] not after the mainloop's end {}", c, j,
                                         r.epilogue_start_cycles, r.epilogue_end_cycles, r.end_cycles));
        part = static_cast<double>(r.epilogue_end_cycles - r.epilogue_start_cycles) / s.sm_clock_hz;
        epilogues.push_back(part);
        if (previous_epilogue != 0) {
          period_sum += static_cast<double>(r.epilogue_start_cycles - previous_epilogue) / s.sm_clock_hz;
          ++num_periods;
        }
        previous_epilogue = r.epilogue_start_cycles;
      }
      with_epilogue_sum += mainloop + part;
    }
  }
  if (tiles.empty()) throw inconsistent("no tile past the warm-up");
  s.tile_time_s = median(tiles);
  double mainloop_sum = 0;
  for (double x : tiles) mainloop_sum += x;
  s.mean_tile_time_s = mainloop_sum / static_cast<double>(tiles.size());
  if (epilogue) {
    s.mean_tile_epilogue_time_s = with_epilogue_sum / static_cast<double>(tiles.size());
    if (!epilogues.empty()) {
      s.epilogue_time_s = median(epilogues);
      double sum = 0;
      for (double x : epilogues) sum += x;
      s.issue_time_s = sum / static_cast<double>(epilogues.size());
    }
    s.period_s = num_periods > 0 ? period_sum / static_cast<double>(num_periods) : 0.0;
    return s;
  }

  // Bursts b >= warmup_bursts of every CTA, or all of them where no CTA got that far.
  for (const std::uint32_t first : {warmup_bursts, 0u}) {
    double issue = 0, period = 0;
    std::size_t num_issue = 0, num_period = 0;
    for (std::uint32_t c = 0; c < t.num_ctas; ++c) {
      const std::uint32_t n = t.ctas[c].num_bursts;
      for (std::uint32_t b = first; b < n; ++b) {
        const auto& r = t.bursts[static_cast<std::size_t>(c) * t.max_bursts + b];
        if (r.issue_end_cycles < r.start_cycles) throw inconsistent(fmt::format("CTA {} burst {}: issue ends before it starts", c, b));
        issue += static_cast<double>(r.issue_end_cycles - r.start_cycles);
        ++num_issue;
        if (b + 1 < n) {
          period += static_cast<double>(t.bursts[static_cast<std::size_t>(c) * t.max_bursts + b + 1].start_cycles - r.start_cycles);
          ++num_period;
        }
      }
    }
    if (num_issue == 0) continue;
    s.issue_time_s = issue / static_cast<double>(num_issue) / s.sm_clock_hz;
    s.period_s = num_period > 0 ? period / static_cast<double>(num_period) / s.sm_clock_hz : 0.0;
    break;
  }
  return s;
}

}  // namespace xs::runtime
