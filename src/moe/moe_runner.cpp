// xstage moe layer (CUDA): the megamoe point runner (see moe_runner.hpp).
#include "moe/moe_runner.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "common/error.hpp"
#include "common/stats.hpp"
#include "moe/combine_unpack.hpp"
#include "moe/compare_combine.hpp"
#include "moe/megamoe.hpp"
#include "moe/moe_device.hpp"
#include "moe/moe_model.hpp"
#include "moe/problem.hpp"
#include "moe/quantize.hpp"
#include "moe/random_fill.hpp"
#include "moe/routing.hpp"
#include "moe/tile_stats.hpp"
#include "runtime/check.hpp"
#include "bench/rank_comm.hpp"
#include "runtime/devices.hpp"
#include "runtime/rank_windows.hpp"
#include "runtime/stream.hpp"
#include "runtime/target_cache.hpp"
#include "runtime/targets.hpp"
#include "runtime/variant_timer.hpp"

namespace xs::moe {
namespace {

namespace km = xs::kernels::moe;
using runtime::DeviceBuffer;


// Waits for the stream; a kernel trap becomes xs::Error naming the timed-out flag when there is one.
void sync_checked(cudaStream_t s, const char* what) {
  const cudaError_t err = cudaStreamSynchronize(s);
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();
  std::string why = km::megamoe_timeout_message();
  throw Error(ExitCode::kDeviceFailure, "cuda", what,
              std::string(cudaGetErrorString(err)) + (why.empty() ? "" : "; " + why));
}

// Interpolated quantiles (common/stats), as every other result file.
TimeSummary summarize(std::vector<double> v) {
  if (v.empty()) return TimeSummary{};  // zeros, never NaN: the result file stays numeric
  const Summary sum = xs::summarize(std::move(v));
  return TimeSummary{sum.median, sum.p10, sum.p90, sum.samples};
}

TimeSummary ratio(const std::vector<double>& num, const std::vector<double>& den) {
  std::vector<double> r;
  for (std::size_t i = 0; i < num.size() && i < den.size(); ++i)
    if (den[i] > 0) r.push_back(num[i] / den[i]);
  return summarize(r);
}

// Combine slots (`slot_elems` bf16 each) in `bytes` of device memory with a poisoned element, counted on the host.
std::uint64_t count_poisoned_slots(const void* device_ptr, std::uint64_t bytes, std::size_t slot_elems) {
  std::vector<std::uint16_t> host(bytes / 2);
  XS_CUDA_CHECK(cudaMemcpy(host.data(), device_ptr, host.size() * 2, cudaMemcpyDeviceToHost));
  std::uint64_t slots = 0;
  for (std::size_t i = 0; i + slot_elems <= host.size(); i += slot_elems)
    slots += std::find(host.begin() + i, host.begin() + i + slot_elems, static_cast<std::uint16_t>(km::kPoisonBits)) !=
             host.begin() + i + slot_elems;
  return slots;
}

// Combine destinations of every rank: the emulated rank's own rows in HBM, the others through the target.
struct Destinations {
  std::vector<std::unique_ptr<runtime::TargetBuffer>> remote;
  std::vector<DeviceBuffer> own;
  std::vector<void*> ptrs;
  std::uint64_t bytes_per_rank = 0;
  void* own_window = nullptr;  // across ranks: this rank's window, the only one it poisons
  // Across ranks: every rank's window (MoeExchange).
  Destinations(const MoeExchange& ex, std::uint64_t bytes)
      : ptrs(ex.peer_windows), bytes_per_rank(bytes), own_window(ex.own_window) {}
  Destinations(const runtime::Target& target, int device, int num_ranks, int own_rank, std::uint64_t bytes)
      : bytes_per_rank(bytes) {
    for (int r = 0; r < num_ranks; ++r) {
      if (r == own_rank) {
        own.emplace_back(bytes);
        ptrs.push_back(own.back().get());
      } else if (target.kind == runtime::TargetKind::kHost) {  // pinned once per sweep, not per point
        ptrs.push_back(runtime::host_target_cache().acquire(target, device, r, bytes).device_ptr());
      } else {
        remote.push_back(std::make_unique<runtime::TargetBuffer>(target, device, bytes));
        ptrs.push_back(remote.back()->device_ptr());
      }
    }
  }
  void poison(cudaStream_t s) {
    if (own_window != nullptr) return km::launch_fill_bits16(own_window, bytes_per_rank / 2, km::kPoisonBits, s);
    for (void* p : ptrs) km::launch_fill_bits16(p, bytes_per_rank / 2, km::kPoisonBits, s);
  }
  template <class Args>
  void fill(Args& a) const {
    for (std::size_t r = 0; r < ptrs.size(); ++r) {
      a.dst[r] = ptrs[r];
      a.dst_bytes[r] = bytes_per_rank;
    }
  }
};

struct Variant {
  std::string name;
  km::ScheduleChoice schedule;
  km::EpilogueMode mode;
  bool unfused = false;
};

}  // namespace

MoePointResult run_moe_point(const MoePointSpec& spec) {
  const Routing routing = generate_routing(routing_params_of(spec));
  return run_moe_point(spec, routing, build_problem(routing, spec.shape.hidden, spec.shape.intermediate));
}

MoePointResult run_moe_point(const MoePointSpec& spec, const Routing& routing, const MoeProblem& prob) {
  MoePointResult r;
  const runtime::Target target = runtime::parse_target(spec.target);
  validate_tile_shape(spec.shape.hidden, spec.shape.intermediate, spec.block_n);
  if (spec.precision != "bf16" && spec.precision != "fp8")
    throw input_error("precision", "'" + spec.precision + "' is not a precision; accepted: bf16, fp8");
  const bool fp8 = spec.precision == "fp8";
  if (fp8 && spec.block_n != 128)
    throw input_error("block_n", "fp8 W8A8 is built for b_n = 128 only (256 accumulators per thread at 256)");
  const std::vector<std::string>& all_names = moe_variant_names();
  for (const auto& name : spec.variants)
    if (std::find(all_names.begin(), all_names.end(), name) == all_names.end())
      throw input_error("--variants", "'" + name + "' is not a variant; accepted: expert_wave, interleaved, serial, "
                                      "expert_wave_cc, interleaved_cc, unfused");
  const bool want_unfused =
      spec.variants.empty() || std::find(spec.variants.begin(), spec.variants.end(), "unfused") != spec.variants.end();
  const MoeExchange* ex = spec.exchange.get();  // several ranks: the Combine into every rank's window
  if (ex != nullptr) {
    if (want_unfused)
      throw input_error("--variants", "unfused is not built across ranks (its copy-engine Combine would need "
                                      "ncclSend/ncclRecv): name the fused variants, e.g. expert_wave,interleaved");
    if (ex->peer_windows.size() != static_cast<std::size_t>(spec.num_ranks) || !ex->barrier ||
        ex->own_window == nullptr || ex->world_rank != prob.emulated_rank)
      throw input_error("exchange", "a Combine across ranks needs one window per rank (P = " +
                                        std::to_string(spec.num_ranks) + "), a barrier, and this rank playing the "
                                        "routing's emulated rank");
    for (void* w : ex->peer_windows)
      if (w == nullptr) throw input_error("exchange", "a rank's window is not load/store reachable from this rank");
  }
  runtime::DeviceInfo info;
  if (auto why = runtime::sm90_point_unavailable_reason(ex != nullptr ? runtime::parse_target("local") : target,
                                                        spec.device, &info)) {
    r.status = "skipped";
    r.reason = *why;
    return r;
  }
  if (spec.num_ctas < 1 || spec.num_ctas > info.sm_count)
    throw input_error("K_SM", "K_SM = " + std::to_string(spec.num_ctas) + " must be in [1, " +
                                  std::to_string(info.sm_count) + "] on this device");
  runtime::DeviceGuard guard(spec.device);

  // ---- Problem ----
  if (prob.hidden != spec.shape.hidden || prob.intermediate != spec.shape.intermediate ||
      prob.num_ranks != spec.num_ranks || prob.tokens_per_rank != spec.tokens_per_rank || prob.top_k != spec.shape.top_k)
    throw input_error("problem", "the given problem was not built from this point's spec (h, I, P, T or top-k differ)");
  const km::TileSpace tiles = prob.tile_space(spec.block_n);
  r.emulated_rank = prob.emulated_rank;
  r.received_pairs = prob.num_received_pairs;
  r.remote_pairs = prob.num_remote_pairs;
  r.num_row_blocks = static_cast<int>(prob.num_row_blocks);
  r.num_arrivals = prob.num_arrivals();
  r.load_imbalance = rank_load_imbalance(routing);
  r.pairs_per_local_expert = prob.pairs_per_local_expert;
  const double h = spec.shape.hidden, inter = spec.shape.intermediate;
  r.remote_bytes = static_cast<double>(prob.num_remote_pairs) * h * 2;
  r.flops = static_cast<double>(prob.num_received_pairs) * 6.0 * h * inter;
  validate_tile_shape(spec.shape.hidden, spec.shape.intermediate, spec.block_n);
  r.num_ctas = spec.num_ctas;
  const double d_knee = static_cast<double>(spec.block_n) * spec.num_ctas / (2.0 * inter);  // eq. 16
  r.lead_rows = spec.lead_rows > 0 ? spec.lead_rows : std::max(1, static_cast<int>(std::ceil(d_knee)));
  r.experts_per_wave = spec.experts_per_wave > 0 ? spec.experts_per_wave : 1;
  if (prob.num_row_blocks == 0) {
    r.status = "skipped";
    r.reason = "no (token, top-k) pair is routed to the emulated rank";
    return r;
  }

  // ---- Memory: refuse a point that cannot fit before allocating anything (exit 2, not a failed malloc) ----
  {
    const double eb = spec.precision == "fp8" ? 1.0 : 2.0;
    const double rows = static_cast<double>(prob.num_pool_rows());
    const double el = prob.num_local_experts;
    const double dst_rank_bytes = static_cast<double>(spec.tokens_per_rank) * spec.shape.top_k * h * 2;
    // inputs (+ their bf16 originals for fp8), pool, act, 4 destination sets (target/own, reference, first,
    // unpacked) + the unfused send buffers.
    const double device_bytes = (prob.num_arrivals() * h + el * 3 * h * inter) * (eb + (eb == 1 ? 2 : 0)) +
                                rows * (h + inter) * eb + dst_rank_bytes * spec.num_ranks * 5;
    std::size_t free_bytes = 0, total_bytes = 0;
    XS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (device_bytes > 0.9 * static_cast<double>(free_bytes))
      throw input_error("T", "this point needs about " + std::to_string(device_bytes / (1 << 30)) + " GiB of device "
                             "memory and " + std::to_string(static_cast<double>(free_bytes) / (1 << 30)) +
                             " GiB are free on GPU " + std::to_string(spec.device) + "; use a smaller --T or shape");
  }

  // ---- Inputs (fresh random, never zeros) ----
  r.input_seed = spec.input_seed != 0 ? spec.input_seed : runtime::fresh_seed();
  runtime::Stream stream;
  const cudaStream_t s = stream.get();
  const std::uint64_t pool_rows = prob.num_pool_rows();
  const int e_local = prob.num_local_experts;
  // bf16 inputs; fp8 quantizes them (per-token per-128-K activation scales, 128 x 128 weight blocks).
  const std::size_t eb = fp8 ? 1 : 2;
  const std::size_t arrival_elems = static_cast<std::size_t>(prob.num_arrivals()) * spec.shape.hidden;
  const std::size_t w1_elems = static_cast<std::size_t>(e_local) * 2 * spec.shape.intermediate * spec.shape.hidden;
  const std::size_t w2_elems = static_cast<std::size_t>(e_local) * spec.shape.hidden * spec.shape.intermediate;
  DeviceBuffer arrival(arrival_elems * eb), w1(w1_elems * eb), w2(w2_elems * eb);
  DeviceBuffer pool(pool_rows * spec.shape.hidden * eb), act(pool_rows * spec.shape.intermediate * eb);
  DeviceBuffer arrival_scale, w1_scale, w2_scale, pool_scale, act_scale;
  {
    DeviceBuffer a16(fp8 ? arrival_elems * 2 : 0), w1_16(fp8 ? w1_elems * 2 : 0), w2_16(fp8 ? w2_elems * 2 : 0);
    void* a_dst = fp8 ? a16.get() : arrival.get();
    void* w1_dst = fp8 ? w1_16.get() : w1.get();
    void* w2_dst = fp8 ? w2_16.get() : w2.get();
    km::launch_fill_uniform_bf16(a_dst, arrival_elems, r.input_seed, 1.0f, s);
    km::launch_fill_uniform_bf16(w1_dst, w1_elems, r.input_seed + 1, 1.0f / std::sqrt(static_cast<float>(h)), s);
    km::launch_fill_uniform_bf16(w2_dst, w2_elems, r.input_seed + 2, 1.0f / std::sqrt(static_cast<float>(inter)), s);
    if (fp8) {
      arrival_scale = DeviceBuffer(arrival_elems / 128 * 4);
      w1_scale = DeviceBuffer(w1_elems / (128 * 128) * 4);
      w2_scale = DeviceBuffer(w2_elems / (128 * 128) * 4);
      pool_scale = DeviceBuffer(pool_rows * (spec.shape.hidden / 128) * 4);
      act_scale = DeviceBuffer(pool_rows * (spec.shape.intermediate / 64) * 4);
      km::launch_quantize_rows_fp8({a16.get(), arrival.get(), arrival_scale.as<float>(), prob.num_arrivals(),
                                    spec.shape.hidden, 128}, s);
      km::launch_quantize_blocks_fp8({w1_16.get(), w1.get(), w1_scale.as<float>(), e_local,
                                      2 * spec.shape.intermediate, spec.shape.hidden}, s);
      km::launch_quantize_blocks_fp8({w2_16.get(), w2.get(), w2_scale.as<float>(), e_local, spec.shape.hidden,
                                      spec.shape.intermediate}, s);
      sync_checked(s, "fp8 quantization");
    }
  }
  // The kernel's intermediates start as NaN (bf16 0xFFFF, e4m3 0xFF, fp32 0xFFFFFFFF): a launch that reads
  // a pool row, an act row or a scale before it was written this launch shows up as wrong output.
  for (DeviceBuffer* b : {&pool, &act, &pool_scale, &act_scale})
    if (b->bytes() > 0) km::launch_fill_bits16(b->get(), b->bytes() / 2, 0xFFFF, s);
  const DeviceRouting dev_routing(RoutingHostView{prob.pool_arrival, prob.pool_dst_rank, prob.pool_dst_slot,
                                                  prob.pool_weight, prob.row_block_expert, prob.expert_first_block});
  // Unfused twin: the same pool rows into per-rank packed send buffers (rows in pool order).
  std::vector<std::int32_t> packed_row(prob.pool_dst_rank.size(), -1);
  std::vector<std::int32_t> packed_count(spec.num_ranks, 0);
  for (std::size_t i = 0; i < packed_row.size(); ++i)
    if (prob.pool_dst_rank[i] >= 0) packed_row[i] = packed_count[prob.pool_dst_rank[i]]++;
  std::vector<std::int32_t> packed_slot_table = packed_row;
  for (auto& v : packed_slot_table) v = std::max(v, 0);
  const DeviceRouting packed_routing(RoutingHostView{prob.pool_arrival, prob.pool_dst_rank, packed_slot_table,
                                                     prob.pool_weight, prob.row_block_expert, prob.expert_first_block});
  const DeviceBuffer packed_row_dev = runtime::upload(packed_row);

  const std::uint64_t dst_bytes =
      km::combine_bytes_per_rank(static_cast<std::uint32_t>(spec.tokens_per_rank), static_cast<std::uint32_t>(spec.shape.top_k),
                                 static_cast<std::uint32_t>(spec.shape.hidden));
  if (ex != nullptr && ex->window_bytes < dst_bytes)
    throw input_error("exchange", "the Combine windows hold " + std::to_string(ex->window_bytes) + " bytes; this "
                                  "point needs " + std::to_string(dst_bytes));
  Destinations dst = ex != nullptr ? Destinations(*ex, dst_bytes)
                                   : Destinations(target, spec.device, spec.num_ranks, prob.emulated_rank, dst_bytes);
  DeviceBuffer sync(km::SyncLayout{prob.num_row_blocks}.bytes());
  XS_CUDA_CHECK(cudaMemsetAsync(sync.get(), 0, sync.bytes(), s));
  // Unfused: local packed buffers (kernel destinations) and the target-side copies.
  std::vector<DeviceBuffer> packed_local;
  std::vector<std::unique_ptr<runtime::TargetBuffer>> packed_remote;
  for (int rank = 0; rank < spec.num_ranks && want_unfused; ++rank) {
    packed_local.emplace_back(dst_bytes);
    const std::uint64_t bytes = std::max<std::uint64_t>(16, static_cast<std::uint64_t>(packed_count[rank]) * h * 2);
    packed_remote.push_back(rank == prob.emulated_rank ? nullptr
                                                       : std::make_unique<runtime::TargetBuffer>(target, spec.device, bytes));
  }

  km::MegaMoeConfig config;
  config.num_ctas = spec.num_ctas;
  km::MegaMoeArgs base;
  base.hidden = spec.shape.hidden;
  base.intermediate = spec.shape.intermediate;
  base.num_experts = e_local;
  base.top_k = spec.shape.top_k;
  base.tokens_per_rank = spec.tokens_per_rank;
  base.num_ranks = spec.num_ranks;
  base.num_row_blocks = static_cast<int>(prob.num_row_blocks);
  base.num_arrivals = prob.num_arrivals();
  base.block_n = spec.block_n;
  base.precision = fp8 ? km::Precision::kFp8 : km::Precision::kBf16;
  if (fp8) {
    base.arrival_scale = arrival_scale.as<float>();
    base.pool_scale = pool_scale.as<float>();
    base.w1_scale = w1_scale.as<float>();
    base.w2_scale = w2_scale.as<float>();
    base.act_scale = act_scale.as<float>();
  }
  base.arrival = arrival.get();
  base.pool = pool.get();
  base.w1 = w1.get();
  base.w2 = w2.get();
  base.act = act.get();
  base.routing = dev_routing.tables();
  base.sync_words = sync.as<std::uint32_t>();
  base.sync_bytes = sync.bytes();
  dst.fill(base);

  const std::vector<Variant> all_variants = {
      {"expert_wave", {km::ScheduleKind::kExpertWave, r.experts_per_wave, 1}, km::EpilogueMode::kFused},
      {"interleaved", {km::ScheduleKind::kInterleaved, 1, r.lead_rows}, km::EpilogueMode::kFused},
      {"serial", {km::ScheduleKind::kSerial, 1, 1}, km::EpilogueMode::kFused},
      {"expert_wave_cc", {km::ScheduleKind::kExpertWave, r.experts_per_wave, 1}, km::EpilogueMode::kCompletionCoupled},
      {"interleaved_cc", {km::ScheduleKind::kInterleaved, 1, r.lead_rows}, km::EpilogueMode::kCompletionCoupled},
      {"unfused", {km::ScheduleKind::kSerial, 1, 1}, km::EpilogueMode::kFused, true},
  };
  std::vector<Variant> variants;
  for (const auto& name : spec.variants.empty() ? all_names : spec.variants)
    for (const auto& v : all_variants)
      if (v.name == name) variants.push_back(v);
  auto args_of = [&](const Variant& v) {
    km::MegaMoeArgs a = base;
    a.schedule = v.schedule;
    a.mode = v.mode;
    if (v.unfused) {
      a.routing = packed_routing.tables();
      for (int rank = 0; rank < spec.num_ranks; ++rank) a.dst[rank] = packed_local[rank].get();
    }
    return a;
  };
  auto enqueue = [&](const Variant& v, const km::MegaMoeArgs& a, cudaStream_t st) {
    km::launch_megamoe(config, a, st);
    if (!v.unfused) return;
    for (int rank = 0; rank < spec.num_ranks; ++rank)  // the copy-engine Combine of the remote rows
      if (packed_remote[rank] && packed_count[rank] > 0)
        XS_CUDA_CHECK(cudaMemcpyAsync(packed_remote[rank]->device_ptr(), packed_local[rank].get(),
                                      static_cast<std::size_t>(packed_count[rank]) * spec.shape.hidden * 2,
                                      cudaMemcpyDefault, st));
  };

  // ---- Reference and verification ----
  CombineDestinations ref(spec.num_ranks, spec.tokens_per_rank, spec.shape.top_k, spec.shape.hidden);
  CombineDestinations first(spec.num_ranks, spec.tokens_per_rank, spec.shape.top_k, spec.shape.hidden);
  std::optional<CombineDestinations> unpacked;  // the unfused twin's delivered rows, scattered back
  if (want_unfused) unpacked.emplace(spec.num_ranks, spec.tokens_per_rank, spec.shape.top_k, spec.shape.hidden);
  DeviceBuffer slot_mask;
  DeviceBuffer compare_result(sizeof(km::CombineCompareResult));
  if (spec.verify) {
    ref.poison(s);
    km::MoeReferenceArgs ra = km::reference_args_for(base);
    ref.fill_args(ra);
    run_moe_reference(ra, s);
    slot_mask = build_slot_mask(dev_routing, spec.num_ranks, static_cast<std::uint32_t>(prob.slots_per_rank()), 0,
                                -1, s);
  }
  auto check = [&](const std::vector<void*>& test, const CombineDestinations& against, float abs_tol,
                   float rel_tol) {
    km::CombineCompareArgs ca;
    ca.num_ranks = spec.num_ranks;
    ca.hidden = spec.shape.hidden;
    ca.slots_per_rank = static_cast<std::uint32_t>(prob.slots_per_rank());
    for (int rank = 0; rank < spec.num_ranks; ++rank) {
      ca.test_dst[rank] = test[rank];
      ca.ref_dst[rank] = against.ranks[rank].get();
    }
    ca.slot_mask = slot_mask.as<std::uint32_t>();
    ca.abs_tol = abs_tol;
    ca.rel_tol = rel_tol;
    ca.result = compare_result.as<km::CombineCompareResult>();
    km::launch_compare_combine(ca, s);
    sync_checked(s, "compare_combine");
    km::CombineCompareResult out;
    runtime::copy_to_host(&out, compare_result.get(), sizeof out);
    return out;
  };

  bool all_ok = true;
  for (std::size_t vi = 0; vi < variants.size(); ++vi) {
    const Variant& v = variants[vi];
    VariantResult vr;
    vr.name = v.name;
    vr.schedule = km::schedule_kind_name(v.schedule.kind);
    vr.mode = v.unfused ? "unfused" : km::epilogue_mode_name(v.mode);
    vr.lead_rows = v.schedule.kind == km::ScheduleKind::kInterleaved ? v.schedule.lead_rows : 0;
    vr.experts_per_wave = v.schedule.kind == km::ScheduleKind::kExpertWave ? v.schedule.experts_per_wave : 0;
    if (spec.verify) {
      // Across ranks: nobody poisons while another rank's previous (instrumented) launch may still store into
      // its window, and every window is poisoned before any rank stores into it.
      if (ex != nullptr) ex->barrier();
      dst.poison(s);
      if (ex != nullptr) {
        sync_checked(s, "poison the Combine window");
        ex->barrier();
      }
      for (std::size_t rank = 0; rank < packed_remote.size(); ++rank)  // empty when unfused is not run
        if (packed_remote[rank]) km::launch_fill_bits16(packed_remote[rank]->device_ptr(), packed_remote[rank]->bytes() / 2, km::kPoisonBits, s);
      const km::MegaMoeArgs a = args_of(v);
      enqueue(v, a, s);
      sync_checked(s, "megamoe");
      std::uint64_t own_unwritten = 0;
      if (ex != nullptr) {  // every rank's Combine landed (each kernel ends with a system fence)
        ex->barrier();
        own_unwritten = count_poisoned_slots(ex->own_window, dst_bytes, static_cast<std::size_t>(spec.shape.hidden));
      }
      std::vector<void*> test = dst.ptrs;
      if (v.unfused) {  // scatter the delivered packed rows (the own rank's stay in its local buffer)
        unpacked->poison(s);
        km::CombineUnpackArgs ua;
        ua.hidden = spec.shape.hidden;
        ua.num_pool_rows = static_cast<int>(pool_rows);
        ua.num_ranks = spec.num_ranks;
        ua.pool_dst_rank = dev_routing.tables().pool_dst_rank;
        ua.pool_dst_slot = dev_routing.tables().pool_dst_slot;
        ua.pool_packed_row = packed_row_dev.as<std::int32_t>();
        for (int rank = 0; rank < spec.num_ranks; ++rank) {
          ua.packed[rank] = packed_remote[rank] ? packed_remote[rank]->device_ptr() : packed_local[rank].get();
          ua.dst[rank] = unpacked->ranks[rank].get();
        }
        km::launch_combine_unpack(ua, s);
        sync_checked(s, "combine_unpack");
        for (int rank = 0; rank < spec.num_ranks; ++rank) test[rank] = unpacked->ranks[rank].get();
      }
      // bf16: the fp32 reference with the kernel's rounding points. fp8: the same recipe, but an act code can
      // flip one step where fp32 sums in another order land on a rounding boundary: a looser elementwise
      // bound plus DeepGEMM's relative-difference measure over every compared element.
      const km::CombineCompareResult c = fp8 ? check(test, ref, 3e-2f, 6e-2f) : check(test, ref, 1e-2f, 1.6e-2f);
      vr.relative_difference = c.relative_difference;
      vr.wrong_elements = c.wrong_elements;
      vr.unwritten_slots = c.unwritten_slots;
      vr.unexpected_slots = c.unexpected_slots;
      if (vi == 0) {
        for (int rank = 0; rank < spec.num_ranks; ++rank)
          XS_CUDA_CHECK(cudaMemcpyAsync(first.ranks[rank].get(), test[rank], dst_bytes, cudaMemcpyDefault, s));
        sync_checked(s, "copy first variant");
      } else {
        const km::CombineCompareResult b = check(test, first, 0.0f, 0.0f);
        vr.bitwise_differences = b.total_elements - b.bitwise_equal_elements;
      }
      // Across ranks the other ranks write the slots this rank's pairs do not target: no "unexpected" check
      // there; instead every slot of this rank's own window must have been written by some rank.
      if (ex != nullptr) {
        vr.unexpected_slots = 0;
        vr.verification_detail += "; own window: " + std::to_string(own_unwritten) + " slots unwritten";
        ex->barrier();  // nobody poisons for the next variant while a rank still reads the windows
      }
      vr.verified = c.wrong_elements == 0 && c.unwritten_slots == 0 && (ex != nullptr || c.unexpected_slots == 0) &&
                    own_unwritten == 0 && c.multi_writer_slots == 0 && vr.bitwise_differences == 0 &&
                    (!fp8 || c.relative_difference < 1e-3);
      vr.verification_detail = "max abs error " + std::to_string(c.max_abs_error) + ", max rel error " +
                               std::to_string(c.max_rel_error) + ", relative difference " +
                               std::to_string(c.relative_difference) + ", compared " + std::to_string(c.compared_elements);
      all_ok = all_ok && vr.verified;
    }
    if (spec.instrument) {
      DeviceBuffer records(static_cast<std::size_t>(tiles.num_tiles()) * sizeof(km::TileRecord));
      XS_CUDA_CHECK(cudaMemsetAsync(records.get(), 0, records.bytes(), s));
      km::MegaMoeArgs a = args_of(v);
      a.records = records.as<km::TileRecord>();
      a.records_bytes = records.bytes();
      enqueue(v, a, s);
      sync_checked(s, "megamoe (instrumented)");
      vr.tiles = summarize_tiles(runtime::download<km::TileRecord>(records), tiles, info.clock_rate_hz);
    }
    r.variants.push_back(std::move(vr));
  }
  r.verified = spec.verify && all_ok;

  // ---- Timing: graphs of back-to-back launches, rotating round-robin ----
  std::vector<runtime::VariantEnqueue> enqueues;
  std::vector<km::MegaMoeArgs> variant_args;
  for (const auto& v : variants) variant_args.push_back(args_of(v));
  for (std::size_t vi = 0; vi < variants.size(); ++vi)
    enqueues.push_back([&, vi](cudaStream_t st) { enqueue(variants[vi], variant_args[vi], st); });
  const auto seconds = runtime::time_variants(enqueues, spec.launches_per_graph, spec.warmup_rounds, spec.repetitions,
                                              s, [](cudaStream_t st, const char* what) { sync_checked(st, what); },
                                              ex != nullptr ? ex->barrier : runtime::ReplayBarrier());
  for (std::size_t vi = 0; vi < variants.size(); ++vi) {
    r.variants[vi].time = summarize(seconds[vi]);
    r.variants[vi].tflops = r.variants[vi].time.median_s > 0 ? r.flops / r.variants[vi].time.median_s * 1e-12 : 0;
  }
  auto rounds = [&](const char* name) -> const std::vector<double>* {
    for (std::size_t vi = 0; vi < variants.size(); ++vi)
      if (variants[vi].name == name) return &seconds[vi];
    return nullptr;
  };
  const auto* inter_rounds = rounds("interleaved");
  if (inter_rounds && rounds("expert_wave"))
    r.speedup_interleaved_vs_wave = ratio(*rounds("expert_wave"), *inter_rounds);
  if (inter_rounds && rounds("unfused")) r.speedup_interleaved_vs_unfused = ratio(*rounds("unfused"), *inter_rounds);
  if (inter_rounds && rounds("interleaved_cc"))
    r.cc_vs_fused_interleaved = ratio(*rounds("interleaved_cc"), *inter_rounds);
  if (spec.verify && !all_ok) {
    r.status = "failed";
    r.reason = "verification failed (see each variant)";
  }
  return r;
}

std::shared_ptr<const MoeExchange> moe_exchange_over(const runtime::RankWindows& windows, bench::RankComm& comm) {
  auto ex = std::make_shared<MoeExchange>(windows.exchange(comm));
  ex->description = "the Combine into " + ex->description;
  return ex;
}

}  // namespace xs::moe
