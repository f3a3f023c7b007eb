// xstage remote_store slice (run): the backend and sweep options of the remote-store sweeps (see sweep_options.hpp).
#include "xs/remote_store/run/sweep_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "xs/common/error.hpp"
#include "xs/common/range.hpp"
#include "xs/bench/runner.hpp"
#include "xs/common/units.hpp"
#include "xs/backends/gpu/gpu_backend.hpp"
#if defined(XS_HAVE_CUDA)
#include "xs/backends/cuda/devices.hpp"
#endif
#include "xs/backends/sim/simulator.hpp"

namespace xs::remote_store {

int count_local_gpus() {
#if defined(XS_HAVE_CUDA)
  return runtime::count_devices();
#else
  throw no_gpu_error("GPU backend not built: nvcc was not found at configure time, so no rank has a GPU");
#endif
}

std::unique_ptr<Backend> make_backend(const BackendOptions& o, int rank) {
  if (o.kind == "sim") {
    sim::SimParams p;
    // Planted values a simulated run can carry to the end (hostile review of 2026-12-07: --sim-R 1e-305GB/s measured
    // a sweep, then died on NaN times and left a journal): refused before anything is written, dry run included.
    p.drain_rate_bps = parse_rate_bps(o.sim_R, "--sim-R");
    if (!(p.drain_rate_bps >= 1e6 && p.drain_rate_bps <= 1e15))
      throw input_error("--sim-R", fmt::format("{} is out of range: a drain rate in [1MB/s, 1000TB/s], e.g. 717GB/s",
                                               o.sim_R));
    p.tiss0_ref_s = parse_seconds(o.sim_tiss0, "--sim-tiss0");
    if (!(p.tiss0_ref_s >= 1e-9 && p.tiss0_ref_s <= 1.0))
      throw input_error("--sim-tiss0", fmt::format("{} is out of range: [1ns, 1s], e.g. 2us", o.sim_tiss0));
    p.capacity_bytes = static_cast<double>(parse_bytes(o.sim_Q, "--sim-Q"));
    if (!(p.capacity_bytes > 0)) throw input_error("--sim-Q", "must be > 0");
    p.completion_latency_s = parse_seconds(o.sim_latency, "--sim-latency");
    if (!(p.completion_latency_s >= 0 && p.completion_latency_s <= 1.0))
      throw input_error("--sim-latency", fmt::format("{} is out of range: [0s, 1s], e.g. 2us", o.sim_latency));
    p.noise = o.sim_noise;
    p.interference_alpha = o.sim_alpha;
    p.mainloop_tile_s = parse_seconds(o.sim_tile_time, "--sim-tile-time");
    if (!(p.mainloop_tile_s >= 1e-9 && p.mainloop_tile_s <= 1.0))
      throw input_error("--sim-tile-time", fmt::format("{} is out of range: [1ns, 1s], e.g. 3us", o.sim_tile_time));
    p.seed = o.seed;
    return sim::make_sim_backend(p, rank);
  }
  try {
    return runtime::make_gpu_backend(o.device_index);
  } catch (const Error& e) {
    if (e.code() != ExitCode::kNoGpu && e.code() != ExitCode::kDeviceFailure) throw;
    const std::string message = e.what();
    if (message.find("--backend sim") != std::string::npos) throw;
    throw Error(e.code(), e.domain(), e.field(), message + " (no GPU here? add --backend sim)");
  }
}

void check_points_without_device(const BackendOptions& o, const std::vector<bench::ExpandedPoint>& points) {
  if (o.kind != "sim") return;
  (void)bench::check_points(*make_backend(o), points);
}

namespace {

std::string join_values(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ",") + v;
  return out;
}

// --K / --B without --suite: keep each block's values that are also in the flag's list.
std::vector<std::string> narrow_blocks(bench::SweepConfig& config, const SweepOverrides& o) {
  if (!o.G.empty())
    throw input_error("--G", "needs --suite periodic or local_control: the built-in gap ranges are sized per "
                             "block (narrow the sweep with --K/--B, or pass a --config)");
  std::set<long long> wanted_k;
  std::set<std::uint64_t> wanted_b;
  if (!o.K.empty())
    for (long long k : parse_integer_range(o.K, "--K")) wanted_k.insert(k);
  if (!o.B.empty())
    for (std::uint64_t b : parse_bytes_range(o.B, "--B")) wanted_b.insert(b);
  std::vector<std::string> notes, dropped;
  std::vector<bench::SweepBlock> kept;
  for (std::size_t i = 0; i < config.blocks.size(); ++i) {
    bench::SweepBlock block = config.blocks[i];
    const std::string path = fmt::format("config.blocks[{}]", i);
    std::vector<std::string> ks, bs;
    for (long long k : parse_integer_range(block.K, path + ".K"))
      if (wanted_k.empty() || wanted_k.count(k)) ks.push_back(std::to_string(k));
    for (std::uint64_t b : parse_bytes_range(block.B, path + ".B"))
      if (wanted_b.empty() || wanted_b.count(b)) bs.push_back(std::to_string(b));
    if (ks.empty() || bs.empty()) {
      dropped.push_back(fmt::format("{} (K {}, B {})", block.name, block.K, block.B));
      continue;
    }
    if (!wanted_k.empty()) block.K = join_values(ks);
    if (!wanted_b.empty()) block.B = join_values(bs);
    kept.push_back(block);
  }
  const std::string flags = !o.K.empty() && !o.B.empty() ? "--K/--B" : !o.K.empty() ? "--K" : "--B";
  if (kept.empty()) {
    std::string have;
    for (const auto& b : config.blocks) have += fmt::format("\n  {:<16} K {}  B {}", b.name, b.K, b.B);
    throw input_error(flags, fmt::format("selects no point of the sweep; its blocks are:{}\n"
                                         "(to measure other values without a fit, use xstage-bench "
                                         "remote_store.periodic --K ... --B ... --G ...)", have));
  }
  if (!dropped.empty())
    notes.push_back(fmt::format("{} narrows the sweep; blocks left out (no value in common): {}", flags,
                                join_values(dropped)));
  config.blocks = std::move(kept);
  return notes;
}

// A name selects the block of that name, or, where no block has it, every block of the suite of that name
// (--only loaded: the loaded_* blocks).
void select_blocks(bench::SweepConfig& config, const std::vector<std::string>& only) {
  std::vector<std::string> names;
  for (const auto& b : config.blocks) names.push_back(b.name);
  auto selects = [&](const std::string& name, const bench::SweepBlock& b) {
    if (b.name == name) return true;
    return std::find(names.begin(), names.end(), name) == names.end() && name == suite_name(b.suite);
  };
  for (const auto& name : only)
    if (std::none_of(config.blocks.begin(), config.blocks.end(), [&](const auto& b) { return selects(name, b); }))
      throw input_error("--only", fmt::format("no block or suite named '{}'; blocks: {} (see --list)", name,
                                              join_values(names)));
  std::vector<bench::SweepBlock> kept;
  for (const auto& b : config.blocks)
    if (std::any_of(only.begin(), only.end(), [&](const auto& name) { return selects(name, b); })) kept.push_back(b);
  config.blocks = std::move(kept);
}

// The flag that set a sweep key's value, where one did: the flags replace the config's defaults and every block's
// own value for their keys; K, B and G only where --suite built the one block from them.
const char* flag_of_key(const std::string& key, const SweepOverrides& o) {
  if (key == "repetitions" && o.repetitions) return "--reps";
  if (key == "num_bursts" && o.num_bursts) return "--bursts";
  if (key == "warmup_bursts" && o.warmup_bursts) return "--warmup";
  if (key == "store_width_bytes" && o.store_width_bytes) return "--store-width";
  if (key == "threads_per_producer" && o.threads_per_producer) return "--threads";
  if (key == "producer" && !o.producer.empty()) return "--producer";
  if (key == "address_mode" && !o.address_mode.empty()) return "--address-mode";
  if (key == "min_stream_bytes" && !o.min_stream.empty()) return "--min-stream";
  if (o.suite.empty()) return nullptr;
  if (key == "K" && !o.K.empty()) return "--K";
  if (key == "B" && !o.B.empty()) return "--B";
  if (key == "G" && !o.G.empty()) return "--G";
  return nullptr;
}

}  // namespace

Error name_by_flag(const Error& e, const SweepOverrides& o) {
  // The config's JSON path ends in ".<key>" ("config.blocks[0] (block cli).repetitions"); the message repeats it.
  const std::size_t dot = e.field().rfind('.');
  if (dot == std::string::npos) return e;
  const std::string key = e.field().substr(dot + 1);
  const char* flag = flag_of_key(key, o);
  const std::string message = e.what(), suffix = "." + key + ": ";
  const std::size_t at = message.find(suffix);
  if (flag == nullptr || at == std::string::npos) return e;
  // A block of the config (not the one --suite builds) is still named: the flag may clash with its own values.
  const std::string where = message.substr(0, at);  // "config.blocks[6] (block stream_0.5xL2)"
  const std::size_t block_at = where.find("(block ");
  const std::string block = block_at == std::string::npos ? "" : where.substr(block_at);
  return Error(e.code(), e.domain(), flag, std::string(flag) + ": " + message.substr(at + suffix.size()) +
                                               (block.empty() || block == "(block cli)" ? "" : " " + block));
}

std::vector<std::string> apply_overrides(bench::SweepConfig& config, const SweepOverrides& o,
                                         bool show_sweep_rules) {
  std::vector<std::string> notes;
  if (!o.only.empty()) select_blocks(config, o.only);
  if (!o.suite.empty()) {
    bench::SweepBlock block;
    block.name = "cli";
    block.suite = parse_suite(o.suite);
    block.K = o.K.empty() ? "132" : o.K;
    block.B = o.B.empty() ? "32KiB" : o.B;
    block.G = o.G.empty() ? "0" : o.G;
    if (block.suite == Suite::kLoaded) block.overrides = bench::loaded_block_overrides();
    config.blocks = {block};
  } else if (!o.K.empty() || !o.B.empty() || !o.G.empty()) {
    notes = narrow_blocks(config, o);
  }
  // A CLI flag wins over the config's defaults and over any block's own value for that key.
  auto set = [&](const char* key, const auto& value) {
    config.defaults[key] = value;
    for (auto& block : config.blocks)
      if (block.overrides.is_object()) block.overrides.erase(key);
  };
  if (o.repetitions) set("repetitions", *o.repetitions);
  if (o.num_bursts) set("num_bursts", *o.num_bursts);
  if (o.warmup_bursts) set("warmup_bursts", *o.warmup_bursts);
  if (o.store_width_bytes) set("store_width_bytes", *o.store_width_bytes);
  if (o.threads_per_producer) set("threads_per_producer", *o.threads_per_producer);
  if (!o.producer.empty()) set("producer", o.producer);
  if (!o.address_mode.empty()) set("address_mode", o.address_mode);
  if (o.completion) set("completion", true);
  if (!o.min_stream.empty()) {
    const std::uint64_t bytes = o.min_stream == "0" ? 0 : parse_bytes(o.min_stream, "--min-stream");
    set("min_stream_bytes", bytes);
  }
  // The loaded suite's storers are warps of the mainloop CTAs issuing 16-B stores with one fence at the end:
  // these flags do not apply to its blocks, which keep their values.
  std::vector<std::string> not_loaded;
  if (o.store_width_bytes) not_loaded.push_back("--store-width");
  if (!o.producer.empty()) not_loaded.push_back("--producer");
  if (o.completion) not_loaded.push_back("--completion");
  for (auto& block : config.blocks) {
    if (block.suite != Suite::kLoaded || not_loaded.empty()) continue;
    if (o.store_width_bytes) block.overrides["store_width_bytes"] = 16;
    if (!o.producer.empty()) block.overrides["producer"] = "cta";
    if (o.completion) block.overrides["completion"] = false;
    notes.push_back(fmt::format("block {} is loaded: {} do(es) not apply to it (16-B stores from storer warps of the "
                                "mainloop CTAs, one fence after the last burst)", block.name, join_values(not_loaded)));
  }
  // Injection epilogue: the 256 math threads store and the burst counts follow from the tiles, so --threads,
  // --bursts and --warmup do not apply to those blocks either.
  std::vector<std::string> not_epilogue;
  if (o.threads_per_producer) not_epilogue.push_back("--threads");
  if (o.num_bursts) not_epilogue.push_back("--bursts");
  if (o.warmup_bursts) not_epilogue.push_back("--warmup");
  for (auto& block : config.blocks) {
    const nlohmann::json& knobs = block.overrides.is_object() && block.overrides.contains("injection")
                                      ? block.overrides
                                      : config.defaults;
    const bool epilogue = block.suite == Suite::kLoaded && knobs.is_object() &&
                          knobs.value("injection", std::string()) == "epilogue";
    if (!epilogue || not_epilogue.empty()) continue;
    if (o.threads_per_producer) block.overrides["threads_per_producer"] = bench::kLoadedMathThreads;
    notes.push_back(fmt::format("block {} is loaded with injection epilogue: {} do(es) not apply to it (its {} math "
                                "threads store; num_bursts = tiles_per_cta / tiles_per_burst)", block.name,
                                join_values(not_epilogue), bench::kLoadedMathThreads));
  }
  // Validate now: bad ranges fail before anything runs, named by the flag that set the value.
  std::vector<bench::ExpandedPoint> points;
  try {
    points = bench::expand(config);
  } catch (const Error& e) {
    throw name_by_flag(e, o);
  }
  if (o.num_bursts || o.warmup_bursts) {
    for (const auto& b : config.blocks)
      if (b.suite == Suite::kIsolated)
        notes.push_back(fmt::format("block {} is isolated: one burst per repetition, no warm-up "
                                    "(--bursts/--warmup do not apply to it)", b.name));
  }
  // An isolated burst has no gap: a --G given to it ran at G = 0 without a word (hostile-CLI review of 2026-12-08).
  if (!o.G.empty())
    for (const auto& b : config.blocks)
      if (b.suite == Suite::kIsolated)
        notes.push_back(fmt::format("block {} is isolated: one burst after recovery, no gap (--G {} does not apply "
                                    "to it; its points have G = 0)", b.name, o.G));
  // The sweep's own min_stream_bytes rule is announced where it overrides a value the user gave.
  if (o.num_bursts || o.warmup_bursts || show_sweep_rules)
    for (auto& line : bench::describe_adjustments(config, points)) notes.push_back(std::move(line));
  return notes;
}

void print_blocks(const bench::SweepConfig& config, std::FILE* out) {
  const auto points = bench::expand(config);
  fmt::print(out, "{:<16} {:<14} {:<16} {:<18} {:<28} {:>6}\n", "block", "suite", "K", "B", "G", "points");
  for (const auto& b : config.blocks) {
    const auto n = std::count_if(points.begin(), points.end(), [&](const auto& p) { return p.block == b.name; });
    fmt::print(out, "{:<16} {:<14} {:<16} {:<18} {:<28} {:>6}\n", b.name, suite_name(b.suite), b.K, b.B,
               b.suite == Suite::kIsolated ? "-" : b.G, n);
  }
  fmt::print(out, "{} points in all (a spec two blocks share is measured once, under the first)\n", points.size());
}

std::vector<std::string> check_fittable(const std::vector<bench::ExpandedPoint>& points,
                                        double min_zero_gap_volume_bytes) {
  bool zero_gap = false, gap = false, isolated = false;
  for (const auto& p : points) {
    const auto& s = p.spec;
    if (s.suite == Suite::kPeriodic && s.gap_s == 0 && static_cast<double>(s.volume_bytes()) >= min_zero_gap_volume_bytes)
      zero_gap = true;
    if (s.suite == Suite::kPeriodic && s.gap_s > 0) gap = true;
    if (s.suite == Suite::kIsolated) isolated = true;
  }
  std::vector<std::string> missing;
  if (!zero_gap) missing.push_back("zero-gap periodic points (G = 0) for R");
  if (!gap && !isolated) missing.push_back("periodic points with G > 0 (a gap sweep) or isolated points for T_iss^0");
  if (!missing.empty())
    throw input_error("sweep", fmt::format("this sweep cannot be fitted; it lacks {} (see --list and --dry-run; "
                                           "to measure without a fit, use xstage-bench)", fmt::join(missing, " and ")));
  if (!isolated) return {"no isolated points: Q(K) will not be measured"};
  return {};
}

void print_dry_run(const std::vector<bench::ExpandedPoint>& points, std::FILE* out) {
  double bytes = 0, bursts = 0;
  const auto row = [&](auto... cells) {
    fmt::print(out, "{:<16} {:<36} {:>5} {:>10} {:>11} {:>6} {:>6} {:>6} {:>5} {:>7} {:>8} {:>7} {:>10}\n", cells...);
  };
  row("block", "id", "K", "B", "G", "bursts", "warmup", "reps", "width", "threads", "producer", "address",
      "completion");
  for (const auto& p : points) {
    const auto& s = p.spec;
    row(p.block, point_id(s), s.num_producers, format_bytes(static_cast<double>(s.bytes_per_producer)),
        format_seconds(s.gap_s), s.num_bursts, s.warmup_bursts, s.repetitions, s.store_width_bytes,
        s.threads_per_producer, producer_kind_name(s.producer_kind), address_mode_name(s.address_mode),
        s.completion ? "yes" : "no");
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

}  // namespace xs::remote_store
