// xstage moe layer (CUDA): the megamoe point runner (see moe_runner.hpp) on the shared point harness
// (bench/point_harness.hpp): validation, the device state (moe_point_device), each plan's poison, launch and
// Combine check, the instrumented launches, the timed plans and the paired ratios.
#include "xs/moe/run/moe_runner.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "xs/bench/point_harness.hpp"
#include "xs/bench/rank_comm.hpp"
#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"
#include "xs/model/burst_gap.hpp"
#include "xs/moe/run/moe_point_device.hpp"
#include "xs/moe/run/moe_variants.hpp"
#include "xs/moe/run/tile_stats.hpp"
#include "xs/moe/reference/verification_gate.hpp"
#include "xs/kernels/common/cuda_check.hpp"
#include "xs/backends/cuda/devices.hpp"
#include "xs/backends/nccl/rank_windows.hpp"
#include "xs/backends/cuda/stream.hpp"
#include "xs/backends/gpu/targets.hpp"
#include "xs/backends/gpu/variant_timer.hpp"

namespace xs::moe {
namespace {

namespace km = xs::kernels::moe;
using runtime::DeviceBuffer;

// Same-round ratios num / den (rounds with den > 0), summarized as every time is (common/stats: no rounds, zeros).
Summary ratio(const std::vector<double>& num, const std::vector<double>& den) {
  std::vector<double> r;
  for (std::size_t i = 0; i < num.size() && i < den.size(); ++i)
    if (den[i] > 0) r.push_back(num[i] / den[i]);
  return summarize(r);
}

// The plain serial plan a phase variant's verification primes the pool and act with.
MoeVariantPlan serial_plan() {
  MoeVariantPlan p;
  p.name = p.family = p.schedule = "serial";
  return p;
}

// The point's description from its problem (host only): counts, lead rows, wave widths; returns the plans.
std::vector<MoeVariantPlan> describe_point(const MoePointSpec& spec, const Routing& routing, const MoeProblem& prob,
                                           MoePointResult& r) {
  if (prob.hidden != spec.shape.hidden || prob.intermediate != spec.shape.intermediate ||
      prob.num_ranks != spec.num_ranks || prob.tokens_per_rank != spec.tokens_per_rank || prob.top_k != spec.shape.top_k)
    throw input_error("problem", "the given problem was not built from this point's spec (h, I, P, T or top-k differ)");
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
  r.num_ctas = spec.num_ctas;
  r.lead_rows = spec.lead_rows > 0 ? spec.lead_rows
                                   : model::knee_lead_rows(model::lead_knee_rows(spec.block_n, spec.num_ctas, inter));
  r.experts_per_wave = expert_wave_widths(spec.experts_per_wave, prob.num_local_experts);
  return plan_variants(spec.variants, r.experts_per_wave, r.lead_rows, spec.fault_skip_l2_wait_variant);
}

// The input checks that need no GPU (exit 2 even where none exists).
void validate_point(const MoePointSpec& spec, const MoeProblem& prob) {
  validate_tile_and_precision(spec.shape.hidden, spec.shape.intermediate, spec.block_n, spec.precision);
  check_variant_families(spec.variants);
  const MoeExchange* ex = spec.exchange.get();  // several ranks: the Combine into every rank's window
  if (ex == nullptr) return;
  for (const char* f : {"serial_then_copy", "unfused_overlapped", "phase_l1", "phase_l2"})
    if (spec.variants.empty() || std::find(spec.variants.begin(), spec.variants.end(), f) != spec.variants.end())
      throw input_error("--variants", std::string("the unfused variant is not built across ranks (") + f +
                                          ": its Combine would need ncclSend/ncclRecv, or it reads another "
                                          "launch's intermediates): name the fused variants, e.g. "
                                          "expert_wave,interleaved");
  if (ex->peer_windows.size() != static_cast<std::size_t>(spec.num_ranks) || !ex->barrier ||
      ex->own_window == nullptr || ex->world_rank != prob.emulated_rank)
    throw input_error("exchange", "a Combine across ranks needs one window per rank (P = " +
                                      std::to_string(spec.num_ranks) + "), a barrier, and this rank playing the "
                                      "routing's emulated rank");
  for (void* w : ex->peer_windows)
    if (w == nullptr) throw input_error("exchange", "a rank's window is not load/store reachable from this rank");
}

// The point's device state; members in the order the runner made them (destroyed in reverse).
struct MoePointRun {
  runtime::DeviceGuard guard;
  runtime::Stream stream;
  MoePointDevice dev;
  CombineTolerance tol;
  bool have_first = false;  // the bitwise reference: the first variant that passed on its own
  MoePointRun(const MoePointSpec& spec, const MoeProblem& prob, std::uint64_t input_seed)
      : guard(spec.device), dev(spec, prob, input_seed, stream.get()) {}
};

// Judges variant `v`'s delivered Combine against the reference and, bitwise, the first variant that passed.
bool check_variant(MoePointRun& run, const MoeExchange* ex, const MoeVariantPlan& v, VariantResult& vr,
                   const MoePointResult& r) {
  const cudaStream_t s = run.stream.get();
  const CombineTolerance& tol = run.tol;
  std::uint64_t own_unwritten = 0;
  if (ex != nullptr) own_unwritten = run.dev.own_window_unwritten();  // every rank's Combine landed (the harness met)
  const std::vector<void*> test = run.dev.delivered(v, s);
  const km::CombineCompareResult c =
      run.dev.compare(test, false, static_cast<float>(tol.abs_tol), static_cast<float>(tol.rel_tol), s);
  vr.relative_difference = c.relative_difference;
  vr.wrong_elements = c.wrong_elements;
  vr.unwritten_slots = c.unwritten_slots;
  vr.unexpected_slots = ex != nullptr ? 0 : c.unexpected_slots;
  vr.abs_tol = tol.abs_tol;
  vr.rel_tol = tol.rel_tol;
  vr.max_relative_difference = tol.max_relative_difference;
  CombineCounts counts;
  counts.compared_elements = c.compared_elements;
  counts.wrong_elements = c.wrong_elements;
  counts.unwritten_slots = c.unwritten_slots;
  counts.unexpected_slots = c.unexpected_slots;
  counts.multi_writer_slots = c.multi_writer_slots;
  counts.relative_difference = c.relative_difference;
  // Across ranks the other ranks write the slots this rank's pairs do not target: no "unexpected" check
  // there; instead every slot of this rank's own window must have been written by some rank.
  const CombineVerdict verdict = judge_combine(counts, tol, ex == nullptr);
  if (!run.have_first) {
    if (verdict.passed) {
      run.dev.keep_as_first(test, s);
      run.have_first = true;
    }
  } else {
    const km::CombineCompareResult b = run.dev.compare(test, true, 0.0f, 0.0f, s);
    vr.bitwise_differences = b.total_elements - b.bitwise_equal_elements;
  }
  vr.verified = verdict.passed && own_unwritten == 0 && vr.bitwise_differences == 0;
  vr.verification_detail = "max abs error " + std::to_string(c.max_abs_error) + ", max rel error " +
                           std::to_string(c.max_rel_error) + ", relative difference " +
                           std::to_string(c.relative_difference) + ", compared " +
                           std::to_string(c.compared_elements) + (verdict.passed ? "" : "; " + verdict.reason);
  if (ex != nullptr) vr.verification_detail += "; own window: " + std::to_string(own_unwritten) + " slots unwritten";
  if (vr.bitwise_differences > 0)
    vr.verification_detail += "; " + std::to_string(vr.bitwise_differences) + " elements differ bitwise from " +
                              r.verification_order.front();
  return vr.verified;
}

// Each plan's verified launch: intermediates and destinations poisoned just before it (verification_gate.hpp).
bench::VerifiedVariant verified_variant(MoePointRun& run, const MoeExchange* ex, const MoeVariantPlan& v,
                                        VariantResult& vr, const MoePointResult& r) {
  bench::VerifiedVariant out;
  out.name = v.name;
  out.exchanged = true;  // across ranks its Combine stores into every rank's window
  out.poison = [&run, ex, &v] {
    const cudaStream_t s = run.stream.get();
    run.dev.poison_intermediates(s);
    if (v.phases != "all") {  // a phase launch reads the pool (and act) of a full launch
      run.dev.enqueue(serial_plan(), s);
      if (v.phases == "linear1") run.dev.poison_act(s);
    }
    run.dev.poison_destinations(s);
    if (ex != nullptr) sync_checked(s, "poison the Combine window");
  };
  out.launch = [&run, &v] {
    const cudaStream_t s = run.stream.get();
    run.dev.enqueue(v, s);
    if (v.phases == "linear1") {  // its act is checked through a Linear-2 phase launch
      MoeVariantPlan l2 = serial_plan();
      l2.phases = "linear2";
      run.dev.enqueue(l2, s);
    }
    sync_checked(s, "megamoe");
  };
  out.check = [&run, ex, &v, &vr, &r] { return check_variant(run, ex, v, vr, r); };
  return out;
}

// Paired times, TFLOP/s and the same-round ratios against the interleaved variant.
void summarize_timing(const std::vector<MoeVariantPlan>& plans, const std::vector<std::vector<double>>& seconds,
                      MoePointResult& r) {
  std::vector<double> medians;
  for (std::size_t vi = 0; vi < plans.size(); ++vi) {
    VariantResult& vr = r.variants[vi];
    vr.time = summarize(seconds[vi]);
    // Useful flops of what the launch computes: both GEMMs, or one phase (L1 2 pairs h 2I, L2 2 pairs I h).
    const double flops = vr.phases == "linear1" ? r.flops * 2.0 / 3.0 : vr.phases == "linear2" ? r.flops / 3.0 : r.flops;
    vr.tflops = vr.time.median > 0 ? flops / vr.time.median * 1e-12 : 0;
    if (vr.phases == "linear1") r.phase_l1_tflops = vr.tflops;
    if (vr.phases == "linear2") r.phase_l2_tflops = vr.tflops;
    medians.push_back(vr.time.median);
  }
  const int best = best_wave_plan(plans, medians);
  if (best >= 0) {
    r.best_wave_variant = plans[best].name;
    r.best_experts_per_wave = plans[best].experts_per_wave;
  }
  auto rounds = [&](const std::string& name) -> const std::vector<double>* {
    for (std::size_t vi = 0; vi < plans.size(); ++vi)
      if (plans[vi].name == name) return &seconds[vi];
    return nullptr;
  };
  if (const auto* inter_rounds = rounds("interleaved")) {
    if (best >= 0) r.speedup_interleaved_vs_wave = ratio(seconds[best], *inter_rounds);
    for (std::size_t vi = 0; vi < plans.size(); ++vi)
      if (plans[vi].family == "expert_wave" && plans[vi].name != "expert_wave")
        r.speedup_interleaved_vs_wave_width[plans[vi].name] = ratio(seconds[vi], *inter_rounds);
    if (const auto* x = rounds("serial_then_copy")) r.speedup_interleaved_vs_serial_then_copy = ratio(*x, *inter_rounds);
    if (const auto* x = rounds("unfused_overlapped"))
      r.speedup_interleaved_vs_unfused_overlapped = ratio(*x, *inter_rounds);
    if (const auto* x = rounds("interleaved_cc")) r.cc_vs_fused_interleaved = ratio(*x, *inter_rounds);
  }
}

VariantResult variant_result_of(const MoeVariantPlan& v) {
  VariantResult vr;
  vr.name = v.name;
  vr.family = v.family;
  vr.schedule = v.schedule;
  vr.mode = v.pipeline != "fused" ? v.pipeline : v.completion_coupled ? "completion_coupled" : "fused";
  vr.phases = v.phases;
  vr.lead_rows = v.lead_rows;
  vr.experts_per_wave = v.experts_per_wave;
  return vr;
}

}  // namespace

MoePointResult run_moe_point(const MoePointSpec& spec) {
  const Routing routing = generate_routing(routing_params_of(spec));
  return run_moe_point(spec, routing, build_problem(routing, spec.shape.hidden, spec.shape.intermediate));
}

MoePointResult run_moe_point(const MoePointSpec& spec, const Routing& routing, const MoeProblem& prob) {
  MoePointResult r;
  const runtime::Target target = runtime::parse_target(spec.target);
  validate_point(spec, prob);
  const MoeExchange* ex = spec.exchange.get();  // several ranks: the Combine into every rank's window
  runtime::DeviceInfo info;
  std::vector<MoeVariantPlan> plans;
  std::optional<MoePointRun> run;
  auto unavailable = [&]() -> std::optional<std::string> {
    if (auto why = runtime::sm90_point_unavailable_reason(ex != nullptr ? runtime::parse_target("local") : target,
                                                          spec.device, &info))
      return why;
    if (spec.num_ctas < 1 || spec.num_ctas > info.sm_count)
      throw input_error("K_SM", "K_SM = " + std::to_string(spec.num_ctas) + " must be in [1, " +
                                    std::to_string(info.sm_count) + "] on this device");
    plans = describe_point(spec, routing, prob, r);  // a point without rows is skipped with its description
    if (prob.num_row_blocks == 0) return "no (token, top-k) pair is routed to the emulated rank";
    return std::nullopt;
  };
  std::vector<runtime::VariantEnqueue> enqueues;
  auto prepare = [&] {
    r.input_seed = spec.input_seed != 0 ? spec.input_seed : runtime::fresh_seed();
    MoePointRun& p = run.emplace(spec, prob, r.input_seed);
    for (const auto& v : plans) r.variants.push_back(variant_result_of(v));
    bench::PointPlan plan;
    plan.verify = spec.verify;
    if (spec.verify) {  // the fp32 reference once, then each plan in a rotated order
      p.dev.run_reference(p.stream.get());
      r.reference_rms = p.dev.reference_rms();
      p.tol = combine_tolerance(spec.precision, r.reference_rms);
      plan.verify_order = verification_order(plans.size(), static_cast<std::size_t>(std::max(0, spec.verify_rotation)));
      for (std::size_t pos = 0; pos < plan.verify_order.size(); ++pos) {
        r.variants[plan.verify_order[pos]].verify_position = static_cast<int>(pos);
        r.verification_order.push_back(plans[plan.verify_order[pos]].name);
      }
    }
    for (std::size_t vi = 0; vi < plans.size(); ++vi)
      plan.verified.push_back(verified_variant(p, ex, plans[vi], r.variants[vi], r));
    // Across ranks: nobody poisons while another rank's previous launch may still store into its window,
    // and every window is poisoned before any rank stores into it.
    plan.exchange = {ex != nullptr ? ex->barrier : runtime::ReplayBarrier(), true};
    // Instrumented launch per variant (one launch: fused and serial_then_copy).
    if (spec.instrument)
      plan.instrument = [&] {
        for (std::size_t vi = 0; vi < plans.size(); ++vi) {
          const MoeVariantPlan& v = plans[vi];
          if (v.pipeline == "unfused_overlapped" || v.phases != "all") continue;
          DeviceBuffer records(static_cast<std::size_t>(p.dev.tiles().num_tiles()) * sizeof(km::TileRecord));
          XS_CUDA_CHECK(cudaMemsetAsync(records.get(), 0, records.bytes(), p.stream.get()));
          p.dev.enqueue(v, p.stream.get(), records.as<km::TileRecord>(), records.bytes());
          sync_checked(p.stream.get(), "megamoe (instrumented)");
          r.variants[vi].tiles =
              summarize_tiles(runtime::download<km::TileRecord>(records), p.dev.tiles(), info.clock_rate_hz);
        }
      };
    // Timing: graphs of back-to-back launches, rotating round-robin.
    for (std::size_t vi = 0; vi < plans.size(); ++vi)
      enqueues.push_back([&p, &plans, vi](cudaStream_t st) { p.dev.enqueue(plans[vi], st); });
    plan.timing = {plans.size(), spec.warmup_rounds, spec.repetitions, [&] {
                     return runtime::graph_replay(enqueues, spec.launches_per_graph, p.stream.get(),
                                                  [](cudaStream_t st, const char* what) { sync_checked(st, what); });
                   }};
    return plan;
  };
  const bench::PointOutcome out = bench::run_point_harness(unavailable, prepare);
  if (!out.skip_reason.empty()) {
    r.status = "skipped";
    r.reason = out.skip_reason;
    return r;
  }
  r.verified = out.verified;
  summarize_timing(plans, out.rounds, r);
  if (out.verification_failed) {
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
