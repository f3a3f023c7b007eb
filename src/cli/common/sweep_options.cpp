// xstage cli layer: backend and sweep options (see sweep_options.hpp).
#include "cli/common/sweep_options.hpp"

#include <fmt/format.h>

#include <cctype>

#include "common/error.hpp"
#include "common/units.hpp"
#include "runtime/gpu_backend.hpp"
#include "sim/simulator.hpp"

namespace xs::cli {

void add_backend_options(CLI::App& app, BackendOptions& o) {
  app.add_option("--backend", o.kind, "Measurement backend: gpu (CUDA device) or sim (discrete-event simulator)")
      ->check(CLI::IsMember({"gpu", "sim"}))->capture_default_str();
  app.add_option("--target", o.target, "Remote-store destination: local (HBM), host (mapped pinned host memory "
                 "over PCIe), peer:N (GPU N), nccl:N (NCCL symmetric window); default host");
  app.add_option("--device", o.device_index, "CUDA device that issues the stores")->capture_default_str();
  app.add_option("--sim-R", o.sim_R, "sim: planted drain rate R (e.g. 717GB/s)")->capture_default_str();
  app.add_option("--sim-tiss0", o.sim_tiss0, "sim: planted T_iss^0 of a 32 KiB-per-producer burst")->capture_default_str();
  app.add_option("--sim-Q", o.sim_Q, "sim: planted outstanding capacity Q")->capture_default_str();
  app.add_option("--sim-latency", o.sim_latency, "sim: completion latency after drain")->capture_default_str();
  app.add_option("--sim-noise", o.sim_noise, "sim: relative jitter (lognormal sigma)")->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", o.seed, "sim: random seed")->capture_default_str();
}

std::unique_ptr<Backend> make_backend(const BackendOptions& o) {
  if (o.kind == "sim") {
    sim::SimParams p;
    p.drain_rate_bps = parse_rate_bps(o.sim_R, "--sim-R");
    p.tiss0_ref_s = parse_seconds(o.sim_tiss0, "--sim-tiss0");
    if (!(p.tiss0_ref_s > 0)) throw input_error("--sim-tiss0", "must be > 0");
    p.capacity_bytes = static_cast<double>(parse_bytes(o.sim_Q, "--sim-Q"));
    if (!(p.capacity_bytes > 0)) throw input_error("--sim-Q", "must be > 0");
    p.completion_latency_s = parse_seconds(o.sim_latency, "--sim-latency");
    p.noise = o.sim_noise;
    p.seed = o.seed;
    return sim::make_sim_backend(p);
  }
  return runtime::make_gpu_backend(o.device_index);
}

void add_sweep_overrides(CLI::App& app, SweepOverrides& o, bool with_suite) {
  if (with_suite)
    app.add_option("--suite", o.suite, "Run one suite: periodic, isolated or local_control (with --K/--B/--G)");
  app.add_option("--K", o.K, "Producer counts, e.g. 1,8,33,132 or 8:128:x2");
  app.add_option("--B", o.B, "Bytes per producer per burst, e.g. 1KiB:512KiB:x2 (multiples of the store width)");
  app.add_option("--G", o.G, "Producer-side gaps, e.g. 0:20us:+1us (periodic suites)");
  app.add_option("--reps", o.repetitions, "Repetitions (launches) per point; each gives one sample");
  app.add_option("--bursts", o.num_bursts, "Bursts per repetition (periodic)");
  app.add_option("--warmup", o.warmup_bursts, "Leading bursts left out of the steady-state statistics");
  app.add_option("--store-width", o.store_width_bytes, "Store width in bytes: 4, 8 or 16");
  app.add_option("--threads", o.threads_per_producer, "Threads per producer (CTA producers)");
  app.add_option("--producer", o.producer, "Producer granularity: cta (one per SM) or warp")
      ->check(CLI::IsMember({"cta", "warp"}));
  app.add_option("--address-mode", o.address_mode, "fresh: a new slice of a ring larger than L2 each burst; "
                 "same: the same lines every burst; scattered: 256-B rows at a seeded permutation of the row "
                 "slots of a ring larger than L2 (B a multiple of 256; seed: config key scatter_seed)")
      ->check(CLI::IsMember({"fresh", "same", "scattered"}));
  app.add_flag("--completion", o.completion, "Also measure the remote-visible (system fence) horizon per burst");
}

void apply_overrides(bench::SweepConfig& config, const SweepOverrides& o) {
  if (!o.suite.empty() || !o.K.empty() || !o.B.empty() || !o.G.empty()) {
    bench::SweepBlock block;
    block.name = "cli";
    block.suite = o.suite.empty() ? Suite::kPeriodic : parse_suite(o.suite);
    block.K = o.K.empty() ? "132" : o.K;
    block.B = o.B.empty() ? "32KiB" : o.B;
    block.G = o.G.empty() ? "0" : o.G;
    config.blocks = {block};
  }
  // A CLI flag wins over the config's defaults and over any block's own value for that key.
  auto set = [&](const char* key, const auto& value) {
    config.defaults[key] = value;
    for (auto& block : config.blocks) block.overrides.erase(key);
  };
  if (o.repetitions) set("repetitions", *o.repetitions);
  if (o.num_bursts) set("num_bursts", *o.num_bursts);
  if (o.warmup_bursts) set("warmup_bursts", *o.warmup_bursts);
  if (o.store_width_bytes) set("store_width_bytes", *o.store_width_bytes);
  if (o.threads_per_producer) set("threads_per_producer", *o.threads_per_producer);
  if (!o.producer.empty()) set("producer", o.producer);
  if (!o.address_mode.empty()) set("address_mode", o.address_mode);
  if (o.completion) set("completion", true);
  bench::expand(config);  // validate now: bad ranges fail before anything runs
}

void print_dry_run(const std::vector<bench::ExpandedPoint>& points, std::FILE* out) {
  double bytes = 0, bursts = 0;
  fmt::print(out, "{:<16} {:<36} {:>5} {:>10} {:>11} {:>6} {:>5}\n", "block", "id", "K", "B", "G", "bursts", "reps");
  for (const auto& p : points) {
    const auto& s = p.spec;
    fmt::print(out, "{:<16} {:<36} {:>5} {:>10} {:>11} {:>6} {:>5}\n", p.block, point_id(s), s.num_producers,
               format_bytes(static_cast<double>(s.bytes_per_producer)), format_seconds(s.gap_s), s.num_bursts,
               s.repetitions);
    bursts += static_cast<double>(s.num_bursts) * s.repetitions;
    bytes += static_cast<double>(s.volume_bytes()) * s.num_bursts * s.repetitions;
  }
  fmt::print(out, "{} points, {:.0f} bursts, {} stored in all\n", points.size(), bursts, format_bytes(bytes));
}

std::string file_safe(const std::string& text) {
  std::string out;
  for (char c : text)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') out += c;
  return out.empty() ? "default" : out;
}

}  // namespace xs::cli
