// xstage attention layer (CUDA): the fa_a2a point runner (see fa_runner.hpp) on the shared point harness
// (bench/point_harness.hpp): the point's variants and checks on its device state (fa_point_device.hpp), the timed
// rounds, and what it derives afterwards; the sender-side boundary is fa_sender_side.hpp's.
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
#include "xs/attention/run/fa_point_device.hpp"
#include "xs/attention/point/fa_app_point.hpp"
#include "xs/attention/run/fa_burst.hpp"
#include "xs/attention/run/fa_destinations.hpp"
#include "xs/attention/reference/fa_layout.hpp"
#include "xs/attention/run/fa_sender_side.hpp"
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
