// xstage backends/gpu layer: one loaded-mainloop launch's raw records -> one sample per quantity (host-side, pure
// functions). The definitions are meta.definitions["loaded"] (src/xs/report/meta.cpp); the simulator follows them.
#pragma once
#include <cstdint>
#include <vector>

#include "xs/kernels/remote_store/loaded.hpp"

namespace xs::runtime {

struct LoadedLaunchTimeline {
  std::uint32_t num_ctas = 0;
  std::uint32_t tiles_per_cta = 0;
  std::uint32_t max_bursts = 0;                              // burst record slots per CTA
  std::uint64_t bytes_per_burst = 0;                         // B
  // Injection epilogue: a burst after every tiles_per_burst-th tile by the math warps (0: paced storers).
  // max_bursts is then the bursts per CTA of a launch with stores (0: the baseline) and `bursts` is empty.
  std::uint32_t epilogue_tiles_per_burst = 0;
  std::vector<kernels::remote_store::LoadedTileRecord> tiles;    // [cta][tile]
  std::vector<kernels::remote_store::LoadedBurstRecord> bursts;  // [cta][max_bursts]
  std::vector<kernels::remote_store::LoadedCtaRecord> ctas;      // [cta]
};

struct LoadedLaunchSample {
  double sm_clock_hz = 0;        // median over CTAs of (last - first) clock64 / %globaltimer
  double tile_time_s = 0;        // median over CTAs and tiles j >= warmup_tiles
  double mean_tile_time_s = 0;   // the same tiles' mean
  // Injection epilogue (0 in paced launches): epilogue part = epilogue_end - epilogue_start of tiles with a
  // burst, 0 for the others.
  double epilogue_time_s = 0;            // median over CTAs and steady tiles with a burst of the epilogue part
  double mean_tile_epilogue_time_s = 0;  // mean over CTAs and steady tiles of mainloop + epilogue part
  double bytes_issued = 0;
  double mainloop_span_s = 0;    // max last_ns - min first_ns
  double store_span_s = 0;       // max over CTAs with bursts: store_done_ns - first burst start_ns
  double drain_tail_s = 0;       // max(0, max store_done_ns - max last_ns); 0 without bursts
  double issue_time_s = 0;       // mean burst issue span over bursts b >= warmup_bursts (all when none is);
                                 // epilogue: the mean epilogue part of steady tiles with a burst
  double period_s = 0;           // mean start-to-start of those bursts; 0 with fewer than 2 per CTA;
                                 // epilogue: mean epilogue start to the next one's over steady tiles
  std::uint64_t num_bursts = 0;  // all CTAs
  std::uint32_t num_ctas_at_cap = 0;  // CTAs whose storers issued all max_bursts (their later tiles may run unloaded)
};

// Throws Error (exit 3) for records the kernel did not write consistently (a CTA's window empty, a tile or
// burst that ends before it starts, more bursts than slots, no burst in a launch with stores: burst 0 is
// issued at any speed, judge_storer_count in loaded_layout.cuh; epilogue: a burst count other than
// max_bursts, an epilogue that starts before its mainloop ends or ends before it starts).
// Epilogue: store_span_s is max over CTAs of store_done_ns - first_ns (the kernel start: the first burst follows
// the first tile).
LoadedLaunchSample aggregate_loaded_launch(const LoadedLaunchTimeline& t, std::uint32_t warmup_tiles,
                                           std::uint32_t warmup_bursts);

}  // namespace xs::runtime
