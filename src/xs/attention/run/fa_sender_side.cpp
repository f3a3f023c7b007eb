// xstage attention layer (CUDA): the sender-side boundary of one fa_a2a point (see fa_sender_side.hpp).
#include "xs/attention/run/fa_sender_side.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "xs/attention/run/fa_burst.hpp"
#include "xs/attention/run/fa_sender.hpp"
#include "xs/attention/run/fa_timeline.hpp"
#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"

namespace xs::attention {
namespace {

namespace ka = xs::kernels::attention;

// Sender-side variants (the order time_sender_side gets them in).
enum { kSenderFa, kSenderFused, kSenderCc, kSenderSerial };

// What the sender-side rounds keep of every kept launch (fa_sender.hpp's sink).
struct SenderLaunches {
  std::vector<BurstAlignment> bursts;
  // Per kept launch of FA-only and fused, in order: its SM clock and its span in SM cycles.
  std::vector<double> clock_of[2], cycles_of[2];
  std::vector<double> b2b_span, b2b_idle, b2b_sigma_median, b2b_sigma_max, b2b_gap;  // FA-only launches
  std::vector<double> b2b_start_spread, b2b_tiles_min, b2b_tiles_max;
  std::vector<double> sigma_cycles_of[2];  // per kept launch: the median CTA's sigma in SM cycles
  // Per kept launch with a clock: its critical path's Q-loop / epilogue / other parts in SM cycles.
  std::vector<std::array<double, 3>> critical_cycles_of[2];
  std::uint64_t prev_last_ns = 0;

  void add(std::size_t v, const std::vector<ka::TileRecord>& recs, int L, FaA2aPointResult& r) {
    if (v == kSenderFused && r.sm_clock_hz > 0)
      bursts.push_back(burst_alignment(store_spans(recs.data(), recs.size(), r.num_ctas, r.sm_clock_hz)));
    if (v == kSenderFa || v == kSenderFused) {
      const double hz = launch_sm_clock_hz(recs.data(), recs.size(), r.num_ctas);
      clock_of[v].push_back(hz);
      cycles_of[v].push_back(hz * launch_sender_span_s(recs.data(), recs.size()));
    }
    if ((v == kSenderFa || v == kSenderFused) && clock_of[v].back() > 0) {
      const LaunchTimeline tl = launch_timeline(recs.data(), recs.size(), r.num_ctas, clock_of[v].back());
      const double hz = clock_of[v].back();
      sigma_cycles_of[v].push_back(tl.cta_sigma_s_per_kv_tile.median * hz);
      critical_cycles_of[v].push_back({tl.critical.qloop_s * hz, tl.critical.epilogue_s * hz, tl.critical.other_s * hz});
      if (v != kSenderFa) return;
      b2b_span.push_back(tl.span_s);
      b2b_idle.push_back(tl.tail_idle_fraction);
      b2b_sigma_median.push_back(tl.cta_sigma_s_per_kv_tile.median);
      b2b_sigma_max.push_back(tl.cta_sigma_s_per_kv_tile.max);
      b2b_start_spread.push_back(tl.cta_start_s.max - tl.cta_start_s.min);
      b2b_tiles_min.push_back(tl.tiles_per_cta.min);
      b2b_tiles_max.push_back(tl.tiles_per_cta.max);
      r.fa_by_position_stream.add(clock_of[v].size() - 1, clock_of[v].back(), tl);
      const auto [first_ns, last_ns] = launch_bounds_ns(recs.data(), recs.size());
      if (clock_of[v].size() % static_cast<std::size_t>(L) != 1 && L > 1 && prev_last_ns > 0 && first_ns > prev_last_ns)
        b2b_gap.push_back(static_cast<double>(first_ns - prev_last_ns) * 1e-9);
      prev_last_ns = last_ns;
    }
  }
};
static_assert(kSenderFa == 0 && kSenderFused == 1, "clock_of / cycles_of are indexed by these variants");

// Back-to-back statistics, clocks, same-round cycle differences and burst alignment of the kept launches.
void summarize_sender_launches(const SenderLaunches& k, int L, FaA2aPointResult& r) {
  r.back_to_back_span = stats_of(k.b2b_span);
  r.back_to_back_idle_fraction = stats_of(k.b2b_idle);
  r.back_to_back_sigma_median = stats_of(k.b2b_sigma_median);
  r.back_to_back_sigma_max = stats_of(k.b2b_sigma_max);
  r.back_to_back_gap = stats_of(k.b2b_gap);
  r.back_to_back_start_spread = stats_of(k.b2b_start_spread);
  r.back_to_back_tiles_min = stats_of(k.b2b_tiles_min);
  r.back_to_back_tiles_max = stats_of(k.b2b_tiles_max);
  r.clock_fa_hz = stats_of(k.clock_of[kSenderFa]);
  r.clock_fused_hz = stats_of(k.clock_of[kSenderFused]);
  r.sigma_rounds_fa_cycles = stats_of(k.sigma_cycles_of[kSenderFa]);
  r.sigma_rounds_fused_cycles = stats_of(k.sigma_cycles_of[kSenderFused]);
  // Rounds of L launches, in the same order for both variants (time_sender_side keeps every round).
  const std::size_t per_round = static_cast<std::size_t>(L);
  const std::size_t rounds = std::min(k.cycles_of[0].size(), k.cycles_of[1].size()) / per_round;
  const double ref_hz = r.clock_fa_hz.median;
  bool every_clock = ref_hz > 0;
  for (const auto& c : k.clock_of)
    for (double hz : c) every_clock = every_clock && hz > 0;
  if (every_clock && rounds > 0) {
    std::vector<double> fa_s, diff_s;
    for (std::size_t round = 0; round < rounds; ++round) {
      double mean[2] = {0, 0};
      for (int v = 0; v < 2; ++v)
        for (std::size_t l = 0; l < per_round; ++l)
          mean[v] += k.cycles_of[v][round * per_round + l] / static_cast<double>(per_round);
      fa_s.push_back(mean[0] / ref_hz);
      diff_s.push_back((mean[1] - mean[0]) / ref_hz);
    }
    r.sender_fa_cycles = summarize(std::move(fa_s));
    r.e_res_sender_cycles_paired = summarize(std::move(diff_s));
    // Every kept launch has a clock here, so each has its critical path, in the same order as cycles_of.
    if (k.critical_cycles_of[0].size() == k.cycles_of[0].size() &&
        k.critical_cycles_of[1].size() == k.cycles_of[1].size()) {
      auto d = critical_path_round_differences(k.critical_cycles_of, per_round, rounds, ref_hz);
      r.critical_qloop_paired = summarize(std::move(d[0]));
      r.critical_epilogue_paired = summarize(std::move(d[1]));
      r.critical_other_paired = summarize(std::move(d[2]));
    }
  }
  std::vector<double> spread, peak, mean;
  for (const BurstAlignment& b : k.bursts) {
    if (b.num_waves > 0) spread.push_back(b.phase_spread_median_s);
    peak.push_back(b.peak_concurrent_storers);
    mean.push_back(b.mean_concurrent_storers);
  }
  r.store_phase_spread_median_s = stats_of(spread).median;
  r.peak_concurrent_storers = stats_of(peak).median;
  r.mean_concurrent_storers = stats_of(mean).median;
}

}  // namespace

// Sender-side boundary (attention/run/fa_sender.hpp): rounds of L instrumented back-to-back launches, one stream
// synchronization per round; burst alignment from every kept fused launch; then FA-only by position in a graph.
void measure_sender_side(const FaPointDevice& d, int L, const runtime::ReplayBarrier& barrier, FaA2aPointResult& r) {
  const FaA2aPointSpec& spec = d.spec;
  const std::uint64_t records_bytes = d.records_bytes();
  const auto record_slots = static_cast<std::uint32_t>(records_bytes / sizeof(ka::TileRecord) / 2);
  auto instrumented = [&d, records_bytes](ka::FlashAttentionArgs a) {
    return [&d, records_bytes, a](cudaStream_t st, ka::TileRecord* records) mutable {
      a.records = records;
      a.records_bytes = records_bytes;
      ka::launch_flash_attention(d.config, a, st);
    };
  };
  SenderLaunches kept;
  r.fa_by_position_stream = PositionTimelines(L);
  const auto sender = time_sender_side(
      {{instrumented(d.fa), {}},
       {instrumented(d.fused), {}},
       {instrumented(d.cc), {}},
       {instrumented(d.fa), [&d](cudaStream_t st) { d.enqueue_a2a(st); }}},
      record_slots, L, spec.warmup_replays, spec.repetitions, d.s,
      [&](std::size_t v, const std::vector<ka::TileRecord>& recs) { kept.add(v, recs, L, r); }, barrier);
  // The same instrumented FA-only launches replayed as a CUDA graph of L, the timed replays' regime, kept by
  // position: whether a launch right after another one runs longer there, by clock or by cycles.
  // A diagnostic: a failure of it is recorded in the point (measured.timeline.fa_only_by_position.graph_error)
  // and the point's measurements are kept; a sticky CUDA error still fails the point at its next call.
  r.fa_by_position_graph = PositionTimelines(L);
  try {
    replay_instrumented_graph({instrumented(d.fa), {}}, record_slots, L, spec.warmup_replays, spec.repetitions, d.s,
                              [&](std::size_t launch, const std::vector<ka::TileRecord>& recs) {
                                const double hz = launch_sm_clock_hz(recs.data(), recs.size(), r.num_ctas);
                                if (hz > 0)
                                  r.fa_by_position_graph.add(launch, hz,
                                                             launch_timeline(recs.data(), recs.size(), r.num_ctas, hz));
                              });
  } catch (const Error& e) {
    r.fa_by_position_graph = PositionTimelines(L);
    r.fa_by_position_graph_error = e.what();
  }
  summarize_sender_launches(kept, L, r);
  r.sender_fa = summarize(sender[kSenderFa]);
  r.sender_fused = summarize(sender[kSenderFused]);
  r.sender_cc = summarize(sender[kSenderCc]);
  r.sender_serial = summarize(sender[kSenderSerial]);
  r.e_res_sender_paired = summarize(runtime::paired_difference(sender[kSenderFused], sender[kSenderFa]).samples);
  r.e_cc_sender_paired = summarize(runtime::paired_difference(sender[kSenderCc], sender[kSenderFa]).samples);
}

}  // namespace xs::attention
