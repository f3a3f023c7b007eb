// xstage attention layer (CUDA): the fa_a2a point runner (see fa_runner.hpp) on the shared point harness
// (bench/point_harness.hpp): the point's device state, its variants and checks, and what it derives afterwards.
#include "xs/attention/run/fa_runner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "xs/attention/reference/cpu_reference.hpp"
#include "xs/attention/run/fa_clock_probe.hpp"
#include "xs/attention/run/fa_device.hpp"
#include "xs/attention/point/fa_app_point.hpp"
#include "xs/attention/run/fa_burst.hpp"
#include "xs/attention/run/fa_destinations.hpp"
#include "xs/attention/reference/fa_layout.hpp"
#include "xs/attention/run/fa_sender.hpp"
#include "xs/attention/run/fa_timeline.hpp"
#include "xs/kernels/attention/flash_attention.hpp"
#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"
#include "xs/kernels/common/cuda_check.hpp"
#include "xs/bench/point_harness.hpp"
#include "xs/bench/rank_comm.hpp"
#include "xs/backends/cuda/devices.hpp"
#include "xs/backends/nccl/rank_windows.hpp"
#include "xs/backends/cuda/stream.hpp"
#include "xs/backends/gpu/targets.hpp"
#include "xs/backends/gpu/variant_timer.hpp"

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

// The point's device state: inputs, the variants' argument blocks, their destinations (fa_destinations.hpp).
struct FaPointDevice {
  const FaA2aPointSpec& spec;
  const FaExchange* ex;  // several ranks: a real All-to-All through their windows
  runtime::DeviceGuard guard;
  ka::FlashAttentionConfig config;
  FaProblem prob;
  runtime::Stream stream;
  cudaStream_t s;
  ka::FlashAttentionArgs base, fa, fused, cc, heads_major;
  ka::UlyssesLayout u;
  std::uint64_t per_rank = 0;
  std::unique_ptr<RankDestinations> dst;  // one-sender emulation only
  DeviceBuffer fa_out, out;
  void* contiguous = nullptr;
  std::vector<std::uint16_t> fa_slices, local;  // FA-only's verified output: rank slices, heads-major

  FaPointDevice(const FaA2aPointSpec& sp, const runtime::Target& target, const FaExchange* exchange,
                FaA2aPointResult& r);
  std::uint64_t records_bytes() const { return ka::flash_attention_records_bytes(config, fa); }
  void enqueue_a2a(cudaStream_t st) const {
    if (ex != nullptr) return ex->alltoall(fa_out.get(), ex->own_window, per_rank, st);
    for (int rank = 0; rank < spec.num_ranks; ++rank)
      XS_CUDA_CHECK(cudaMemcpyAsync(fused.dst[rank], fa.dst[rank], per_rank, cudaMemcpyDefault, st));
  }
  void enqueue_bulk(cudaStream_t st) const {
    XS_CUDA_CHECK(cudaMemcpyAsync(contiguous, fa_out.get(), fa_out.bytes(), cudaMemcpyDefault, st));
  }
  void enqueue_fa(cudaStream_t st) const { ka::launch_flash_attention(config, fa, st); }
  void enqueue_serial(cudaStream_t st) const {
    enqueue_fa(st);
    enqueue_a2a(st);
  }
  void enqueue_fused(cudaStream_t st) const { ka::launch_flash_attention(config, fused, st); }
  void enqueue_cc(cudaStream_t st) const { ka::launch_flash_attention(config, cc, st); }
  void enqueue_heads_major(cudaStream_t st) const { ka::launch_flash_attention(config, heads_major, st); }
};

FaPointDevice::FaPointDevice(const FaA2aPointSpec& sp, const runtime::Target& target, const FaExchange* exchange,
                             FaA2aPointResult& r)
    : spec(sp),
      ex(exchange),
      guard(sp.device),
      config(fa_kernel_config(sp.knobs)),  // validated before
      prob(sp.num_heads, sp.seq_len, sp.head_dim, r.seed = sp.seed != 0 ? sp.seed : fresh_seed()),
      s(stream.get()) {
  config.num_ctas = spec.num_ctas;
  // Argument blocks. The fused / cc output's rank slices live where the target puts them (fa_destinations.hpp).
  prob.fill_inputs(base);
  base.num_ranks = spec.num_ranks;
  u = base.ulysses();
  per_rank = u.dst_bytes_per_rank();
  if (ex != nullptr && ex->window_bytes < per_rank * static_cast<std::uint64_t>(spec.num_ranks))
    throw input_error("exchange", "the receive windows hold " + std::to_string(ex->window_bytes) + " bytes; this point "
                                  "needs P x " + std::to_string(per_rank));
  // One-sender emulation: every slice where the target puts it. Exchange: each rank's window, this sender's block.
  if (ex == nullptr) dst = std::make_unique<RankDestinations>(target, spec.device, spec.num_ranks, per_rank);
  r.remote_bytes = ex != nullptr ? static_cast<double>(per_rank) * (spec.num_ranks - 1)
                                 : static_cast<double>(dst->remote_bytes());
  r.destinations = ex != nullptr ? ex->description : dst->describe();
  // FA-only, layout-matched (issue 13 item 1): the fused epilogue itself (same [token][H][d] rank slices,
  // same 16-byte stores, same bytes) into a local HBM buffer, so T_fused - T_FA isolates the remote path.
  fa_out = DeviceBuffer(per_rank * spec.num_ranks);
  fa = fused = cc = base;
  fa.mode = fused.mode = ka::EpilogueMode::kFused;
  cc.mode = ka::EpilogueMode::kCompletionCoupled;
  for (int rank = 0; rank < spec.num_ranks; ++rank) {
    fa.dst[rank] = static_cast<std::uint8_t*>(fa_out.get()) + rank * per_rank;
    fused.dst[rank] = cc.dst[rank] =
        ex != nullptr ? static_cast<std::uint8_t*>(ex->peer_windows[rank]) + ex->world_rank * per_rank : dst->slice(rank);
    fa.dst_bytes[rank] = fused.dst_bytes[rank] = cc.dst_bytes[rank] = per_rank;
  }
  // The former FA-only, heads-major [H][M][d] (kLocal), kept as a labelled extra (the layout bias).
  out = DeviceBuffer(prob.bytes());
  heads_major = base;
  heads_major.mode = ka::EpilogueMode::kLocal;
  heads_major.out = out.get();
  heads_major.out_bytes = out.bytes();
  for (const ka::FlashAttentionArgs* a : {&fa, &fused, &cc, &heads_major}) ka::validate_flash_attention(config, *a);
  r.num_ctas = ka::flash_attention_grid_size(config, base);
  r.num_tiles = static_cast<int>(base.num_tiles());
  r.heads_per_band = ka::flash_attention_heads_per_band(config, base);
  r.volume_bytes = static_cast<double>(prob.bytes());
  r.fa_only_layout = "ulysses";
  // Only where every slice lives in one buffer (local, host); an All-to-All has no single destination.
  contiguous = dst != nullptr ? dst->contiguous_base() : nullptr;
}

// FA-only's verified launch (also without verification: the first launch outside any capture, which allocates
// the timeout report; its slices are what the other variants are checked against), with the reference check.
bench::VerifiedVariant fa_only_verified(FaPointDevice& d, FaA2aPointResult& r) {
  bench::VerifiedVariant v;
  v.name = "fa_only";
  v.always = true;
  v.poison = [&d] { XS_CUDA_CHECK(cudaMemsetAsync(d.fa_out.get(), 0xFF, d.fa_out.bytes(), d.s)); };  // s: non-blocking
  v.launch = [&d] {
    d.enqueue_fa(d.s);
    sync_checked(d.s, "flash attention (FA-only, local rank slices)");
  };
  v.check = [&d, &r] {
    const FaA2aPointSpec& spec = d.spec;
    d.fa_slices = d.prob.download(d.fa_out);
    r.unwritten_local = count_poison(d.fa_slices.data(), d.fa_slices.size());
    // Heads-major [H][M][d]: what the reference check and the destination check read.
    d.local = gather_heads_major(d.u, contiguous_rank_slices(d.u, d.fa_slices.data()));
    bool ok = r.unwritten_local == 0;
    if (spec.verify) {
      const int step = spec.verify_row_step > 0 ? spec.verify_row_step : std::max(1, spec.seq_len / 1024);
      const std::vector<float> ref = run_gpu_reference(d.prob, step, d.s);
      const ErrorStats e =
          compare_sampled_rows(d.local.data(), spec.num_heads, spec.seq_len, spec.head_dim, step, ref.data());
      r.rel_error = e.rel_error;
      r.max_abs_error = e.max_abs_error;
      r.error_detail = e.describe();
      ok = ok && e.rel_error <= kRelTolerance;
    }
    return ok;
  };
  return v;
}

// Serial, fused or cc into poisoned destinations: checked against FA-only's slices.
bench::VerifiedVariant destination_verified(FaPointDevice& d, FaA2aPointResult& r, const char* name,
                                            void (FaPointDevice::*enqueue)(cudaStream_t) const, std::uint64_t* wrong) {
  bench::VerifiedVariant v;
  v.name = name;
  v.exchanged = true;
  v.poison = [&d] {
    if (d.ex != nullptr) {  // every rank poisons its window before any rank writes into it (the harness meets)
      XS_CUDA_CHECK(cudaMemsetAsync(d.ex->own_window, 0xFF, d.per_rank * d.spec.num_ranks, d.s));
      sync_checked(d.s, "poison the receive window");
    } else {
      d.dst->poison();
    }
    // Serial's FA launch rewrites the slices its copy sends: poisoned, so a slice it misses cannot pass
    // on the first FA-only run's bits.
    XS_CUDA_CHECK(cudaMemsetAsync(d.fa_out.get(), 0xFF, d.fa_out.bytes(), d.s));
  };
  v.launch = [&d, name, enqueue] {
    (d.*enqueue)(d.s);
    sync_checked(d.s, name);
  };
  v.check = [&d, &r, name, wrong] {
    const int p = d.spec.num_ranks;
    const std::size_t slice_elems = d.per_rank / sizeof(std::uint16_t);
    DestinationCheck c;
    if (d.ex != nullptr) {  // every sender finished (its kernel ends with a system fence), then read what came in
      std::vector<std::uint16_t> window(slice_elems * p);
      XS_CUDA_CHECK(cudaMemcpy(window.data(), d.ex->own_window, d.per_rank * p, cudaMemcpyDeviceToHost));
      c = check_received_blocks(window.data(), p, d.fa_slices.data() + d.ex->world_rank * slice_elems, slice_elems);
    } else {
      const std::vector<std::vector<std::uint16_t>> slices = d.dst->download();
      std::vector<const std::uint16_t*> views;
      for (const auto& slice : slices) views.push_back(slice.data());
      c = check_ulysses_destination(d.u, d.local.data(), views);
    }
    *wrong = c.num_wrong + c.num_foreign_written;
    if (!c.ok() && r.error_detail.find(name) == std::string::npos)
      r.error_detail += std::string("; ") + name + ": " + std::to_string(c.num_wrong) + " wrong, first " + c.first_wrong;
    return c.ok();
  };
  return v;
}

// Verified launches in order: FA-only (with the reference), heads-major, serial, fused, cc.
std::vector<bench::VerifiedVariant> fa_verified_variants(FaPointDevice& d, FaA2aPointResult& r) {
  bench::VerifiedVariant hm;
  hm.name = "heads_major";  // the same compute path as FA-only, so the same bits in the other order
  hm.poison = [&d] { XS_CUDA_CHECK(cudaMemsetAsync(d.out.get(), 0xFF, d.out.bytes(), d.s)); };
  hm.launch = [&d] {
    d.enqueue_heads_major(d.s);
    sync_checked(d.s, "flash attention (heads-major)");
  };
  hm.check = [&d, &r] {
    const std::vector<std::uint16_t> got = d.prob.download(d.out);
    for (std::size_t i = 0; i < got.size(); ++i) r.wrong_heads_major += got[i] != d.local[i];
    if (r.wrong_heads_major != 0) r.error_detail += "; heads_major: " + std::to_string(r.wrong_heads_major) + " differ";
    return r.wrong_heads_major == 0;
  };
  return {fa_only_verified(d, r), hm,
          destination_verified(d, r, "serial", &FaPointDevice::enqueue_serial, &r.wrong_serial),
          destination_verified(d, r, "fused", &FaPointDevice::enqueue_fused, &r.wrong_fused),
          destination_verified(d, r, "completion_coupled", &FaPointDevice::enqueue_cc, &r.wrong_cc)};
}

// Untimed instrumented launches of FA-only, fused and cc: clocks, sigma, spans and timelines.
void instrument_untimed(FaPointDevice& d, FaA2aPointResult& r) {
  // Records per instrumented launch: 2 per tile, more with a split tail (the same for fa, fused and cc).
  DeviceBuffer rec(d.records_bytes());
  const std::pair<const ka::FlashAttentionArgs*, Instrumented> runs[] = {
      {&d.fa, Instrumented::kFaOnly}, {&d.fused, Instrumented::kFused}, {&d.cc, Instrumented::kCompletionCoupled}};
  for (const auto& [a, which] : runs) {
    XS_CUDA_CHECK(cudaMemsetAsync(rec.get(), 0, rec.bytes(), d.s));
    ka::FlashAttentionArgs ia = *a;
    ia.records = static_cast<ka::TileRecord*>(rec.get());
    ia.records_bytes = rec.bytes();
    ka::launch_flash_attention(d.config, ia, d.s);
    sync_checked(d.s, "instrumented flash attention");
    std::vector<ka::TileRecord> recs(rec.bytes() / sizeof(ka::TileRecord));
    XS_CUDA_CHECK(cudaMemcpy(recs.data(), rec.get(), rec.bytes(), cudaMemcpyDeviceToHost));
    summarize_records(recs, r.num_ctas, which, r);
  }
}

// The timed variants, in the order of these indices (bulk only where every slice lives in one buffer).
enum { kFa, kA2a, kSerial, kFused, kCc, kHeadsMajor, kBulk };

std::vector<runtime::VariantEnqueue> fa_timed_variants(const FaPointDevice& d) {
  std::vector<runtime::VariantEnqueue> timed;
  for (auto enqueue : {&FaPointDevice::enqueue_fa, &FaPointDevice::enqueue_a2a, &FaPointDevice::enqueue_serial,
                       &FaPointDevice::enqueue_fused, &FaPointDevice::enqueue_cc, &FaPointDevice::enqueue_heads_major})
    timed.push_back([&d, enqueue](cudaStream_t st) { (d.*enqueue)(st); });
  if (d.contiguous != nullptr) timed.push_back([&d](cudaStream_t st) { d.enqueue_bulk(st); });
  return timed;
}

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

// Why the point cannot run here, or nothing.
std::optional<std::string> fa_unavailable_reason(const FaA2aPointSpec& spec, const runtime::Target& target,
                                                 const FaExchange* ex) {
  runtime::DeviceInfo info;
  // With an exchange the windows exist already: only this rank's GPU is checked.
  if (auto why = runtime::sm90_point_unavailable_reason(ex != nullptr ? runtime::parse_target("local") : target,
                                                        spec.device, &info))
    return why;
  // peer:N is an All-to-All over the P ranks' GPUs (fa_destinations.hpp): each of them must be usable.
  if (ex != nullptr) return std::nullopt;
  return rank_group_unavailable_reason(target, spec.device, spec.num_ranks);
}

}  // namespace

FaA2aPointResult run_fa_a2a_point(const FaA2aPointSpec& spec) {
  FaA2aPointResult r;
  const runtime::Target target = runtime::parse_target(spec.target);
  // Shape and flag errors are input errors (exit 2) even where no GPU exists.
  validate_fa_point_spec(spec);
  const FaExchange* ex = spec.exchange.get();  // several ranks: a real All-to-All through their windows
  if (ex != nullptr) check_exchange(*ex, spec);
  const int L = std::max(1, spec.launches_per_graph);
  // Across ranks every replay starts together: the collective variants need it, and the others then meet the
  // same traffic from the other ranks as the fused variant does.
  const runtime::ReplayBarrier barrier = ex != nullptr ? ex->barrier : runtime::ReplayBarrier();
  std::optional<FaPointDevice> dev;
  const bench::PointOutcome out = bench::run_point_harness(
      [&] { return fa_unavailable_reason(spec, target, ex); },
      [&] {
        FaPointDevice& d = dev.emplace(spec, target, ex, r);
        bench::PointPlan plan;
        plan.verify = spec.verify;
        plan.verified = fa_verified_variants(d, r);
        plan.exchange.barrier = barrier;
        if (spec.instrument) plan.instrument = [&d, &r] { instrument_untimed(d, r); };
        // Timing: CUDA Graph replay, rotating round-robin, medians (backends/gpu/variant_timer.hpp).
        const std::vector<runtime::VariantEnqueue> timed = fa_timed_variants(d);
        plan.timing = {timed.size(), spec.warmup_replays, spec.repetitions,
                       [&d, timed, L] { return runtime::graph_replay(timed, L, d.s, sync_checked); }};
        return plan;
      });
  if (!out.skip_reason.empty()) {
    r.status = "skipped";
    r.reason = out.skip_reason;
    return r;
  }
  const FaPointDevice& d = *dev;
  r.verified = out.verified;
  const auto& t = out.rounds;
  r.t_fa = summarize(t[kFa]);
  r.t_a2a = summarize(t[kA2a]);
  if (d.contiguous != nullptr) r.t_a2a_bulk = summarize(t[kBulk]);
  r.t_serial = summarize(t[kSerial]);
  r.t_fused = summarize(t[kFused]);
  r.t_cc = summarize(t[kCc]);
  r.t_fa_heads_major = summarize(t[kHeadsMajor]);
  {
    const auto alone = runtime::time_variants({[&d](cudaStream_t st) { d.enqueue_fa(st); }}, L, 5,
                                              std::max(20, spec.repetitions), d.s, sync_checked, barrier);
    r.t_fa_alone = summarize(alone[0]);
    // The clock right after such a batch, probed as the attach script probes cuDNN's (fa_clock_probe.hpp).
    r.clock_probe_fa_hz = summarize(probe_clock_after_batches(
        [&](cudaStream_t st) {
          for (int l = 0; l < L; ++l) d.enqueue_fa(st);
        },
        kClockProbes, d.s));
  }
  r.e_res_paired = summarize(runtime::paired_difference(t[kFused], t[kFa]).samples);  // same-round differences
  r.e_cc_paired = summarize(runtime::paired_difference(t[kCc], t[kFa]).samples);
  if (spec.instrument) measure_sender_side(d, L, barrier, r);
  const double flops = 4.0 * spec.seq_len * static_cast<double>(spec.seq_len) * spec.head_dim * spec.num_heads;
  r.fa_tflops = r.t_fa.median > 0 ? flops / r.t_fa.median * 1e-12 : 0;
  if (out.verification_failed) {
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
