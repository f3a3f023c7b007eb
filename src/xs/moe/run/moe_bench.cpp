// xstage moe layer (CUDA): the megamoe sweep (see moe_bench.hpp): a thin adapter over the application-suite
// point loop (bench/app_bench.hpp), which owns the journal, --resume, signals and the result file. Each
// point stores every variant's per-launch times, same-round ratios, per-tile distributions, verification
// counts and, with a calibration file, the Burst-Gap prediction (eqs. 10, 13-16) beside the measurement.
#include "xs/moe/run/moe_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "xs/backends/cuda/devices.hpp"
#include "xs/backends/gpu/gpu_backend.hpp"
#include "xs/backends/gpu/target_cache.hpp"
#include "xs/backends/gpu/topology_probe.hpp"
#include "xs/backends/nccl/rank_windows.hpp"
#include "xs/bench/app_bench.hpp"
#include "xs/bench/rank_agree.hpp"
#include "xs/bench/runner.hpp"
#include "xs/bench/topology_record.hpp"
#include "xs/common/error.hpp"
#include "xs/common/program_name.hpp"
#include "xs/fit/calibration_file.hpp"
#include "xs/model/platform_model.hpp"
#include "xs/moe/advisor/advisor_platform.hpp"
#include "xs/moe/advisor/moe_advisor.hpp"
#include "xs/moe/io/advice_json.hpp"
#include "xs/moe/model/moe_model.hpp"
#include "xs/moe/point/moe_point_json.hpp"
#include "xs/moe/run/moe_runner.hpp"
#include "xs/moe/run/point_clocks.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/journal.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/result_file.hpp"

namespace xs::moe {
namespace {
using nlohmann::json;

struct Calibration {
  model::PlatformModel model;
  std::string target;  // the file's config.target; empty when it names none
};

// A variant's time as points[].variants keeps it: megamoe points have always recorded min and max as 0, and still do.
Summary as_written(Summary t) {
  t.min = 0;
  t.max = 0;
  return t;
}

json tiles_json(const TileDistributions& d) {
  return {{"num_tiles", d.num_tiles}, {"sm_clock_hz", d.sm_clock_hz},
          {"l1_mainloop_median_s", d.l1_mainloop_median_s}, {"l2_mainloop_median_s", d.l2_mainloop_median_s},
          {"l2_store_span_median_s", d.l2_store_span_median_s}, {"l2_store_span_p90_s", d.l2_store_span_p90_s},
          {"l1_store_span_median_s", d.l1_store_span_median_s},
          {"staging_wait_median_s", d.staging_wait_median_s}, {"staging_wait_p90_s", d.staging_wait_p90_s},
          {"staging_wait_per_cta_s", d.staging_wait_total_s}, {"l2_spin_median_s", d.l2_spin_median_s},
          {"l2_spin_p90_s", d.l2_spin_p90_s}, {"l2_spin_per_cta_s", d.l2_spin_total_s},
          {"l1_first_wait_per_cta_s", d.l1_first_wait_total_s}, {"l2_first_wait_per_cta_s", d.l2_first_wait_total_s},
          {"queue_median_s", d.queue_median_s}, {"eq15_predicted_stall_per_cta_s", d.eq15_predicted_stall_s},
          {"eq15_measured_wait_per_cta_s", d.eq15_measured_wait_s}, {"kernel_span_s", d.kernel_span_s},
          {"entry_to_first_start_median_s", d.entry_to_first_start_median_s},
          {"entry_to_first_start_max_s", d.entry_to_first_start_max_s},
          {"last_store_to_exit_median_s", d.last_store_to_exit_median_s},
          {"last_store_to_exit_max_s", d.last_store_to_exit_max_s}, {"cta_busy_median_s", d.cta_busy_median_s},
          {"timeline_cta0", d.timeline}};
}

// The per-tile model's keys of a point's prediction (eqs. 10, 13-16), shared by both kinds of prediction.
json tile_prediction_json(const MoeModelInputs& in, const MoePrediction& p, bool tiss0_extrapolated) {
  return {{"tensor_flops_per_s", in.tensor_flops_per_s}, {"drain_rate_bps", in.drain_rate_bps},
          {"tiss0_s", in.tiss0_s}, {"tiss0_extrapolated", tiss0_extrapolated},
          {"capacity_bytes", in.capacity_bytes ? json(*in.capacity_bytes) : json(nullptr)},
          {"l1_mainloop_s", p.l1_mainloop_s}, {"l2_mainloop_s", p.l2_mainloop_s}, {"burst_bytes", p.burst_bytes},
          {"drain_time_s", p.drain_time_s}, {"wave_stall_per_l2_tile_s", p.wave_stall_per_l2_tile_s},
          {"interleaved_gap_s", p.interleaved_gap_s},
          {"interleaved_stall_per_l2_tile_s", p.interleaved_stall_per_l2_tile_s},
          {"eq14_rate_bound_ok", p.rate_bound_ok}, {"eq10_capacity", bound_verdict_name(p.capacity_bound)},
          {"interleaving_sufficient", bound_verdict_name(p.interleaving_sufficient)},
          {"D_knee", p.lead_knee_rows}};
}

json not_applicable(const std::string& calibration_target, const MoePointSpec& s) {
  return json{{"status", "not applicable: the calibration is for target '" + calibration_target + "', the point's is '" +
                             s.target + "'"}};
}

// Made before the point runs, from the calibration and a given throughput F only (nothing this point
// measures): the advisor on the point's own routing, its recommendation and the per-tile model.
json before_run_prediction(const MoePointSpec& s, const MoeProblem& problem, const Calibration& cal,
                           double tensor_flops_per_s) {
  if (!cal.target.empty() && cal.target != s.target) return not_applicable(cal.target, s);
  const AdvisorConfig c = advisor_config_of(s);
  const AdvisorPlatform platform = advisor_platform_from(cal.model, cal.target, s.num_ctas, s.block_n);
  AdvisorThroughput t;
  t.tensor_flops_per_s = tensor_flops_per_s;
  const Advice a = advise(c, platform, t, problem);
  MoeModelInputs in;
  in.tensor_flops_per_s = tensor_flops_per_s;
  in.drain_rate_bps = platform.drain_rate_bps;
  in.tiss0_s = platform.tiss0_s;
  if (platform.capacity_bytes && !platform.capacity_is_lower_bound) in.capacity_bytes = platform.capacity_bytes;
  json out = tile_prediction_json(in, a.tile, platform.tiss0_extrapolated);
  out["made"] = "before_run";
  out["throughput_from"] = "--tensor-tflops";
  out["advisor"] = advice_json(a);
  return out;
}

// Made after the point ran, from its measured expert-wave Linear-1 mainloop (in-sample: labelled so), when
// no throughput was given.
json after_run_prediction(const MoePointSpec& s, const MoePointResult& r, const Calibration& cal) {
  if (!cal.target.empty() && cal.target != s.target) return not_applicable(cal.target, s);
  MoeModelInputs in;
  in.hidden = s.shape.hidden;
  in.intermediate = s.shape.intermediate;
  in.num_ranks = s.num_ranks;
  in.num_sms = s.num_ctas;
  in.block_n = s.block_n;
  const VariantResult* wave_variant = nullptr;  // the expert-wave baseline (the fastest width)
  for (const auto& v : r.variants)
    if (v.name == r.best_wave_variant) wave_variant = &v;
  if (wave_variant == nullptr || wave_variant->tiles.l1_mainloop_median_s <= 0)
    return json{{"status", "no throughput: pass --tensor-tflops, or run expert_wave instrumented"}};
  // T_L1 = 2 b_m b_n h / F_SM  =>  F = 132 F_SM (the model spreads F over the device's SMs). From Linear-1:
  // on host the Linear-2 mainloops are slowed by the draining Combine stores, which is the effect predicted.
  in.tensor_flops_per_s =
      2.0 * 128 * s.block_n * s.shape.hidden / wave_variant->tiles.l1_mainloop_median_s * in.device_sms;
  const AdvisorPlatform platform = advisor_platform_from(cal.model, cal.target, s.num_ctas, s.block_n);
  in.drain_rate_bps = platform.drain_rate_bps;
  in.tiss0_s = platform.tiss0_s;
  if (platform.capacity_bytes && !platform.capacity_is_lower_bound) in.capacity_bytes = platform.capacity_bytes;
  json out = tile_prediction_json(in, predict_megamoe(in), platform.tiss0_extrapolated);
  out["made"] = "after_run";
  out["throughput_from"] = "measured expert_wave L1 mainloop median (in-sample)";
  return out;
}

report::AppPoint to_app_point(const MoePointSpec& s, const MoePointResult& r, json prediction) {
  report::AppPoint p;
  p.id = "megamoe." + s.target;
  p.suite = "megamoe";
  p.axes = json(s);  // moe/point/moe_point_json.hpp
  p.status = r.status;
  p.reason = r.reason;
  // With several expert-wave widths, "expert_wave" is the fastest of them (the tuned baseline), stored beside
  // the width's own entry; with one width the variant is expert_wave itself.
  const bool wave_alias = !r.best_wave_variant.empty() && r.best_wave_variant != "expert_wave";
  for (const auto& v : r.variants)
    if (!v.time.samples.empty()) {
      p.variants[v.name] = as_written(v.time);
      if (wave_alias && v.name == r.best_wave_variant) p.variants["expert_wave"] = as_written(v.time);
    }
  p.verification.checked = s.verify && r.status != "skipped";
  p.verification.passed = r.verified;
  json per_variant = json::object();
  std::string detail;
  for (const auto& v : r.variants) {
    per_variant[v.name] = {{"verified", v.verified}, {"wrong_elements", v.wrong_elements},
                           {"unwritten_slots", v.unwritten_slots}, {"unexpected_slots", v.unexpected_slots},
                           {"bitwise_differences_vs_first", v.bitwise_differences},
                           {"relative_difference", v.relative_difference}, {"abs_tol", v.abs_tol},
                           {"rel_tol", v.rel_tol}, {"max_relative_difference", v.max_relative_difference},
                           {"verify_position", v.verify_position}, {"detail", v.verification_detail}};
    if (!v.verified && detail.empty()) detail = v.name + ": " + v.verification_detail;
  }
  p.verification.detail = detail;
  p.verification.values = {{"input_seed", r.input_seed}, {"reference_rms", r.reference_rms},
                           {"order", r.verification_order},
                           {"rule", "per variant, on intermediates and destinations poisoned just before it: "
                                    "|t - r| <= abs_tol + rel_tol |r| elementwise (abs_tol scaled to the reference "
                                    "RMS) and relative difference <= max_relative_difference "
                                    "(src/xs/moe/reference/verification_gate.hpp); bitwise equal to the first that passed"},
                           {"variants", per_variant}};
  p.prediction = std::move(prediction);
  json variants = json::object();
  // Per-phase rate from the mainloop medians: one tile's flops over its mainloop, times the K_SM CTAs.
  auto phase_tflops = [&](double k_extent, double mainloop_s) {
    return mainloop_s > 0 ? 2.0 * 128 * s.block_n * k_extent / mainloop_s * s.num_ctas * 1e-12 : 0.0;
  };
  for (const auto& v : r.variants) {
    variants[v.name] = {{"family", v.family}, {"schedule", v.schedule}, {"mode", v.mode}, {"phases", v.phases},
                        {"D", v.lead_rows}, {"experts_per_wave", v.experts_per_wave}, {"tflops", v.tflops},
                        {"l1_mainloop_tflops", phase_tflops(s.shape.hidden, v.tiles.l1_mainloop_median_s)},
                        {"l2_mainloop_tflops", phase_tflops(s.shape.intermediate, v.tiles.l2_mainloop_median_s)},
                        {"tiles", tiles_json(v.tiles)}};
    if (wave_alias && v.name == r.best_wave_variant) {
      variants["expert_wave"] = variants[v.name];
      variants["expert_wave"]["selected_from"] = r.experts_per_wave;
      variants["expert_wave"]["variant"] = v.name;
    }
  }
  auto summary = [](const Summary& t) { return json{{"median", t.median}, {"p10", t.p10}, {"p90", t.p90}}; };
  json per_width = json::object();
  for (const auto& [name, t] : r.speedup_interleaved_vs_wave_width) per_width[name] = summary(t);
  p.extra = {{"emulated_rank", r.emulated_rank}, {"received_pairs", r.received_pairs}, {"remote_pairs", r.remote_pairs},
             {"num_row_blocks", r.num_row_blocks}, {"num_arrivals", r.num_arrivals},
             {"load_imbalance", r.load_imbalance}, {"pairs_per_local_expert", r.pairs_per_local_expert},
             {"remote_bytes", r.remote_bytes}, {"flops", r.flops},
             {"K_SM", r.num_ctas}, {"D", r.lead_rows}, {"experts_per_wave", r.experts_per_wave},
             {"expert_wave_baseline", {{"variant", r.best_wave_variant}, {"experts_per_wave", r.best_experts_per_wave},
                                       {"rule", "the fastest swept width by median, on the rounds it is scored on"}}},
             {"overlap_waves", s.overlap_waves},
             {"speedup_interleaved_vs_wave", summary(r.speedup_interleaved_vs_wave)},
             {"speedup_interleaved_vs_wave_width", per_width},
             {"speedup_interleaved_vs_serial_then_copy", summary(r.speedup_interleaved_vs_serial_then_copy)},
             {"speedup_interleaved_vs_unfused_overlapped", summary(r.speedup_interleaved_vs_unfused_overlapped)},
             {"cc_over_fused_interleaved", summary(r.cc_vs_fused_interleaved)},
             {"phase_tflops", {{"linear1", r.phase_l1_tflops}, {"linear2", r.phase_l2_tflops},
                               {"measured", "phase_l1 / phase_l2 variants: one whole GEMM phase per launch (serial, "
                                            "no Dispatch, no waits), useful flops over the median"}}},
             {"variants", variants}};
  return p;
}

void print_table(const std::vector<report::AppPoint>& points) {
  fmt::print("{:<14} {:>6} {:>5} {:<6} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {}\n", "shape", "T", "K_SM", "target",
             "wave_us", "inter_us", "ovlp_us", "cc_us", "speedup", "TFLOPS", "verified");
  for (const auto& p : points) {
    if (p.status == "skipped") {
      fmt::print("{:<14} skipped: {}\n", p.axes.value("shape", "?"), p.reason);
      continue;
    }
    auto us = [&](const char* v) { return p.variants.count(v) ? p.variants.at(v).median * 1e6 : 0.0; };
    const double tflops = p.extra["variants"].contains("interleaved") ? p.extra["variants"]["interleaved"].value("tflops", 0.0) : 0.0;
    fmt::print("{:<14} {:>6} {:>5} {:<6} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>8.3f} {:>8.1f} {}\n",
               p.axes.value("shape", "?"), p.axes.value("T", 0), p.axes.value("K_SM", 0), p.axes.value("target", "?"),
               us("expert_wave"), us("interleaved"), us("unfused_overlapped"), us("interleaved_cc"),
               p.extra["speedup_interleaved_vs_wave"].value("median", 0.0), tflops,
               p.verification.passed ? "yes" : "NO");
  }
}

// F for a precision from --tensor-tflops ("all" or the precision's own entry), FLOP/s; 0 when not given.
double tensor_flops_for(const MoeBenchOptions& o, const std::string& precision) {
  if (auto it = o.tensor_tflops.find(precision); it != o.tensor_tflops.end()) return it->second * 1e12;
  if (auto it = o.tensor_tflops.find("all"); it != o.tensor_tflops.end()) return it->second * 1e12;
  return 0;
}

bool is_nccl(const std::string& t) { return t.rfind("nccl:", 0) == 0; }

// Refuses a remote target without peer access; returns meta.topology when a point's target is remote, else null.
json check_topology(const MoeBenchOptions& o, bool several, int device) {
  json topology;
  // Topology check (issue 14): megamoe's peer:N / nccl:N put every other rank's Combine rows on GPU N.
  // (Several ranks: an nccl target is the Combine across the ranks' windows, checked by NCCL itself.)
  std::vector<bench::GpuPair> pairs;
  for (const auto& s : o.points)
    if (!(several && is_nccl(s.target)))
      for (const auto& p : bench::pairs_for_point(s.target, s.device, 0))
        if (std::find(pairs.begin(), pairs.end(), p) == pairs.end()) pairs.push_back(p);
  const bool remote = std::any_of(o.points.begin(), o.points.end(),
                                  [](const MoePointSpec& s) { return bench::remote_target_of(s.target).has_value(); });
  if (remote) {
    const auto links = runtime::query_peer_links(pairs);
    for (const auto& s : o.points)
      if (!(several && is_nccl(s.target)))
        bench::check_peer_access(s.target, bench::pairs_for_point(s.target, s.device, 0), links,
                                 runtime::count_devices());
    std::vector<int> gpus = bench::gpus_of(pairs);
    if (gpus.empty()) gpus = {device};  // nccl:<device>: a one-rank communicator
    topology = runtime::measure_topology_record(gpus, pairs, links);
  }
  return topology;
}

// The window of the largest nccl point: its Combine slots (T top_k hidden bf16).
std::size_t nccl_window_bytes(const MoeBenchOptions& o) {
  std::size_t bytes = 0;
  for (const auto& s : o.points)
    if (is_nccl(s.target))
      bytes = std::max(bytes, std::size_t{2} * static_cast<std::size_t>(s.tokens_per_rank) *
                                  static_cast<std::size_t>(s.shape.top_k) * static_cast<std::size_t>(s.shape.hidden));
  return bytes;
}

// --tensor-tflops as a JSON object: precision -> TFLOP/s.
json tensor_tflops_json(const MoeBenchOptions& o) {
  json tflops = json::object();
  for (const auto& [precision, value] : o.tensor_tflops) tflops[precision] = value;
  return tflops;
}

// The point loop's plan: one point per spec, the run's identity and output (describe_rank: the caller's).
bench::AppBenchPlan make_plan(const MoeBenchOptions& o, const Backend& backend, const json& tflops) {
  bench::AppBenchPlan plan;
  plan.suite = "megamoe";
  for (const auto& s : o.points)
    plan.points.push_back({"megamoe." + s.target, s.target, json(s),
                           fmt::format("{} {} {} T={} K_SM={} D={} target={}", s.shape.name, s.precision, s.routing,
                                       s.tokens_per_rank, s.num_ctas, s.lead_rows, s.target)});
  plan.run_identity = {{"model", o.model_path}, {"tensor_tflops", tflops}};
  plan.identity = bench::journal_header_for(backend, {});
  plan.output_path = o.out_path;
  plan.resume = o.resume;
  plan.resume_any_build = o.resume_any_build;
  plan.progress = o.progress;
  return plan;
}

// Checks an ok point's SM clocks and re-runs a throttled one (into r) up to --max-clock-reruns times (none
// across ranks); returns the point's "clocks" record with its earlier attempts (null when the point was not ok).
json check_clocks_and_rerun(MoePointResult& r, const MoePointSpec& spec, const Routing& routing,
                            const MoeProblem& problem, const MoeBenchOptions& o, double peak_clock_hz, bool several,
                            const std::string& label) {
  json clocks, attempts = json::array();
  for (int attempt = 0; r.status == "ok"; ++attempt) {
    const PointClocks check = check_point_clocks(r, peak_clock_hz, o.clock_spread_limit, o.clock_floor_fraction);
    clocks = check.record;
    clocks["throttled"] = !check.rerun_reason.empty();
    clocks["reason"] = check.rerun_reason;
    // Several ranks: no re-run (a rank re-running alone would pair its trials with none of the others').
    if (check.rerun_reason.empty() || attempt == (several ? 0 : o.max_clock_reruns)) break;
    std::fprintf(stderr, "%s: megamoe %s: %s; re-running the point\n", xs::program_name(), label.c_str(),
                 check.rerun_reason.c_str());
    attempts.push_back(clocks);
    r = run_moe_point(spec, routing, problem);
    // The record must describe the kept result: a re-run that did not finish has no clocks of its own.
    if (r.status != "ok") clocks = json{{"measured", "not measured: the re-run ended " + r.status}, {"throttled", false}};
  }
  if (!clocks.is_null()) {
    clocks["attempts"] = attempts.size() + 1;
    clocks["earlier_attempts"] = attempts;
  }
  return clocks;
}

// The result file's meta, config and extra sections.
bench::AppResultSections make_sections(const MoeBenchOptions& o, const Backend& backend, const json& tflops,
                                       const json& topology, bool several, bool has_exchange) {
  bench::AppResultSections sections;
  sections.meta = report::make_meta(o.argv, "gpu", backend.describe());
  sections.config = json::array();
  for (const auto& s : o.points) sections.config.push_back(json(s));
  sections.config = {{"points", sections.config}};
  if (!o.model_path.empty()) sections.extra["model_from"] = o.model_path;
  if (!o.tensor_tflops.empty()) sections.extra["tensor_tflops_for_predictions"] = tflops;
  if (!topology.is_null()) sections.meta["topology"] = topology;
  if (several)
    sections.extra["multi_rank"] = {
        {"mode", has_exchange ? "each rank plays its own EP rank; nccl targets: the Combine across the ranks' windows"
                              : "each rank plays its own EP rank"},
        {"note", "rank r ran EP rank r's share of the same routing and inputs on its own GPU. local/host: its Combine "
                 "rows for the other ranks went to its own local/host buffers, not to those ranks. nccl:N: they went "
                 "into the owning ranks' NCCL windows (every replay started together; each rank checked the rows it "
                 "sent and that every slot of its own window was written). The Dispatch (moving the tokens to the "
                 "experts' ranks) is not timed: each rank builds its arrival rows from the shared routing. Clock "
                 "re-runs are off"}};
  return sections;
}

// Rank 0's console output: the whole result file (--json) or the table and the path written.
void print_result(const MoeBenchOptions& o, const std::vector<report::AppPoint>& points) {
  if (o.json) {
    fmt::print("{}\n", report::read_json_file(o.out_path).dump(1));
  } else {
    print_table(points);
    fmt::print("wrote {} ({} points)\n", o.out_path, points.size());
  }
}

}  // namespace

int run_moe_bench(const MoeBenchOptions& o, bench::RankComm* comm_or_null) {
  bench::SingleRankComm single;
  bench::RankComm& comm = comm_or_null != nullptr ? *comm_or_null : single;
  const bool several = comm.size() > 1;
  std::optional<Calibration> cal;
  std::unique_ptr<Backend> backend;
  double peak_clock_hz = 0;
  json topology;  // meta.topology of a run with a peer/nccl target
  const int device = o.points.empty() ? 0 : o.points.front().device;  // every point's: the rank's GPU
  // Everything that can refuse the run, on every rank before any point (one rank's refusal ends all alike).
  bench::agree(comm, [&] {
    if (o.points.empty()) throw input_error("--shapes", "nothing to run");
    if (comm.rank() == 0) {  // rank 0 alone writes
      report::check_output_path(o.out_path, "--out");
      report::check_output_path(report::journal_path_for(o.out_path), "the journal",
                                report::OutputKind::kJournal);
    }
    if (!o.model_path.empty()) {  // before any launch
      cal = Calibration{fit::load_platform_model(o.model_path), ""};
      const json file = report::read_json_file(o.model_path);
      if (file.contains("config") && file["config"].is_object() && file["config"].value("target", "") != "")
        cal->target = file["config"]["target"].get<std::string>();
    }
    backend = runtime::make_gpu_backend(device);
    peak_clock_hz = runtime::query_device(device).clock_rate_hz;
    topology = check_topology(o, several, device);
  });

  // Several ranks with an nccl target: one window per rank for the run, the largest point's Combine slots.
  std::unique_ptr<runtime::RankWindows> windows;
  std::shared_ptr<const MoeExchange> exchange;
  if (several && std::any_of(o.points.begin(), o.points.end(), [&](const MoePointSpec& s) { return is_nccl(s.target); })) {
    const std::size_t bytes = nccl_window_bytes(o);
    bench::agree(comm, [&] { windows = runtime::RankWindows::create(comm, device, bytes); });
    exchange = moe_exchange_over(*windows, comm);
  }

  const json tflops = tensor_tflops_json(o);
  bench::AppBenchPlan plan = make_plan(o, *backend, tflops);
  if (several) plan.describe_rank = [&] { return runtime::describe_rank_device(device); };
  const bench::AppBenchOutcome outcome = bench::run_app_points(plan, comm, [&](std::size_t i, const bench::AppPointSpec&,
                                                                               const bench::PointContext& ctx) {
    MoePointSpec spec = o.points[i];
    spec.input_seed = ctx.seed;  // the same inputs on every rank
    Routing routing = generate_routing(routing_params_of(spec));
    // One rank emulates the most loaded of the P ranks (the routing's choice); on P ranks each plays its own.
    if (several) routing.emulated_rank = comm.rank();
    if (exchange && is_nccl(spec.target)) spec.exchange = exchange;
    const MoeProblem problem = build_problem(routing, spec.shape.hidden, spec.shape.intermediate);
    json prediction;
    const double f = tensor_flops_for(o, spec.precision);
    if (cal && f > 0) prediction = before_run_prediction(spec, problem, *cal, f);  // before anything runs
    MoePointResult r = run_moe_point(spec, routing, problem);
    const json clocks = check_clocks_and_rerun(r, spec, routing, problem, o, peak_clock_hz, several,
                                               plan.points[i].label);
    if (cal && f <= 0 && r.status == "ok") prediction = after_run_prediction(spec, r, *cal);
    report::AppPoint point = to_app_point(spec, r, std::move(prediction));
    point.extra["clocks"] = clocks;
    return point;
  });
  runtime::host_target_cache().clear();  // the pinned destinations the points shared
  // Ranks other than 0 write and print nothing (write_app_result returns rank 0's code).
  if (!outcome.writes_output) return bench::write_app_result(plan, outcome, {});
  bench::AppResultSections sections = make_sections(o, *backend, tflops, topology, several, exchange != nullptr);
  const int code = bench::write_app_result(plan, outcome, std::move(sections));
  if (outcome.interrupted) return code;
  print_result(o, outcome.points);
  return code;
}

}  // namespace xs::moe
