// xstage moe layer (CUDA): the megamoe sweep (see moe_bench.hpp): a thin adapter over the application-suite
// point loop (bench/app_bench.hpp), which owns the journal, --resume, signals and the result file. Each
// point stores every variant's per-launch times, same-round ratios, per-tile distributions, verification
// counts and, with a calibration file, the Burst-Gap prediction (eqs. 10, 13-16) beside the measurement.
#include "moe/moe_bench.hpp"

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <optional>

#include "bench/app_bench.hpp"
#include "bench/runner.hpp"
#include "common/error.hpp"
#include "model/platform_model.hpp"
#include "moe/moe_model.hpp"
#include "moe/moe_runner.hpp"
#include "report/file_io.hpp"
#include "report/journal.hpp"
#include "report/json_read.hpp"
#include "report/result_file.hpp"
#include "runtime/gpu_backend.hpp"

namespace xs::moe {
namespace {
using nlohmann::json;

json canonical_spec(const MoePointSpec& s) {
  return {{"shape", s.shape.name}, {"hidden", s.shape.hidden}, {"intermediate", s.shape.intermediate},
          {"experts", s.shape.num_experts}, {"top_k", s.shape.top_k}, {"precision", s.precision},
          {"routing", s.routing}, {"zipf_alpha", s.zipf_alpha}, {"gain", s.gain}, {"routing_seed", s.routing_seed},
          {"T", s.tokens_per_rank}, {"P", s.num_ranks}, {"K_SM", s.num_ctas}, {"block_n", s.block_n},
          {"target", s.target}, {"D", s.lead_rows}, {"experts_per_wave", s.experts_per_wave},
          {"launches_per_graph", s.launches_per_graph}, {"repetitions", s.repetitions}, {"verify", s.verify},
          {"instrument", s.instrument}, {"variants", s.variants.empty() ? moe_variant_names() : s.variants}};
}

Summary to_summary(const TimeSummary& t) {
  Summary s;
  s.median = t.median_s;
  s.p10 = t.p10_s;
  s.p90 = t.p90_s;
  s.samples = t.samples_s;
  return s;
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

// The model's view of the point: calibration (R, T_iss^0(K_SM, V_t), Q(K_SM)) and the tile times, either
// from --tensor-tflops or from the measured expert-wave mainloops (labelled as such).
json prediction_json(const MoePointSpec& s, const MoePointResult& r, const model::PlatformModel& platform,
                     const std::string& model_target, double tensor_tflops) {
  if (!model_target.empty() && model_target != s.target)
    return json{{"status", "not applicable: the calibration is for target '" + model_target + "', the point's is '" +
                               s.target + "'"}};
  MoeModelInputs in;
  in.hidden = s.shape.hidden;
  in.intermediate = s.shape.intermediate;
  in.num_ranks = s.num_ranks;
  in.num_sms = s.num_ctas;
  in.block_n = s.block_n;
  std::string throughput_from = "--tensor-tflops";
  if (tensor_tflops > 0) {
    in.tensor_flops_per_s = tensor_tflops * 1e12;
  } else {
    const VariantResult* wave_variant = nullptr;
    for (const auto& v : r.variants)
      if (v.name == "expert_wave") wave_variant = &v;
    if (wave_variant == nullptr || wave_variant->tiles.l1_mainloop_median_s <= 0)
      return json{{"status", "no throughput: pass --tensor-tflops, or run expert_wave instrumented"}};
    const TileDistributions& wave = wave_variant->tiles;
    // T_L1 = 2 b_m b_n h / F_SM  =>  F = 132 F_SM (the model spreads F over the device's SMs). From Linear-1:
    // on host the Linear-2 mainloops are slowed by the draining Combine stores, which is the effect predicted.
    in.tensor_flops_per_s = 2.0 * 128 * s.block_n * s.shape.hidden / wave.l1_mainloop_median_s * in.device_sms;
    throughput_from = "measured expert_wave L1 mainloop median";
  }
  in.drain_rate_bps = platform.drain_rate_bps();
  // T_iss^0 is tabulated by the aggregate burst V = K x V_t (V_t = one tile's Combine rows per producer).
  const double tile_bytes = 128.0 * s.block_n * 2;
  const auto tiss = platform.tiss0_s(s.num_ctas, tile_bytes * s.num_ctas);
  in.tiss0_s = tiss.value;
  const auto q = platform.has_capacity() ? std::optional<model::Lookup>(platform.capacity_bytes(s.num_ctas))
                                         : std::nullopt;
  if (q && !q->is_lower_bound) in.capacity_bytes = q->value;
  const MoePrediction p = predict_megamoe(in);
  return {{"throughput_from", throughput_from}, {"tensor_flops_per_s", in.tensor_flops_per_s},
          {"drain_rate_bps", in.drain_rate_bps}, {"tiss0_s", in.tiss0_s}, {"tiss0_extrapolated", tiss.extrapolated},
          {"capacity_bytes", in.capacity_bytes ? json(*in.capacity_bytes) : json(nullptr)},
          {"l1_mainloop_s", p.l1_mainloop_s}, {"l2_mainloop_s", p.l2_mainloop_s}, {"burst_bytes", p.burst_bytes},
          {"drain_time_s", p.drain_time_s}, {"wave_stall_per_l2_tile_s", p.wave_stall_per_l2_tile_s},
          {"interleaved_gap_s", p.interleaved_gap_s},
          {"interleaved_stall_per_l2_tile_s", p.interleaved_stall_per_l2_tile_s},
          {"eq14_rate_bound_ok", p.rate_bound_ok}, {"eq10_capacity", bound_verdict_name(p.capacity_bound)},
          {"interleaving_sufficient", bound_verdict_name(p.interleaving_sufficient)},
          {"D_knee", p.lead_knee_rows}};
}

report::AppPoint to_app_point(const MoePointSpec& s, const MoePointResult& r, json prediction) {
  report::AppPoint p;
  p.id = "megamoe." + s.target;
  p.suite = "megamoe";
  p.axes = canonical_spec(s);
  p.status = r.status;
  p.reason = r.reason;
  for (const auto& v : r.variants)
    if (!v.time.samples_s.empty()) p.variants[v.name] = to_summary(v.time);
  p.verification.checked = s.verify && r.status != "skipped";
  p.verification.passed = r.verified;
  json per_variant = json::object();
  std::string detail;
  for (const auto& v : r.variants) {
    per_variant[v.name] = {{"verified", v.verified}, {"wrong_elements", v.wrong_elements},
                           {"unwritten_slots", v.unwritten_slots}, {"unexpected_slots", v.unexpected_slots},
                           {"bitwise_differences_vs_first", v.bitwise_differences},
                           {"relative_difference", v.relative_difference}, {"detail", v.verification_detail}};
    if (!v.verified && detail.empty()) detail = v.name + ": " + v.verification_detail;
  }
  p.verification.detail = detail;
  p.verification.values = {{"input_seed", r.input_seed}, {"variants", per_variant}};
  p.prediction = std::move(prediction);
  json variants = json::object();
  // Per-phase rate from the mainloop medians: one tile's flops over its mainloop, times the K_SM CTAs.
  auto phase_tflops = [&](double k_extent, double mainloop_s) {
    return mainloop_s > 0 ? 2.0 * 128 * s.block_n * k_extent / mainloop_s * s.num_ctas * 1e-12 : 0.0;
  };
  for (const auto& v : r.variants)
    variants[v.name] = {{"schedule", v.schedule}, {"mode", v.mode}, {"D", v.lead_rows},
                        {"experts_per_wave", v.experts_per_wave}, {"tflops", v.tflops},
                        {"l1_mainloop_tflops", phase_tflops(s.shape.hidden, v.tiles.l1_mainloop_median_s)},
                        {"l2_mainloop_tflops", phase_tflops(s.shape.intermediate, v.tiles.l2_mainloop_median_s)},
                        {"tiles", tiles_json(v.tiles)}};
  auto summary = [](const TimeSummary& t) { return json{{"median", t.median_s}, {"p10", t.p10_s}, {"p90", t.p90_s}}; };
  p.extra = {{"emulated_rank", r.emulated_rank}, {"received_pairs", r.received_pairs}, {"remote_pairs", r.remote_pairs},
             {"num_row_blocks", r.num_row_blocks}, {"num_arrivals", r.num_arrivals},
             {"load_imbalance", r.load_imbalance}, {"pairs_per_local_expert", r.pairs_per_local_expert},
             {"remote_bytes", r.remote_bytes}, {"flops", r.flops},
             {"K_SM", r.num_ctas}, {"D", r.lead_rows}, {"experts_per_wave", r.experts_per_wave},
             {"speedup_interleaved_vs_wave", summary(r.speedup_interleaved_vs_wave)},
             {"speedup_interleaved_vs_unfused", summary(r.speedup_interleaved_vs_unfused)},
             {"cc_over_fused_interleaved", summary(r.cc_vs_fused_interleaved)}, {"variants", variants}};
  return p;
}

void print_table(const std::vector<report::AppPoint>& points) {
  fmt::print("{:<14} {:>6} {:>5} {:<6} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {}\n", "shape", "T", "K_SM", "target",
             "wave_us", "inter_us", "unfus_us", "cc_us", "speedup", "TFLOPS", "verified");
  for (const auto& p : points) {
    if (p.status == "skipped") {
      fmt::print("{:<14} skipped: {}\n", p.axes.value("shape", "?"), p.reason);
      continue;
    }
    auto us = [&](const char* v) { return p.variants.count(v) ? p.variants.at(v).median * 1e6 : 0.0; };
    const double tflops = p.extra["variants"].contains("interleaved") ? p.extra["variants"]["interleaved"].value("tflops", 0.0) : 0.0;
    fmt::print("{:<14} {:>6} {:>5} {:<6} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>8.3f} {:>8.1f} {}\n",
               p.axes.value("shape", "?"), p.axes.value("T", 0), p.axes.value("K_SM", 0), p.axes.value("target", "?"),
               us("expert_wave"), us("interleaved"), us("unfused"), us("interleaved_cc"),
               p.extra["speedup_interleaved_vs_wave"].value("median", 0.0), tflops,
               p.verification.passed ? "yes" : "NO");
  }
}

}  // namespace

int run_moe_bench(const MoeBenchOptions& o) {
  if (o.points.empty()) throw input_error("--shapes", "nothing to run");
  report::check_output_path(o.out_path, "--out");
  report::check_output_path(report::journal_path_for(o.out_path), "the journal");
  std::optional<model::PlatformModel> platform;
  std::string model_target;
  if (!o.model_path.empty()) {  // before any launch
    platform = model::PlatformModel::load(o.model_path);
    const json file = report::read_json_file(o.model_path);
    if (file.contains("config") && file["config"].is_object() && file["config"].value("target", "") != "")
      model_target = file["config"]["target"].get<std::string>();
  }
  const std::unique_ptr<Backend> backend = runtime::make_gpu_backend(0);

  bench::AppBenchPlan plan;
  plan.suite = "megamoe";
  for (const auto& s : o.points)
    plan.points.push_back({"megamoe." + s.target, s.target, canonical_spec(s),
                           fmt::format("{} {} {} T={} K_SM={} D={} target={}", s.shape.name, s.precision, s.routing,
                                       s.tokens_per_rank, s.num_ctas, s.lead_rows, s.target)});
  plan.run_identity = {{"model", o.model_path}, {"tensor_tflops", o.tensor_tflops}};
  plan.identity = bench::journal_header_for(*backend, {});
  plan.output_path = o.out_path;
  plan.resume = o.resume;
  plan.progress = o.progress;
  const bench::AppBenchOutcome outcome = bench::run_app_points(plan, [&](std::size_t i, const bench::AppPointSpec&) {
    const MoePointResult r = run_moe_point(o.points[i]);
    json prediction;
    if (platform && r.status == "ok")
      prediction = prediction_json(o.points[i], r, *platform, model_target, o.tensor_tflops);
    return to_app_point(o.points[i], r, std::move(prediction));
  });
  bench::AppResultSections sections;
  sections.meta = report::make_meta(o.argv, "gpu", backend->describe());
  sections.config = json::array();
  for (const auto& s : o.points) sections.config.push_back(canonical_spec(s));
  sections.config = {{"points", sections.config}};
  if (!o.model_path.empty()) sections.extra["model_from"] = o.model_path;
  const int code = bench::write_app_result(plan, outcome, std::move(sections));
  if (outcome.interrupted) return code;
  if (o.json) {
    fmt::print("{}\n", report::read_json_file(o.out_path).dump(1));
  } else {
    print_table(outcome.points);
    fmt::print("wrote {} ({} points)\n", o.out_path, outcome.points.size());
  }
  return code;
}

}  // namespace xs::moe
