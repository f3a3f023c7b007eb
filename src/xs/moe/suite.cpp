// xstage moe host layer: the megamoe suite's flags, sweep expansion, dry run and registration.
#include "xs/moe/suite.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <filesystem>
#include <memory>

#include "xs/bench/app_bench.hpp"
#include "xs/bench/sweep.hpp"
#include "xs/bench/topology_record.hpp"
#include "xs/common/error.hpp"
#include "xs/common/axes.hpp"
#include "xs/common/range.hpp"
#include "xs/moe/point/moe_point.hpp"
#include "xs/moe/point/problem.hpp"
#include "xs/moe/run/moe_variants.hpp"
#include "xs/moe/point/shapes.hpp"
#if defined(XS_HAVE_MOE_RUNNER)
#include "xs/moe/run/moe_bench.hpp"
#include "xs/report/file_io.hpp"
#endif

namespace xs::moe {
namespace {

constexpr const char* kDefaultOutPath = "out/bench-megamoe.json";  // --out when not given

constexpr const char* kSuiteId = "megamoe";

struct MoeFlags {
  std::string shapes = "dsv4_flash";
  std::string models_file = "configs/moe/models.json";
  std::string precision = "bf16";
  std::string routing = "skewed";
  double alpha = 0.5, gain = 1.0;
  int routing_seed = 1;
  std::string tokens = "6976";
  int P = 8;
  std::string ksm = "66";
  std::string block_n = "auto";  // auto | 128 | 256 (auto: moe::default_block_n per shape and precision)
  std::string lead = "0";
  std::string experts_per_wave = "1,2,4,8";
  int overlap_waves = 4;
  bool no_cooperative_launch = false;
  int launches_per_graph = 3;
  std::string tensor_tflops;  // "" | F | bf16=F,fp8=F
  double clock_spread = 0.03, clock_floor = 0.75;
  int clock_reruns = 1;
  std::string variants = "all";
  bool no_verify = false, no_instrument = false;
};


// --tensor-tflops: one F for every precision ("600") or per precision ("bf16=608,fp8=1020"); TFLOP/s > 0.
std::map<std::string, double> parse_tensor_tflops(const std::string& text) {
  std::map<std::string, double> out;
  if (text.empty()) return out;
  const char* form = "accepted: a number of TFLOP/s (600) or per precision (bf16=608,fp8=1020)";
  const auto number = [&](const std::string& v) {
    std::size_t used = 0;
    double x = 0;
    try {
      x = std::stod(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != v.size() || !(x > 0) || !std::isfinite(x))
      throw input_error("--tensor-tflops", "'" + v + "' is not a throughput > 0; " + form);
    return x;
  };
  if (text.find('=') == std::string::npos) {
    out["all"] = number(text);
    return out;
  }
  for (const auto& item : parse_name_list(text, "--tensor-tflops")) {
    const auto eq = item.find('=');
    const std::string key = eq == std::string::npos ? "" : item.substr(0, eq);
    if (key != "bf16" && key != "fp8")
      throw input_error("--tensor-tflops", "'" + item + "' does not name a precision (bf16 or fp8); " + form);
    if (out.count(key)) throw input_error("--tensor-tflops", key + " given twice; " + form);
    out[key] = number(item.substr(eq + 1));
  }
  return out;
}

// The GPU a rank's points run on: --device with one rank, the rank's own GPU (its local rank) with several.
int point_device(const bench::SuiteContext& c) {
  if (c.rank.world_size <= 1) return c.device;
  if (c.device != 0)
    throw input_error("--device", "with " + std::to_string(c.rank.world_size) + " ranks each rank drives its own "
                                  "GPU (its local rank); drop --device");
  return c.rank.device;
}

// The shapes --shapes names, from the --models-file table. The table is an input: no output may replace it
// (the dry run checks it too).
std::vector<MoeShape> chosen_shapes(const MoeFlags& f, const bench::SuiteContext& c) {
  const std::string models_file = find_models_file(f.models_file);
  if (!c.out_path.empty())
    report::check_distinct_paths({{c.out_path, "--out"}, {report::journal_path_for(c.out_path), "the journal"}},
                                 {{models_file, "--models-file"}});
  const auto shapes = load_moe_shapes(models_file);
  std::vector<MoeShape> chosen;
  for (const auto& name : parse_name_list(f.shapes, "--shapes")) {
    if (name == "all") {
      chosen = shapes;
      break;
    }
    chosen.push_back(find_moe_shape(shapes, name));
  }
  if (chosen.empty()) throw input_error("--shapes", "name at least one shape (or all)");
  return chosen;
}

std::vector<MoePointSpec> expand(const MoeFlags& f, const bench::SuiteContext& c) {
  if (c.backend == "sim")
    throw input_error("--backend", "megamoe has no simulator: it runs the MegaMoE kernel on a GPU (drop --backend sim)");
  if (!c.table_flag.empty()) throw input_error(c.table_flag, "not available for megamoe (use --json or the result file)");
  const std::vector<MoeShape> chosen = chosen_shapes(f, c);
  const StringAxis precisions = string_axis(f.precision, "--precision");
  for (const auto& p : precisions.values())
    if (p != "bf16" && p != "fp8") throw input_error("--precision", "'" + p + "' is not a precision; accepted: bf16, fp8");
  const StringAxis routings = string_axis(f.routing, "--routing");
  for (const auto& r : routings.values())
    if (r != "balanced" && r != "skewed") throw input_error("--routing", "'" + r + "' is not a routing; accepted: balanced, skewed");
  const IntegerAxis tokens = integer_axis(f.tokens, "--T");
  const IntegerAxis ksms = integer_axis(f.ksm, "--ksm");
  const IntegerAxis leads = integer_axis(f.lead, "--D");
  require_distinct(tokens.values(), f.tokens, "--T");
  require_distinct(ksms.values(), f.ksm, "--ksm");
  require_distinct(leads.values(), f.lead, "--D");
  for (long long d : leads.values())
    if (d < 0 || d > 1'000'000)
      throw input_error("--D", fmt::format("D = {} is outside 0-1000000: a lead in row blocks, >= 1 (0 = auto: "
                                           "max(1, ceil(D_knee)))", d));
  (void)parse_tensor_tflops(f.tensor_tflops);
  if (!(f.clock_spread > 0 && f.clock_spread < 1)) throw input_error("--clock-spread", "a fraction in (0, 1), e.g. 0.03");
  if (!(f.clock_floor >= 0 && f.clock_floor < 1)) throw input_error("--clock-floor", "a fraction in [0, 1), e.g. 0.75");
  if (f.block_n != "auto" && f.block_n != "128" && f.block_n != "256")
    throw input_error("--block-n", "'" + f.block_n + "' is not a tile width; accepted: auto, 128 or 256");
  std::vector<std::string> variants;
  if (f.variants != "all") {
    variants = parse_name_list(f.variants, "--variants");
    check_variant_families(variants);
  }
  std::vector<int> widths;
  for (long long w : parse_integer_range(f.experts_per_wave, "--experts-per-wave")) {
    if (w < 1 || w > (1 << 20))
      throw input_error("--experts-per-wave", "widths must be in [1, 2^20] (experts per wave), e.g. 1,2,4,8");
    widths.push_back(static_cast<int>(w));
  }
  if (f.overlap_waves < 1) throw input_error("--overlap-waves", "the overlapped pipeline needs at least 1 wave");
  const StringAxis target_axis = string_axis(c.target.empty() ? "host,local" : c.target, "--target");
  const std::vector<std::string>& targets = target_axis.values();
  bench::check_target_names(targets);
  // The sweep's points: target slowest, then shape, precision, routing, T, K_SM, D fastest (common/axes.hpp).
  const auto sweep =
      product(target_axis, Axis<MoeShape>("--shapes", chosen), precisions, routings, tokens, ksms, leads);
  // The product before anything is allocated (a 1000 x 1000 x 1000 sweep took 15 GB before its refusal), and each
  // axis value's range before any GPU is looked at: exit 2 naming the flag, the dry run included.
  if (const std::uint64_t n = sweep.size(); n > bench::kMaxSweepPoints)
    throw input_error("--T", fmt::format("--target x --shapes x --precision x --routing x --T x --ksm x --D expand to "
                                         "{} points, over the cap of {}; narrow the ranges or split the run", n,
                                         bench::kMaxSweepPoints));
  for (long long t : tokens.values())
    if (t < 1 || t > (1 << 20)) throw input_error("--T", fmt::format("T={} out of range: tokens per rank in [1, 2^20]", t));
  for (long long k : ksms.values())
    if (k < 1 || k > 1024)
      throw input_error("--ksm", fmt::format("K_SM={} out of range: [1, 1024] (and at most the GPU's SM count, "
                                             "checked when the point runs)", k));
  if (!std::isfinite(f.alpha) || f.alpha < 0) throw input_error("--alpha", "the Zipf exponent must be finite and >= 0");
  if (!std::isfinite(f.gain) || !(f.gain > 0)) throw input_error("--gain", "the gain must be finite and > 0");
  // Several ranks: P is the number of ranks (each rank plays its own EP rank). nccl:N is the real Combine into
  // every rank's NCCL window (moe_point.hpp MoeExchange; the fused variants only); peer:N stays refused.
  bench::check_world_matches_p(c.rank.world_size, f.P, "--P");
  bench::check_targets_on_ranks(kSuiteId, targets, c.rank.world_size);
  const bool nccl_on_ranks =
      c.rank.world_size > 1 &&
      std::any_of(targets.begin(), targets.end(), [](const std::string& t) { return t.rfind("nccl:", 0) == 0; });
  const auto named = [&](const char* v) {
    return variants.empty() || std::find(variants.begin(), variants.end(), v) != variants.end();
  };
  if (nccl_on_ranks && (named("serial_then_copy") || named("unfused_overlapped") || named("phase_l1") ||
                        named("phase_l2")))
    throw input_error("--variants", "nccl on " + std::to_string(c.rank.world_size) + " ranks: the unfused variant is "
                                    "not built across ranks (the copy pipelines' Combine would need ncclSend/ncclRecv; "
                                    "the phase launches read another launch's intermediates); name the fused "
                                    "variants, e.g. --variants expert_wave,interleaved");
  const int device = point_device(c);
  std::vector<MoePointSpec> points;
  for (const auto& [target, shape, precision, routing, t, k, d] : sweep) {
    const int block_n = f.block_n == "auto" ? default_block_n(shape.hidden, shape.intermediate, precision)
                                            : std::stoi(f.block_n);
    try {  // what the run would refuse, refused before anything runs (the dry run too)
      validate_tile_and_precision(shape.hidden, shape.intermediate, block_n, precision);
    } catch (const Error& e) {
      std::string why = e.what();  // "<field>: <message>": the field is named once, in front
      if (why.rfind(e.field() + ": ", 0) == 0) why.erase(0, e.field().size() + 2);
      throw input_error(e.field(), fmt::format("{} {} at --block-n {}: {}", shape.name, precision, block_n, why));
    }
    MoePointSpec s;
    s.shape = shape;
    s.precision = precision;
    s.routing = routing;
    s.zipf_alpha = routing == "balanced" ? 0.0 : f.alpha;
    s.gain = f.gain;
    s.routing_seed = static_cast<std::uint64_t>(f.routing_seed);
    s.tokens_per_rank = static_cast<int>(t);
    s.num_ranks = f.P;
    s.num_ctas = static_cast<int>(k);
    s.block_n = block_n;
    s.target = target;
    s.device = device;
    s.lead_rows = static_cast<int>(d);
    s.experts_per_wave = widths;
    s.overlap_waves = f.overlap_waves;
    s.cooperative_launch = !f.no_cooperative_launch;
    s.verify_rotation = static_cast<int>(points.size());  // each point verifies from another variant
    s.launches_per_graph = f.launches_per_graph;
    if (c.repetitions) s.repetitions = *c.repetitions;
    s.verify = !f.no_verify;
    s.variants = variants;
    s.instrument = !f.no_instrument;
    points.push_back(s);
  }
  return points;
}

int dry_run(const MoeFlags& f, const bench::SuiteContext& c) {
  const auto points = expand(f, c);
  // The outputs and the journal are refused as the run refuses them, before anything is printed.
  bench::check_app_outputs_for_dry_run(kSuiteId, c.out_path.empty() ? kDefaultOutPath : c.out_path, c.resume);
  for (const auto& s : points)
    fmt::print("megamoe shape={} precision={} routing={} T={} P={} K_SM={} b_n={} D={} target={} widths={}\n",
               s.shape.name, s.precision, s.routing, s.tokens_per_rank, s.num_ranks, s.num_ctas, s.block_n,
               s.lead_rows == 0 ? std::string("auto") : std::to_string(s.lead_rows), s.target,
               fmt::format("{}", fmt::join(s.experts_per_wave, ",")));
  fmt::print("{} points\n", points.size());
  return 0;
}

int run(const MoeFlags& f, const bench::SuiteContext& c) {
  const auto points = expand(f, c);
#if defined(XS_HAVE_MOE_RUNNER)
  MoeBenchOptions o;
  o.points = points;
  o.model_path = c.model_path;
  o.tensor_tflops = parse_tensor_tflops(f.tensor_tflops);
  o.clock_spread_limit = f.clock_spread;
  o.clock_floor_fraction = f.clock_floor;
  o.max_clock_reruns = f.clock_reruns;
  o.out_path = c.out_path.empty() ? kDefaultOutPath : c.out_path;
  o.resume = c.resume;
  o.resume_any_build = c.resume_any_build;
  o.progress = c.progress;
  o.json = c.json;
  o.argv = c.argv;
  return run_moe_bench(o, c.comm);
#else
  (void)points;
  throw no_gpu_error("megamoe needs the CUDA build (nvcc was not found at configure time): not built");
#endif
}

}  // namespace

void register_suites(bench::SuiteRegistry& registry) {
  auto flags = std::make_shared<MoeFlags>();
  bench::SuiteDefinition d;
  d.id = kSuiteId;
  d.description = "MegaMoE fused MoE: expert-wave (widths swept) vs interleaved (D), serial, completion-coupled, "
                  "serial_then_copy, unfused_overlapped, whole-phase launches";
  d.example = "--shapes dsv4_flash --T 6976 --ksm 66,132 --target host,local --model out/calibration-gpu-host.json";
  d.options_title = "Options of the megamoe suite (--target takes a list: host,local)";
  d.add_options = [flags](bench::OptionSink& sink) {
    sink.add_text("--shapes", flags->shapes, "Model shapes from --models-file, comma list or 'all'");
    sink.add_text("--models-file", flags->models_file, "Shape table (JSON)");
    sink.add_text("--precision", flags->precision, "bf16 and/or fp8 (W8A8: e4m3, per-token 128-K and 128x128 "
                  "weight scales; b_n 128)");
    sink.add_text("--routing", flags->routing, "balanced and/or skewed (Zipf alpha, gain)");
    sink.add_number("--alpha", flags->alpha, "Zipf exponent of the skewed routing");
    sink.add_number("--gain", flags->gain, "Weight of the popularity bias in the router scores");
    sink.add_integer("--routing-seed", flags->routing_seed, "Seed of the routing (recorded)", 0, 1 << 30);
    sink.add_text("--T", flags->tokens, "Tokens per source rank, range grammar");
    sink.add_integer("--P", flags->P, "EP degree (ranks): one rank emulates the most loaded of P; on P ranks each plays its own", 1, 16);
    sink.add_text("--ksm", flags->ksm, "Participating SMs K_SM (one persistent CTA each), range grammar");
    sink.add_text("--block-n", flags->block_n, "Tile width b_n: auto, 128 or 256; auto: 256 where it runs (bf16, h "
                  "and 2I multiples of 256), else 128 (moe::default_block_n)");
    sink.add_text("--D", flags->lead, "Interleaved lead in rows, range grammar; 0 = auto: eq. 16's knee lead "
                  "max(1, ceil(D_knee)), D_knee = b_n K_SM / (2I) (model::knee_lead_rows, the advisor's D_knee_lead)");
    sink.add_text("--experts-per-wave", flags->experts_per_wave,
                  "Expert-wave widths swept as variants (expert_wave_w<n>; the fastest is the expert_wave baseline), "
                  "range grammar; widths above E/P run as one wave");
    sink.add_integer("--overlap-waves", flags->overlap_waves,
                     "Waves of the unfused_overlapped pipeline (one launch each, its Combine copies overlapping the "
                     "next wave)", 1, 1024);
    sink.add_flag("--no-cooperative-launch", flags->no_cooperative_launch,
                  "Launch without the cooperative attribute (the occupancy check is then the only residency "
                  "guard; recorded in the axes)");
    sink.add_integer("--launches-per-graph", flags->launches_per_graph, "Back-to-back launches per graph replay",
                     1, 100);
    sink.add_text("--tensor-tflops", flags->tensor_tflops,
                  "F (TFLOP/s) for predictions made before each point runs: one number or bf16=F,fp8=F; without "
                  "it the prediction uses the point's own measured mainloops after the run (in-sample)");
    sink.add_number("--clock-spread", flags->clock_spread,
                    "Re-run a point whose variants' SM clocks differ by more than this fraction");
    sink.add_number("--clock-floor", flags->clock_floor,
                    "Re-run a point with an SM clock below this fraction of the peak (0: never)");
    sink.add_integer("--clock-reruns", flags->clock_reruns, "Re-runs of a throttled point (then kept, flagged)", 0, 5);
    sink.add_text("--variants", flags->variants, "Variants to run, comma list or all (expert_wave, interleaved, "
                  "serial, expert_wave_cc, interleaved_cc, serial_then_copy, unfused_overlapped, phase_l1, phase_l2); "
                  "verification starts at a variant rotating with the point, the first that passes is the others' "
                  "bitwise reference");
    sink.add_flag("--no-verify", flags->no_verify, "Skip the reference comparison (not recommended)");
    sink.add_flag("--no-instrument", flags->no_instrument, "Skip the instrumented launch (no per-tile figures)");
  };
  d.dry_run = [flags](const bench::SuiteContext& c) { return dry_run(*flags, c); };
  d.run = [flags](const bench::SuiteContext& c) { return run(*flags, c); };
  d.default_out_path = [](const bench::SuiteContext&) { return std::string(kDefaultOutPath); };
  d.runs_on_ranks = true;  // local/host on every rank's own GPU; peer/nccl refused on several (expand)
  registry.add(std::move(d));
}

}  // namespace xs::moe
