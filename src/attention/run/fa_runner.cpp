// xstage attention layer (CUDA): the fa_a2a point runner (see fa_runner.hpp).
#include "attention/run/fa_runner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "attention/reference/cpu_reference.hpp"
#include "attention/run/fa_clock_probe.hpp"
#include "attention/run/fa_device.hpp"
#include "attention/point/fa_app_point.hpp"
#include "attention/run/fa_burst.hpp"
#include "attention/run/fa_destinations.hpp"
#include "attention/reference/fa_layout.hpp"
#include "attention/run/fa_sender.hpp"
#include "attention/run/fa_timeline.hpp"
#include "attention/flash_attention.hpp"
#include "common/error.hpp"
#include "common/stats.hpp"
#include "common/cuda_check.hpp"
#include "bench/rank_comm.hpp"
#include "runtime/devices.hpp"
#include "runtime/rank_windows.hpp"
#include "runtime/stream.hpp"
#include "runtime/targets.hpp"
#include "runtime/variant_timer.hpp"

namespace xs::attention {
namespace {

namespace ka = xs::kernels::attention;

constexpr double kRelTolerance = 1e-2;
constexpr int kClockProbes = 5;  // readings of the SM clock after a batch of FA-only launches
static_assert(kFaMaxRanks == ka::kMaxRanks, "the host-side P check must match the kernel's rank table");

Summary stats_of(std::vector<double> v) {
  Summary t;
  if (v.empty()) return t;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[static_cast<std::size_t>(std::lround(q * (v.size() - 1)))]; };
  t.median = at(0.5);
  t.p10 = at(0.1);
  t.p90 = at(0.9);
  return t;
}

// Instrumentation summary: SM clock from each CTA's (cycles, ns) span, sigma, spans in seconds.
enum class Instrumented { kFaOnly, kFused, kCompletionCoupled };

void summarize_records(const std::vector<ka::TileRecord>& recs, int grid, Instrumented which, FaA2aPointResult& r) {
  const bool cc = which == Instrumented::kCompletionCoupled;
  const double clock_hz = launch_sm_clock_hz(recs.data(), recs.size(), grid);
  if (clock_hz <= 0) return;
  if (which == Instrumented::kFaOnly) r.timeline_fa = launch_timeline(recs.data(), recs.size(), grid, clock_hz);
  if (which == Instrumented::kFused) r.timeline_fused = launch_timeline(recs.data(), recs.size(), grid, clock_hz);
  // Split-tail pieces that only left their partial count in sigma only (fa_burst.hpp record_durations).
  const RecordDurations d = record_durations(recs.data(), recs.size(), clock_hz, cc);
  const std::vector<double>&qloop = d.qloop_s, &sigma = d.sigma_s_per_kv_tile, &span = d.store_span_s,
                            &fence = d.fence_span_s;
  if (which == Instrumented::kFaOnly) {
    r.sm_clock_fa_hz = clock_hz;
    r.sigma_fa_s_per_kv_tile = stats_of(sigma).median;
  } else if (cc) {
    r.store_span_cc = stats_of(span);
    r.fence_span_cc = stats_of(fence);
  } else {
    r.sm_clock_hz = clock_hz;
    r.qloop_fused = stats_of(qloop);
    r.sigma_s_per_kv_tile = stats_of(sigma).median;
    r.store_span_fused = stats_of(span);
  }
}

void check_exchange(const FaExchange& ex, const FaA2aPointSpec& spec) {
  const auto p = static_cast<std::size_t>(spec.num_ranks);
  if (ex.peer_windows.size() != p)
    throw input_error("--P", "P = " + std::to_string(spec.num_ranks) + " but the exchange spans " +
                                 std::to_string(ex.peer_windows.size()) + " ranks: on several ranks P is the number of ranks");
  if (ex.world_rank < 0 || ex.world_rank >= spec.num_ranks || ex.own_window == nullptr || !ex.barrier || !ex.alltoall)
    throw input_error("exchange", "an exchange needs this rank's index in [0, P), its own window, a barrier and an "
                                  "all-to-all");
  for (void* w : ex.peer_windows)
    if (w == nullptr)
      throw input_error("exchange", "a rank's window is not load/store reachable from this rank (another node?): "
                                    "the fused epilogue needs every window (" + ex.description + ")");
}

}  // namespace

FaA2aPointResult run_fa_a2a_point(const FaA2aPointSpec& spec) {
  FaA2aPointResult r;
  const runtime::Target target = runtime::parse_target(spec.target);
  // Shape and flag errors are input errors (exit 2) even where no GPU exists.
  validate_fa_point_spec(spec);
  const FaExchange* ex = spec.exchange.get();  // several ranks: a real All-to-All through their windows
  if (ex != nullptr) check_exchange(*ex, spec);
  runtime::DeviceInfo info;
  // With an exchange the windows exist already: only this rank's GPU is checked.
  if (auto why = runtime::sm90_point_unavailable_reason(ex != nullptr ? runtime::parse_target("local") : target,
                                                        spec.device, &info)) {
    r.status = "skipped";
    r.reason = *why;
    return r;
  }
  // peer:N is an All-to-All over the P ranks' GPUs (fa_destinations.hpp): each of them must be usable.
  if (auto why = ex != nullptr ? std::nullopt : rank_group_unavailable_reason(target, spec.device, spec.num_ranks)) {
    r.status = "skipped";
    r.reason = *why;
    return r;
  }
  runtime::DeviceGuard guard(spec.device);
  ka::FlashAttentionConfig config = fa_kernel_config(spec.knobs);  // validated above
  config.num_ctas = spec.num_ctas;
  r.seed = spec.seed != 0 ? spec.seed : fresh_seed();
  const FaProblem prob(spec.num_heads, spec.seq_len, spec.head_dim, r.seed);
  runtime::Stream stream;
  const cudaStream_t s = stream.get();

  // Argument blocks. The fused / cc output's rank slices live where the target puts them (fa_destinations.hpp).
  ka::FlashAttentionArgs base;
  prob.fill_inputs(base);
  base.num_ranks = spec.num_ranks;
  const ka::UlyssesLayout u = base.ulysses();
  const std::uint64_t per_rank = u.dst_bytes_per_rank();
  if (ex != nullptr && ex->window_bytes < per_rank * static_cast<std::uint64_t>(spec.num_ranks))
    throw input_error("exchange", "the receive windows hold " + std::to_string(ex->window_bytes) + " bytes; this point "
                                  "needs P x " + std::to_string(per_rank));
  // One-sender emulation: every slice where the target puts it. Exchange: each rank's window, this sender's block.
  std::unique_ptr<RankDestinations> dst;
  if (ex == nullptr) dst = std::make_unique<RankDestinations>(target, spec.device, spec.num_ranks, per_rank);
  r.remote_bytes = ex != nullptr ? static_cast<double>(per_rank) * (spec.num_ranks - 1)
                                 : static_cast<double>(dst->remote_bytes());
  r.destinations = ex != nullptr ? ex->description : dst->describe();
  // FA-only, layout-matched (issue 13 item 1): the fused epilogue itself (same [token][H][d] rank slices,
  // same 16-byte stores, same bytes) into a local HBM buffer, so T_fused - T_FA isolates the remote path.
  DeviceBuffer fa_out(per_rank * spec.num_ranks);
  ka::FlashAttentionArgs fa = base, fused = base, cc = base;
  fa.mode = fused.mode = ka::EpilogueMode::kFused;
  cc.mode = ka::EpilogueMode::kCompletionCoupled;
  for (int rank = 0; rank < spec.num_ranks; ++rank) {
    fa.dst[rank] = static_cast<std::uint8_t*>(fa_out.get()) + rank * per_rank;
    fused.dst[rank] = cc.dst[rank] =
        ex != nullptr ? static_cast<std::uint8_t*>(ex->peer_windows[rank]) + ex->world_rank * per_rank : dst->slice(rank);
    fa.dst_bytes[rank] = fused.dst_bytes[rank] = cc.dst_bytes[rank] = per_rank;
  }
  // The former FA-only, heads-major [H][M][d] (kLocal), kept as a labelled extra (the layout bias).
  DeviceBuffer out(prob.bytes());
  ka::FlashAttentionArgs heads_major = base;
  heads_major.mode = ka::EpilogueMode::kLocal;
  heads_major.out = out.get();
  heads_major.out_bytes = out.bytes();
  for (const ka::FlashAttentionArgs* a : {&fa, &fused, &cc, &heads_major}) ka::validate_flash_attention(config, *a);
  r.num_ctas = ka::flash_attention_grid_size(config, base);
  r.num_tiles = static_cast<int>(base.num_tiles());
  r.heads_per_band = ka::flash_attention_heads_per_band(config, base);
  r.volume_bytes = static_cast<double>(prob.bytes());
  r.fa_only_layout = "ulysses";

  // A2A on the copy engine: FA-only's output is already in rank slices, so rank r's share is one contiguous
  // copy of its slice (what an All-to-All sends); bulk: the same volume as one copy.
  // Across ranks: the collective, from the same rank slices into the same receive layout the fused stores fill.
  auto enqueue_a2a = [&](cudaStream_t st) {
    if (ex != nullptr) return ex->alltoall(fa_out.get(), ex->own_window, per_rank, st);
    for (int rank = 0; rank < spec.num_ranks; ++rank)
      XS_CUDA_CHECK(cudaMemcpyAsync(fused.dst[rank], fa.dst[rank], per_rank, cudaMemcpyDefault, st));
  };
  // Only where every slice lives in one buffer (local, host); an All-to-All has no single destination.
  void* const contiguous = dst != nullptr ? dst->contiguous_base() : nullptr;
  auto enqueue_bulk = [&](cudaStream_t st) {
    XS_CUDA_CHECK(cudaMemcpyAsync(contiguous, fa_out.get(), fa_out.bytes(), cudaMemcpyDefault, st));
  };
  auto enqueue_fa = [&](cudaStream_t st) { ka::launch_flash_attention(config, fa, st); };
  auto enqueue_serial = [&](cudaStream_t st) {
    enqueue_fa(st);
    enqueue_a2a(st);
  };
  auto enqueue_fused = [&](cudaStream_t st) { ka::launch_flash_attention(config, fused, st); };
  auto enqueue_cc = [&](cudaStream_t st) { ka::launch_flash_attention(config, cc, st); };
  auto enqueue_heads_major = [&](cudaStream_t st) { ka::launch_flash_attention(config, heads_major, st); };

  // ---- Verification (outputs poisoned before each run) ----
  XS_CUDA_CHECK(cudaMemsetAsync(fa_out.get(), 0xFF, fa_out.bytes(), s));  // on s: it is non-blocking
  enqueue_fa(s);  // also the first launch outside any capture (allocates the timeout report)
  sync_checked(s, "flash attention (FA-only, local rank slices)");
  const std::vector<std::uint16_t> fa_slices = prob.download(fa_out);
  r.unwritten_local = count_poison(fa_slices.data(), fa_slices.size());
  // Heads-major [H][M][d]: what the reference check and the destination check read.
  const std::vector<std::uint16_t> local = gather_heads_major(u, contiguous_rank_slices(u, fa_slices.data()));
  bool ok = r.unwritten_local == 0;
  if (spec.verify) {
    const int step = spec.verify_row_step > 0 ? spec.verify_row_step : std::max(1, spec.seq_len / 1024);
    const std::vector<float> ref = run_gpu_reference(prob, step, s);
    const ErrorStats e = compare_sampled_rows(local.data(), spec.num_heads, spec.seq_len, spec.head_dim, step, ref.data());
    r.rel_error = e.rel_error;
    r.max_abs_error = e.max_abs_error;
    r.error_detail = e.describe();
    ok = ok && e.rel_error <= kRelTolerance;
    // The heads-major extra: the same compute path, so the same bits in the other order.
    XS_CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), s));
    enqueue_heads_major(s);
    sync_checked(s, "flash attention (heads-major)");
    const std::vector<std::uint16_t> hm = prob.download(out);
    for (std::size_t i = 0; i < hm.size(); ++i) r.wrong_heads_major += hm[i] != local[i];
    if (r.wrong_heads_major != 0) r.error_detail += "; heads_major: " + std::to_string(r.wrong_heads_major) + " differ";
    ok = ok && r.wrong_heads_major == 0;
    struct Run {
      std::function<void(cudaStream_t)> enqueue;
      std::uint64_t* wrong;
      const char* name;
    };
    const std::size_t slice_elems = per_rank / sizeof(std::uint16_t);
    for (const Run& run : {Run{enqueue_serial, &r.wrong_serial, "serial"}, Run{enqueue_fused, &r.wrong_fused, "fused"},
                           Run{enqueue_cc, &r.wrong_cc, "completion_coupled"}}) {
      if (ex != nullptr) {  // every rank poisons its window before any rank writes into it
        XS_CUDA_CHECK(cudaMemsetAsync(ex->own_window, 0xFF, per_rank * spec.num_ranks, s));
        sync_checked(s, "poison the receive window");
        ex->barrier();
      } else {
        dst->poison();
      }
      // Serial's FA launch rewrites the slices its copy sends: poisoned, so a slice it misses cannot pass
      // on the first FA-only run's bits.
      XS_CUDA_CHECK(cudaMemsetAsync(fa_out.get(), 0xFF, fa_out.bytes(), s));
      run.enqueue(s);
      sync_checked(s, run.name);
      DestinationCheck c;
      if (ex != nullptr) {  // every sender finished (its kernel ends with a system fence), then read what came in
        ex->barrier();
        std::vector<std::uint16_t> window(slice_elems * spec.num_ranks);
        XS_CUDA_CHECK(cudaMemcpy(window.data(), ex->own_window, per_rank * spec.num_ranks, cudaMemcpyDeviceToHost));
        c = check_received_blocks(window.data(), spec.num_ranks, fa_slices.data() + ex->world_rank * slice_elems,
                                  slice_elems);
        ex->barrier();  // nobody poisons a window for the next run while a rank still reads its own
      } else {
        const std::vector<std::vector<std::uint16_t>> slices = dst->download();
        std::vector<const std::uint16_t*> views;
        for (const auto& v : slices) views.push_back(v.data());
        c = check_ulysses_destination(u, local.data(), views);
      }
      *run.wrong = c.num_wrong + c.num_foreign_written;
      if (!c.ok() && r.error_detail.find(run.name) == std::string::npos)
        r.error_detail += std::string("; ") + run.name + ": " + std::to_string(c.num_wrong) + " wrong, first " + c.first_wrong;
      ok = ok && c.ok();
    }
  }
  r.verified = spec.verify && ok;

  // ---- Instrumented launches (untimed) ----
  // Records per instrumented launch: 2 per tile, more with a split tail (the same for fa, fused and cc).
  const std::uint64_t records_bytes = spec.instrument ? ka::flash_attention_records_bytes(config, fa) : 0;
  const auto record_slots = static_cast<std::uint32_t>(records_bytes / sizeof(ka::TileRecord) / 2);
  if (spec.instrument) {
    DeviceBuffer rec(records_bytes);
    const std::pair<ka::FlashAttentionArgs*, Instrumented> runs[] = {
        {&fa, Instrumented::kFaOnly}, {&fused, Instrumented::kFused}, {&cc, Instrumented::kCompletionCoupled}};
    for (const auto& [a, which] : runs) {
      XS_CUDA_CHECK(cudaMemsetAsync(rec.get(), 0, rec.bytes(), s));
      ka::FlashAttentionArgs ia = *a;
      ia.records = static_cast<ka::TileRecord*>(rec.get());
      ia.records_bytes = rec.bytes();
      ka::launch_flash_attention(config, ia, s);
      sync_checked(s, "instrumented flash attention");
      std::vector<ka::TileRecord> recs(rec.bytes() / sizeof(ka::TileRecord));
      XS_CUDA_CHECK(cudaMemcpy(recs.data(), rec.get(), rec.bytes(), cudaMemcpyDeviceToHost));
      summarize_records(recs, r.num_ctas, which, r);
    }
  }

  // ---- Timing: CUDA Graph replay, rotating round-robin, medians (runtime/variant_timer.hpp) ----
  const int L = std::max(1, spec.launches_per_graph);
  enum { kFa, kA2a, kSerial, kFused, kCc, kHeadsMajor, kBulk };
  std::vector<runtime::VariantEnqueue> timed = {enqueue_fa,    enqueue_a2a, enqueue_serial,
                                                enqueue_fused, enqueue_cc,  enqueue_heads_major};
  if (contiguous != nullptr) timed.push_back(enqueue_bulk);
  // Across ranks every replay starts together: the collective variants need it, and the others then meet the
  // same traffic from the other ranks as the fused variant does.
  const runtime::ReplayBarrier barrier = ex != nullptr ? ex->barrier : runtime::ReplayBarrier();
  const auto t = runtime::time_variants(timed, L, spec.warmup_replays, spec.repetitions, s, sync_checked, barrier);
  r.t_fa = summarize(t[kFa]);
  r.t_a2a = summarize(t[kA2a]);
  if (contiguous != nullptr) r.t_a2a_bulk = summarize(t[kBulk]);
  r.t_serial = summarize(t[kSerial]);
  r.t_fused = summarize(t[kFused]);
  r.t_cc = summarize(t[kCc]);
  r.t_fa_heads_major = summarize(t[kHeadsMajor]);
  {
    const auto alone = runtime::time_variants({enqueue_fa}, L, 5, std::max(20, spec.repetitions), s, sync_checked,
                                              barrier);
    r.t_fa_alone = summarize(alone[0]);
    // The clock right after such a batch, probed as the attach script probes cuDNN's (fa_clock_probe.hpp).
    r.clock_probe_fa_hz = summarize(probe_clock_after_batches(
        [&](cudaStream_t st) {
          for (int l = 0; l < L; ++l) enqueue_fa(st);
        },
        kClockProbes, s));
  }
  r.e_res_paired = summarize(runtime::paired_difference(t[kFused], t[kFa]).samples);  // same-round differences
  r.e_cc_paired = summarize(runtime::paired_difference(t[kCc], t[kFa]).samples);
  // ---- Sender-side boundary (attention/run/fa_sender.hpp): rounds of L instrumented back-to-back launches,
  // one stream synchronization per round; burst alignment from every kept fused launch ----
  if (spec.instrument) {
    auto instrumented = [&config, records_bytes](ka::FlashAttentionArgs a) {
      return [&config, records_bytes, a](cudaStream_t st, ka::TileRecord* records) mutable {
        a.records = records;
        a.records_bytes = records_bytes;
        ka::launch_flash_attention(config, a, st);
      };
    };
    enum { kSenderFa, kSenderFused, kSenderCc, kSenderSerial };
    std::vector<BurstAlignment> bursts;
    // Per kept launch of FA-only and fused, in order: its SM clock and its span in SM cycles.
    std::vector<double> clock_of[2], cycles_of[2];
    std::vector<double> b2b_span, b2b_idle, b2b_sigma_median, b2b_sigma_max, b2b_gap;  // FA-only launches
    std::vector<double> b2b_start_spread, b2b_tiles_min, b2b_tiles_max;
    std::vector<double> sigma_cycles_of[2];  // per kept launch: the median CTA's sigma in SM cycles
    // Per kept launch with a clock: its critical path's Q-loop / epilogue / other parts in SM cycles.
    std::vector<std::array<double, 3>> critical_cycles_of[2];
    std::uint64_t prev_last_ns = 0;
    r.fa_by_position_stream = PositionTimelines(L);
    const auto sender = time_sender_side(
        {{instrumented(fa), {}}, {instrumented(fused), {}}, {instrumented(cc), {}}, {instrumented(fa), enqueue_a2a}},
        record_slots, L, spec.warmup_replays, spec.repetitions, s,
        [&](std::size_t v, const std::vector<ka::TileRecord>& recs) {
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
            critical_cycles_of[v].push_back(
                {tl.critical.qloop_s * hz, tl.critical.epilogue_s * hz, tl.critical.other_s * hz});
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
            if (clock_of[v].size() % static_cast<std::size_t>(L) != 1 && L > 1 && prev_last_ns > 0 &&
                first_ns > prev_last_ns)
              b2b_gap.push_back(static_cast<double>(first_ns - prev_last_ns) * 1e-9);
            prev_last_ns = last_ns;
          }
        },
        barrier);
    static_assert(kSenderFa == 0 && kSenderFused == 1, "clock_of / cycles_of are indexed by these variants");
    r.back_to_back_span = stats_of(b2b_span);
    r.back_to_back_idle_fraction = stats_of(b2b_idle);
    r.back_to_back_sigma_median = stats_of(b2b_sigma_median);
    r.back_to_back_sigma_max = stats_of(b2b_sigma_max);
    r.back_to_back_gap = stats_of(b2b_gap);
    r.back_to_back_start_spread = stats_of(b2b_start_spread);
    r.back_to_back_tiles_min = stats_of(b2b_tiles_min);
    r.back_to_back_tiles_max = stats_of(b2b_tiles_max);
    // The same instrumented FA-only launches replayed as a CUDA graph of L, the timed replays' regime, kept by
    // position: whether a launch right after another one runs longer there, by clock or by cycles.
    // A diagnostic: a failure of it is recorded in the point (measured.timeline.fa_only_by_position.graph_error)
    // and the point's measurements are kept; a sticky CUDA error still fails the point at its next call.
    r.fa_by_position_graph = PositionTimelines(L);
    try {
      replay_instrumented_graph({instrumented(fa), {}}, record_slots, L, spec.warmup_replays, spec.repetitions,
                                s, [&](std::size_t launch, const std::vector<ka::TileRecord>& recs) {
                                  const double hz = launch_sm_clock_hz(recs.data(), recs.size(), r.num_ctas);
                                  if (hz > 0)
                                    r.fa_by_position_graph.add(
                                        launch, hz, launch_timeline(recs.data(), recs.size(), r.num_ctas, hz));
                                });
    } catch (const Error& e) {
      r.fa_by_position_graph = PositionTimelines(L);
      r.fa_by_position_graph_error = e.what();
    }
    r.clock_fa_hz = stats_of(clock_of[kSenderFa]);
    r.clock_fused_hz = stats_of(clock_of[kSenderFused]);
    r.sigma_rounds_fa_cycles = stats_of(sigma_cycles_of[kSenderFa]);
    r.sigma_rounds_fused_cycles = stats_of(sigma_cycles_of[kSenderFused]);
    // Rounds of L launches, in the same order for both variants (time_sender_side keeps every round).
    const std::size_t per_round = static_cast<std::size_t>(L);
    const std::size_t rounds = std::min(cycles_of[0].size(), cycles_of[1].size()) / per_round;
    const double ref_hz = r.clock_fa_hz.median;
    bool every_clock = ref_hz > 0;
    for (const auto& c : clock_of)
      for (double hz : c) every_clock = every_clock && hz > 0;
    if (every_clock && rounds > 0) {
      std::vector<double> fa_s, diff_s;
      for (std::size_t k = 0; k < rounds; ++k) {
        double mean[2] = {0, 0};
        for (int v = 0; v < 2; ++v)
          for (std::size_t l = 0; l < per_round; ++l)
            mean[v] += cycles_of[v][k * per_round + l] / static_cast<double>(per_round);
        fa_s.push_back(mean[0] / ref_hz);
        diff_s.push_back((mean[1] - mean[0]) / ref_hz);
      }
      r.sender_fa_cycles = summarize(std::move(fa_s));
      r.e_res_sender_cycles_paired = summarize(std::move(diff_s));
      // Every kept launch has a clock here, so each has its critical path, in the same order as cycles_of.
      if (critical_cycles_of[0].size() == cycles_of[0].size() && critical_cycles_of[1].size() == cycles_of[1].size()) {
        auto d = critical_path_round_differences(critical_cycles_of, per_round, rounds, ref_hz);
        r.critical_qloop_paired = summarize(std::move(d[0]));
        r.critical_epilogue_paired = summarize(std::move(d[1]));
        r.critical_other_paired = summarize(std::move(d[2]));
      }
    }
    r.sender_fa = summarize(sender[kSenderFa]);
    r.sender_fused = summarize(sender[kSenderFused]);
    r.sender_cc = summarize(sender[kSenderCc]);
    r.sender_serial = summarize(sender[kSenderSerial]);
    r.e_res_sender_paired = summarize(runtime::paired_difference(sender[kSenderFused], sender[kSenderFa]).samples);
    r.e_cc_sender_paired = summarize(runtime::paired_difference(sender[kSenderCc], sender[kSenderFa]).samples);
    std::vector<double> spread, peak, mean;
    for (const BurstAlignment& b : bursts) {
      if (b.num_waves > 0) spread.push_back(b.phase_spread_median_s);
      peak.push_back(b.peak_concurrent_storers);
      mean.push_back(b.mean_concurrent_storers);
    }
    r.store_phase_spread_median_s = stats_of(spread).median;
    r.peak_concurrent_storers = stats_of(peak).median;
    r.mean_concurrent_storers = stats_of(mean).median;
  }
  const double flops = 4.0 * spec.seq_len * static_cast<double>(spec.seq_len) * spec.head_dim * spec.num_heads;
  r.fa_tflops = r.t_fa.median > 0 ? flops / r.t_fa.median * 1e-12 : 0;
  if (spec.verify && !ok) {
    r.status = "failed";
    r.reason = "verification failed: " + r.error_detail;
  }
  return r;
}

std::shared_ptr<const FaExchange> fa_exchange_over(const runtime::RankWindows& windows, bench::RankComm& comm) {
  auto ex = std::make_shared<FaExchange>();
  static_cast<runtime::WindowExchange&>(*ex) = windows.exchange(comm);
  ex->alltoall = [&windows](const void* send, void* recv, std::size_t bytes_per_peer, void* stream) {
    windows.alltoall(send, recv, bytes_per_peer, stream);
  };
  ex->description = "an All-to-All over " + windows.describe() + "; Serial and A2A-only by ncclAlltoAll";
  return ex;
}

}  // namespace xs::attention
