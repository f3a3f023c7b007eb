// xstage bench layer: sweep config parsing, defaults and expansion (see sweep.hpp).
#include "xs/bench/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <set>

#include "xs/common/axes.hpp"
#include "xs/common/error.hpp"
#include "xs/common/units.hpp"
#include "xs/report/result_file.hpp"

namespace xs::bench {
namespace {

// The target's form, checked before any backend starts (a GPU-less machine would otherwise report "no GPU"
// for a typo): local, host, sim, peer:N or nccl:N with N a GPU index. Whether it exists is the backend's call.
void validate_target_text(const std::string& target) {
  static const char* kForms = "use local, host, peer:N or nccl:N (N a GPU index; sim on the simulator)";
  if (target == "local" || target == "host" || target == "sim") return;
  for (const char* prefix : {"peer:", "nccl:"}) {
    const std::string p = prefix;
    if (target.rfind(p, 0) != 0) continue;
    const std::string digits = target.substr(p.size());
    const bool is_index = !digits.empty() && digits.size() <= 4 &&
                          digits.find_first_not_of("0123456789") == std::string::npos;
    if (!is_index || std::stoi(digits) > 1023)
      throw input_error("target", fmt::format("'{}': GPU index out of range or not a number; {}", target, kForms));
    return;
  }
  throw input_error("target", fmt::format("'{}' is not a target; {}", target, kForms));
}

const std::set<std::string> kDefaultKeys = {"num_bursts", "warmup_bursts", "repetitions", "store_width_bytes",
                                            "threads_per_producer", "producer", "address_mode", "completion",
                                            "min_stream_bytes", "scatter_seed", "mainloop", "working_set",
                                            "tiles_per_cta", "warmup_tiles", "k_elems", "injection",
                                            "tiles_per_burst"};
const std::set<std::string> kBlockKeys = {"name", "suite", "K", "B", "G"};

void check_keys(const nlohmann::json& j, const std::set<std::string>& allowed, const std::string& path) {
  if (!j.is_object()) throw input_error(path, "expected a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (!allowed.count(key)) {
      std::string names;
      for (const auto& a : allowed) names += (names.empty() ? "" : ", ") + a;
      throw input_error(path + "." + key, fmt::format("unknown key; accepted keys: {}", names));
    }
  }
}

std::string string_field(const nlohmann::json& j, const std::string& key, const std::string& path) {
  if (!j.contains(key)) throw input_error(path + "." + key, "missing field");
  if (j.at(key).is_string()) return j.at(key).get<std::string>();
  if (j.at(key).is_number()) return j.at(key).dump();  // "K": 132 is fine
  throw input_error(path + "." + key, "expected a string in the range grammar (e.g. \"1KiB:512KiB:x2\")");
}

int int_field(const nlohmann::json& j, const std::string& key, const std::string& path) {
  const auto& v = j.at(key);
  if (!v.is_number_integer()) throw input_error(path + "." + key, "expected an integer");
  // Range-checked before narrowing: 4294967301 once wrapped to 5, and the later check named a value never written.
  const bool fits = v.is_number_unsigned() ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT32_MAX)
                                           : v.get<std::int64_t>() >= INT32_MIN && v.get<std::int64_t>() <= INT32_MAX;
  if (!fits) throw input_error(path + "." + key, fmt::format("{} is out of range for an integer knob (at most {})",
                                                              v.dump(), INT32_MAX));
  return v.get<int>();
}

// Applies default/override keys to a spec.
void apply(PointSpec& spec, const nlohmann::json& values, const std::string& path) {
  for (const auto& [key, value] : values.items()) {
    const std::string p = path + "." + key;
    if (key == "num_bursts") spec.num_bursts = int_field(values, key, path);
    else if (key == "warmup_bursts") spec.warmup_bursts = int_field(values, key, path);
    else if (key == "repetitions") spec.repetitions = int_field(values, key, path);
    else if (key == "store_width_bytes") spec.store_width_bytes = int_field(values, key, path);
    else if (key == "threads_per_producer") spec.threads_per_producer = int_field(values, key, path);
    else if (key == "producer") {
      if (!value.is_string()) throw input_error(p, "expected \"cta\" or \"warp\"");
      spec.producer_kind = parse_producer_kind(value.get<std::string>());
    } else if (key == "address_mode") {
      if (!value.is_string()) throw input_error(p, "expected \"fresh\", \"same\" or \"scattered\"");
      spec.address_mode = parse_address_mode(value.get<std::string>());
    } else if (key == "scatter_seed") {
      if (!value.is_number_unsigned() || value.get<std::uint64_t>() > 0xffffffffULL)
        throw input_error(p, "expected an integer seed in [0, 2^32)");
      spec.scatter_seed = value.get<std::uint32_t>();
    } else if (key == "completion") {
      if (!value.is_boolean()) throw input_error(p, "expected true or false");
      spec.completion = value.get<bool>();
    } else if (key == "mainloop") {
      if (!value.is_string()) throw input_error(p, "expected \"wgmma\" or \"load_stream\"");
      spec.loaded.mainloop = parse_mainloop(value.get<std::string>());
    } else if (key == "working_set") {
      if (!value.is_string()) throw input_error(p, "expected \"l2\" or \"hbm\"");
      spec.loaded.working_set = parse_working_set(value.get<std::string>());
    } else if (key == "tiles_per_cta") {
      spec.loaded.tiles_per_cta = int_field(values, key, path);
    } else if (key == "warmup_tiles") {
      spec.loaded.warmup_tiles = int_field(values, key, path);
    } else if (key == "k_elems") {
      spec.loaded.k_elems = int_field(values, key, path);
    } else if (key == "injection") {
      if (!value.is_string()) throw input_error(p, "expected \"paced\" or \"epilogue\"");
      spec.loaded.injection = parse_injection(value.get<std::string>());
    } else if (key == "tiles_per_burst") {
      spec.loaded.tiles_per_burst = int_field(values, key, path);
    }
  }
}

// "min_stream_bytes": each repetition of a periodic point streams at least this many bytes after its
// warm-up, so the path reaches its steady state (outstanding volume at Q) whatever the burst volume:
// filling Q takes about Q / (V - R T_iss^0) bursts, many for small V.
std::uint64_t min_stream_bytes(const nlohmann::json& defaults, const nlohmann::json& overrides,
                               const std::string& path) {
  const nlohmann::json* v = overrides.contains("min_stream_bytes") ? &overrides.at("min_stream_bytes")
                            : defaults.contains("min_stream_bytes") ? &defaults.at("min_stream_bytes")
                                                                    : nullptr;
  if (!v) return 0;
  if (v->is_string()) return parse_bytes(v->get<std::string>(), path + ".min_stream_bytes");
  if (v->is_number_unsigned() || v->is_number_integer()) return v->get<std::uint64_t>();
  throw input_error(path + ".min_stream_bytes", "expected a size (e.g. \"64MiB\") or a byte count");
}

// Injection epilogue: a CTA stores once per tiles_per_burst tiles, so its burst count follows from the tiles
// (validate_loaded checks it); other suites and modes are left as they are.
void derive_epilogue_bursts(PointSpec& spec) {
  // An out-of-range tiles_per_burst is left to validate_loaded, which names it.
  if (spec.suite != Suite::kLoaded || spec.loaded.injection != Injection::kEpilogue || spec.loaded.tiles_per_burst < 1 ||
      spec.loaded.tiles_per_burst > spec.loaded.tiles_per_cta)
    return;
  spec.num_bursts = epilogue_bursts(spec.loaded);
  spec.warmup_bursts = epilogue_warmup_bursts(spec.loaded);
}

void stretch_bursts(PointSpec& spec, std::uint64_t stream_bytes) {
  // A loaded point's bursts last as long as its mainloop: num_bursts is only their cap.
  if (stream_bytes == 0 || spec.suite == Suite::kIsolated || spec.suite == Suite::kLoaded) return;
  const std::uint64_t volume = spec.volume_bytes();
  const int needed = static_cast<int>(std::min<std::uint64_t>((stream_bytes + volume - 1) / volume, 4096));
  const int steady = spec.num_bursts - spec.warmup_bursts;
  if (needed <= steady) return;
  spec.warmup_bursts = std::max(spec.warmup_bursts, needed / 3);  // a third more to fill the path first
  spec.num_bursts = spec.warmup_bursts + needed;
}

// The "nice" value (1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^n ns) at or just above raw_ns, so that a rate guess
// measured afresh each run (the copy-engine bandwidth, ~0.1% noise) gives the same points run after run, which
// is what lets xstage-gate match them.
double nice_step_ns(double raw_ns) {
  constexpr double kMantissas[] = {1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
  const double decade = std::pow(10.0, std::floor(std::log10(std::max(raw_ns, 1.0))));
  for (double m : kMantissas)
    if (m * decade >= raw_ns * 0.999) return m * decade;
  return 10 * decade;
}

}  // namespace

void validate_spec(const PointSpec& spec) {
  if (spec.num_producers < 1 || spec.num_producers > kMaxProducers)
    throw input_error("K", fmt::format("K={} must be in [1, {}]", spec.num_producers, kMaxProducers));
  validate_target_text(spec.target);
  if (spec.store_width_bytes != 4 && spec.store_width_bytes != 8 && spec.store_width_bytes != 16)
    throw input_error("store_width_bytes", fmt::format("{} is not a store width; use 4, 8 or 16",
                                                       spec.store_width_bytes));
  if (spec.bytes_per_producer == 0 || spec.bytes_per_producer % 16 != 0)
    throw input_error("B", fmt::format("B={} bytes must be > 0 and a multiple of 16", spec.bytes_per_producer));
  if (spec.bytes_per_producer % static_cast<std::uint64_t>(spec.store_width_bytes) != 0)
    throw input_error("B", fmt::format("B={} is not a multiple of the store width {}", spec.bytes_per_producer,
                                       spec.store_width_bytes));
  if (spec.address_mode == AddressMode::kScattered && spec.bytes_per_producer % kScatterRowBytes != 0)
    throw input_error("B", fmt::format("B={} bytes: address_mode scattered stores {}-byte rows, so B must be a "
                                       "multiple of {}", spec.bytes_per_producer, kScatterRowBytes, kScatterRowBytes));
  // Checked by division, so the product itself never wraps (B = 2^60 at K = 132 was accepted as a small V).
  if (spec.bytes_per_producer > kMaxBurstBytes / static_cast<std::uint64_t>(spec.num_producers))
    throw input_error("B", fmt::format("V = K x B = {} x {} bytes is over the limit of {} (1 TiB) per burst; lower B "
                                       "or K (e.g. --B 32KiB)", spec.num_producers, spec.bytes_per_producer,
                                       kMaxBurstBytes));
  if (!(spec.gap_s >= 0) || !std::isfinite(spec.gap_s))
    throw input_error("G", fmt::format("G={} s must be >= 0", spec.gap_s));
  if (spec.gap_s > kMaxGapS)
    throw input_error("G", fmt::format("G={} s is over the {} s limit per burst (gaps are ns to us; e.g. 2us)",
                                       spec.gap_s, kMaxGapS));
  if (spec.repetitions < 1 || spec.repetitions > kMaxRepetitions)
    throw input_error("repetitions", fmt::format("{} must be in [1, {}]", spec.repetitions, kMaxRepetitions));
  if (spec.num_bursts > kMaxBursts)
    throw input_error("num_bursts", fmt::format("{} must be <= {} (--bursts)", spec.num_bursts, kMaxBursts));
  const auto producer_bursts = static_cast<std::uint64_t>(spec.num_producers) * static_cast<std::uint64_t>(
                                   std::max(spec.num_bursts, 0));
  if (producer_bursts > kMaxProducerBursts)
    throw input_error("num_bursts", fmt::format("K x num_bursts = {} x {} = {} is over the limit of {} clock records "
                                                "per repetition; lower --bursts or K (min_stream_bytes may have "
                                                "raised num_bursts: --min-stream 0 keeps it as given)",
                                                spec.num_producers, spec.num_bursts, producer_bursts,
                                                kMaxProducerBursts));
  if (spec.suite == Suite::kIsolated) {
    if (spec.num_bursts != 1) throw input_error("num_bursts", "an isolated point has exactly one burst");
  } else {
    if (spec.warmup_bursts < 0) throw input_error("warmup_bursts", "must be >= 0");
    if (spec.num_bursts <= spec.warmup_bursts + 1)
      throw input_error("num_bursts", fmt::format("num_bursts={} must exceed warmup_bursts={} by at least 2 (--bursts, --warmup)",
                                                  spec.num_bursts, spec.warmup_bursts));
  }
  if (spec.threads_per_producer < 32 || spec.threads_per_producer > 1024 || spec.threads_per_producer % 32 != 0)
    throw input_error("threads_per_producer", "must be a multiple of 32 in [32, 1024]");
  if (spec.producer_kind == ProducerKind::kWarp && spec.threads_per_producer != 32)
    throw input_error("threads_per_producer", "a warp producer has exactly 32 threads");
  if (spec.suite == Suite::kLoaded) validate_loaded(spec);
}

void validate_loaded(const PointSpec& spec) {
  const LoadedKnobs& k = spec.loaded;
  if (spec.store_width_bytes != 16)
    throw input_error("store_width_bytes", "the loaded suite stores 16 B per instruction (st.global.v4); use 16");
  if (spec.producer_kind != ProducerKind::kCta)
    throw input_error("producer", "the loaded suite's storers are warps of each mainloop CTA; use producer cta");
  if (spec.completion) throw input_error("completion", "the loaded suite always fences once after its last burst");
  if (k.k_elems < 64 || k.k_elems > 16384 || k.k_elems % 64 != 0)
    throw input_error("k_elems", fmt::format("k_elems={} must be a multiple of 64 in [64, 16384]", k.k_elems));
  if (k.tiles_per_cta < 1 || k.tiles_per_cta > 65536)
    throw input_error("tiles_per_cta", fmt::format("tiles_per_cta={} must be in [1, 65536]", k.tiles_per_cta));
  if (k.warmup_tiles < 0 || k.warmup_tiles >= k.tiles_per_cta)
    throw input_error("warmup_tiles", fmt::format("warmup_tiles={} must be in [0, tiles_per_cta={})", k.warmup_tiles,
                                                  k.tiles_per_cta));
  if (k.injection == Injection::kPaced) {
    if (k.tiles_per_burst != 1)
      throw input_error("tiles_per_burst", "only injection \"epilogue\" has tiles_per_burst (injection \"paced\" "
                                           "bursts every G); accepted injections: paced, epilogue");
    if (spec.threads_per_producer > static_cast<int>(kMaxLoadedStorerThreads))
      throw input_error("threads_per_producer", fmt::format("the loaded suite has at most {} storer threads per CTA",
                                                            kMaxLoadedStorerThreads));
    return;
  }
  // Injection epilogue: the math warps store after their tiles, closed loop; nothing is paced.
  if (spec.gap_s != 0)
    throw input_error("G", fmt::format("G={} s: injection \"epilogue\" stores after each tile, unpaced; G must be 0 "
                                       "(injection \"paced\" bursts every G)", spec.gap_s));
  if (k.tiles_per_burst < 1 || k.tiles_per_burst > k.tiles_per_cta)
    throw input_error("tiles_per_burst", fmt::format("tiles_per_burst={} must be in [1, tiles_per_cta={}]",
                                                     k.tiles_per_burst, k.tiles_per_cta));
  if (spec.threads_per_producer != static_cast<int>(kLoadedMathThreads))
    throw input_error("threads_per_producer", fmt::format("threads_per_producer={}: in injection \"epilogue\" the "
                                                          "CTA's {} math threads store; use {}",
                                                          spec.threads_per_producer, kLoadedMathThreads,
                                                          kLoadedMathThreads));
  if (spec.num_bursts != epilogue_bursts(k) || spec.warmup_bursts != epilogue_warmup_bursts(k))
    throw input_error("num_bursts", fmt::format("injection \"epilogue\": num_bursts={}, warmup_bursts={} must be "
                                                "tiles_per_cta / tiles_per_burst = {} and warmup_tiles / tiles_per_burst "
                                                "= {} (a sweep derives them)", spec.num_bursts, spec.warmup_bursts,
                                                epilogue_bursts(k), epilogue_warmup_bursts(k)));
}

SweepConfig sweep_config_from_json(const nlohmann::json& j) {
  check_keys(j, {"target", "defaults", "blocks", "comment"}, "config");
  SweepConfig config;
  if (j.contains("target")) {
    if (!j.at("target").is_string()) throw input_error("config.target", "expected a string (local, host, peer:N)");
    config.target = j.at("target").get<std::string>();
  }
  if (j.contains("defaults")) {
    check_keys(j.at("defaults"), kDefaultKeys, "config.defaults");
    config.defaults = j.at("defaults");
  }
  if (!j.contains("blocks") || !j.at("blocks").is_array() || j.at("blocks").empty())
    throw input_error("config.blocks", "expected a non-empty array of sweep blocks");
  for (size_t i = 0; i < j.at("blocks").size(); ++i) {
    const auto& b = j.at("blocks")[i];
    const std::string path = fmt::format("config.blocks[{}]", i);
    std::set<std::string> allowed = kBlockKeys;
    allowed.insert(kDefaultKeys.begin(), kDefaultKeys.end());
    check_keys(b, allowed, path);
    SweepBlock block;
    block.name = b.contains("name") ? string_field(b, "name", path) : fmt::format("block{}", i);
    for (const auto& earlier : config.blocks)
      if (earlier.name == block.name)  // --only and the notes name blocks
        throw input_error(path + ".name", fmt::format("block name '{}' is used twice", block.name));
    block.suite = parse_suite(string_field(b, "suite", path));
    block.K = string_field(b, "K", path);
    block.B = string_field(b, "B", path);
    block.G = b.contains("G") ? string_field(b, "G", path) : "0";
    for (const auto& key : kDefaultKeys)
      if (b.contains(key)) block.overrides[key] = b.at(key);
    min_stream_bytes(config.defaults, block.overrides, path);  // type-check now
    config.blocks.push_back(block);
  }
  expand(config);  // validates every point now, so a bad config fails before anything runs
  return config;
}

nlohmann::json to_json(const SweepConfig& config) {
  nlohmann::json blocks = nlohmann::json::array();
  for (const auto& b : config.blocks) {
    nlohmann::json jb = {{"name", b.name}, {"suite", suite_name(b.suite)}, {"K", b.K}, {"B", b.B}, {"G", b.G}};
    for (const auto& [k, v] : b.overrides.items()) jb[k] = v;
    blocks.push_back(jb);
  }
  return {{"target", config.target}, {"defaults", config.defaults}, {"blocks", blocks}};
}

SweepConfig load_sweep_config(const std::string& path) {
  // The strict reader: malformed JSON, duplicate keys and numbers beyond the double range are input errors.
  const nlohmann::json j = report::read_json_file(path);
  try {
    return sweep_config_from_json(j);
  } catch (const Error& e) {
    throw Error(e.code(), e.domain(), e.field(), path + ": " + e.what());
  }
}

std::vector<ExpandedPoint> expand(const SweepConfig& config) {
  std::vector<ExpandedPoint> points;
  std::set<std::string> seen;  // a spec two blocks share is measured once, under the first block
  std::uint64_t total = 0;
  for (size_t i = 0; i < config.blocks.size(); ++i) {
    const auto& block = config.blocks[i];
    const std::string path = fmt::format("config.blocks[{}]", i);
    PointSpec base;
    base.suite = block.suite;
    base.target = config.target;
    apply(base, config.defaults, "config.defaults");
    apply(base, block.overrides, path);
    if (block.suite == Suite::kIsolated) {
      base.num_bursts = 1;
      base.warmup_bursts = 0;
    }
    derive_epilogue_bursts(base);
    const std::uint64_t stream_bytes = min_stream_bytes(config.defaults, block.overrides, path);
    // Read in this order, so that a bad K is named before a bad B or G.
    const IntegerAxis ks = integer_axis(block.K, path + ".K");
    const SizeAxis bs = size_axis(block.B, path + ".B");
    // An isolated burst has no gap; its block's G is ignored.
    const TimeAxis gs =
        block.suite == Suite::kIsolated ? TimeAxis(path + ".G", {0.0}) : time_axis(block.G, path + ".G");
    // The local-memory control always writes device HBM (section 3.1).
    if (block.suite == Suite::kLocalControl) base.target = "local";
    // The block's points: K slowest, G fastest (common/axes.hpp). Each range holds at most 100,000 values, so the
    // product fits in 64 bits; check it before allocating a single point.
    const auto space = product(ks, bs, gs);
    total += space.size();
    if (total > kMaxSweepPoints)
      throw input_error(path, fmt::format("the sweep expands to more than {} points (K x B x G over all blocks); "
                                          "narrow the ranges or split the run", kMaxSweepPoints));
    for (const auto& [k, b, g] : space) {
      PointSpec spec = base;
      if (k < 1 || k > kMaxProducers)
        throw input_error(path + ".K", fmt::format("K={} must be in [1, {}]", k, kMaxProducers));
      spec.num_producers = static_cast<int>(k);
      spec.bytes_per_producer = b;
      spec.gap_s = g;
      const int requested_bursts = spec.num_bursts, requested_warmup = spec.warmup_bursts;
      stretch_bursts(spec, stream_bytes);
      try {
        validate_spec(spec);
      } catch (const Error& e) {  // name the block: a flag applies to every block, each with its own values
        throw Error(e.code(), e.domain(), path + "." + e.field(),
                    fmt::format("{} (block {}).{}", path, block.name, e.what()));
      }
      if (seen.insert(point_key(spec)).second) points.push_back({block.name, spec, requested_bursts, requested_warmup});
    }
  }
  return points;
}

nlohmann::json loaded_block_overrides() {
  return {{"num_bursts", 4096}, {"warmup_bursts", 2}, {"threads_per_producer", 128}, {"min_stream_bytes", 0}};
}

void append_loaded_blocks(SweepConfig& c, double drain_rate_guess_bps) {
  // Per-CTA burst period for an offered rate of about rho x R_guess: K B / (rho R_guess) on the nice grid (the
  // offered rate K B / G of each point is then within 25% of rho R_guess; the point records G exactly).
  auto periods = [&](int k, std::uint64_t b, std::initializer_list<double> rhos, bool unpaced) {
    std::string list = unpaced ? "0" : "";
    for (double rho : rhos) {
      const double ns = nice_step_ns(1e9 * static_cast<double>(k) * static_cast<double>(b) / (rho * drain_rate_guess_bps));
      list += fmt::format("{}{}ns", list.empty() ? "" : ",", ns);
    }
    return list;
  };
  const auto rhos = {0.25, 0.5, 1.0, 2.0};
  auto knobs = [](const char* mainloop, const char* working_set, const char* address_mode) {
    nlohmann::json j = loaded_block_overrides();
    j.update({{"mainloop", mainloop}, {"working_set", working_set}, {"address_mode", address_mode}});
    return j;
  };
  constexpr std::uint64_t kB = 8192;
  for (int k : {132, 66, 33})
    c.blocks.push_back({fmt::format("loaded_k{}", k), Suite::kLoaded, std::to_string(k), "8KiB",
                        periods(k, kB, rhos, true), knobs("wgmma", "l2", "fresh")});
  c.blocks.push_back({"loaded_hbm_k132", Suite::kLoaded, "132", "8KiB", periods(132, kB, rhos, true),
                      knobs("wgmma", "hbm", "fresh")});
  c.blocks.push_back({"loaded_rows_k132", Suite::kLoaded, "132", "8KiB", periods(132, kB, rhos, true),
                      knobs("wgmma", "l2", "scattered")});
  c.blocks.push_back({"loaded_stream_k132", Suite::kLoaded, "132", "8KiB", periods(132, kB, rhos, true),
                      knobs("load_stream", "hbm", "fresh")});
  for (std::uint64_t b : {std::uint64_t{2048}, std::uint64_t{65536}})
    c.blocks.push_back({fmt::format("loaded_b{}KiB_k132", b / 1024), Suite::kLoaded, "132", std::to_string(b),
                        periods(132, b, {0.5, 2.0}, false), knobs("wgmma", "l2", "fresh")});
  append_loaded_epilogue_blocks(c);
}

nlohmann::json loaded_epilogue_overrides(const char* working_set, const char* address_mode, int tiles_per_cta) {
  // num_bursts / warmup_bursts are derived from the tiles (derive_epilogue_bursts); the values here only
  // have to pass the generic checks before that.
  return {{"injection", "epilogue"}, {"tiles_per_burst", 1}, {"mainloop", "wgmma"}, {"working_set", working_set},
          {"address_mode", address_mode}, {"threads_per_producer", kLoadedMathThreads}, {"min_stream_bytes", 0},
          {"tiles_per_cta", tiles_per_cta}, {"warmup_tiles", tiles_per_cta / 16}};
}

void append_loaded_epilogue_blocks(SweepConfig& c) {
  // Injection epilogue (closed loop, the applications' pattern): B = V bytes per CTA after every tile, G = 0.
  // tiles_per_cta keeps each loaded launch short where the path is drain-bound: K B tiles / R at R ~ 50 GB/s
  // (the H200's host path) is, at K 132, 256 tiles: 2 KiB 1.4 ms, 8 KiB 5.5 ms; 64 tiles: 32 KiB 5.5 ms,
  // 128 KiB 22 ms (<= 25 ms each; K 66 and 33 half and a quarter). A point runs 6 loaded launches (warm-up
  // + 5 repetitions) and as many ~1 ms baselines: 18 points, about 0.9 s of drain-bound launches in all,
  // plus each point's ring verification (~0.2-0.5 s on the host path): well under 60 s.
  for (int k : {132, 66, 33}) {
    c.blocks.push_back({fmt::format("loaded_epilogue_k{}", k), Suite::kLoaded, std::to_string(k), "2KiB,8KiB", "0",
                        loaded_epilogue_overrides("l2", "fresh", 256)});
    c.blocks.push_back({fmt::format("loaded_epilogue_k{}_large", k), Suite::kLoaded, std::to_string(k),
                        "32KiB,128KiB", "0", loaded_epilogue_overrides("l2", "fresh", 64)});
  }
  c.blocks.push_back({"loaded_epilogue_rows_k132", Suite::kLoaded, "132", "2KiB,8KiB", "0",
                      loaded_epilogue_overrides("l2", "scattered", 256)});
  c.blocks.push_back({"loaded_epilogue_rows_k132_large", Suite::kLoaded, "132", "32KiB,128KiB", "0",
                      loaded_epilogue_overrides("l2", "scattered", 64)});
  c.blocks.push_back({"loaded_epilogue_hbm_k132", Suite::kLoaded, "132", "8KiB,32KiB", "0",
                      loaded_epilogue_overrides("hbm", "fresh", 64)});
}

SweepConfig default_calibration(const std::string& target, double drain_rate_guess_bps) {
  if (!(drain_rate_guess_bps > 0)) throw input_error("drain_rate_guess", "must be > 0");
  SweepConfig c;
  c.target = target;
  c.defaults = {{"num_bursts", 24}, {"warmup_bursts", 6}, {"repetitions", 5}, {"store_width_bytes", 16},
                {"threads_per_producer", 256}, {"producer", "cta"}, {"address_mode", "fresh"},
                {"min_stream_bytes", "64MiB"}};
  // Gap sweep range for aggregate volume V: 24 steps from 0 to about 3 V/R_guess. The step is rounded
  // to a "nice" value (1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^n ns) so that a guess measured afresh
  // each run (the copy-engine bandwidth, ~0.1% noise) gives the same points run after run, which is
  // what lets xstage-gate match them. For a fully fixed sweep, use --config or --rate-guess.
  auto gap_range = [&](int k, std::uint64_t b) {
    const double horizon_s = static_cast<double>(k) * static_cast<double>(b) / drain_rate_guess_bps;
    const double step_ns = nice_step_ns(3.0 * horizon_s / 24.0 * 1e9);
    return fmt::format("0:{}ns:+{}ns", step_ns * 24.0, step_ns);
  };
  // R: zero-gap periods over several K/B decompositions of similar volumes (Fig. 3d).
  const nlohmann::json none = nlohmann::json::object();
  c.blocks.push_back({"zero_gap", Suite::kPeriodic, "16,33,66,132", "16KiB:256KiB:x2", "0", none});
  // T_iss^0 plateau + validation of eqs. 2-3 (Fig. 3a/b), at three producer configurations. Their
  // volumes stay small enough that one aligned burst should not reach the capacity knee (then the
  // plateau is the backpressure-free floor, not T_iss^iso).
  c.blocks.push_back({"gap_sweep", Suite::kPeriodic, "132", "16KiB", gap_range(132, 16384), none});
  c.blocks.push_back({"gap_sweep_k66", Suite::kPeriodic, "66", "16KiB", gap_range(66, 16384), none});
  c.blocks.push_back({"gap_sweep_k33", Suite::kPeriodic, "33", "16KiB", gap_range(33, 16384), none});
  // Q(K): isolated bursts over V spanning the knee (Fig. 3c).
  c.blocks.push_back({"isolated", Suite::kIsolated, "16,33,66,132", "1KiB:2MiB:x2", "0", {{"repetitions", 7}}});
  // Local-memory control of the main gap sweep (same producers, widths, loop; HBM destination).
  c.blocks.push_back({"local_control", Suite::kLocalControl, "132", "16KiB", gap_range(132, 16384), {}});
  // R's convergence with stream length: zero-gap points at one (K, B) whose streams (num_bursts x V) are
  // 0.5 .. 8 x the H200's 60 MiB L2, which absorbs part of a short stream to host memory. Same K, B, G = 0,
  // different num_bursts: the fitter checks that V / T_period stops changing as the stream grows.
  constexpr double kL2Bytes = 60.0 * 1048576;
  constexpr double kStreamVolumeBytes = 132.0 * 16384;
  for (double multiple : {0.5, 1.0, 2.0, 4.0, 8.0}) {
    const long bursts = std::lround(multiple * kL2Bytes / kStreamVolumeBytes);
    c.blocks.push_back({fmt::format("stream_{}xL2", multiple), Suite::kPeriodic, "132", "16KiB", "0",
                        {{"num_bursts", bursts}, {"warmup_bursts", 6}, {"min_stream_bytes", 0}}});
  }
  append_loaded_blocks(c, drain_rate_guess_bps);
  // `{}` above is a JSON null: make every block's overrides an object, so CLI overrides can erase keys.
  for (auto& block : c.blocks)
    if (block.overrides.is_null()) block.overrides = nlohmann::json::object();
  expand(c);
  return c;
}

std::vector<std::string> describe_adjustments(const SweepConfig& config, const std::vector<ExpandedPoint>& points) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < config.blocks.size(); ++i) {
    const auto& block = config.blocks[i];
    std::size_t changed = 0, in_block = 0;
    int requested_bursts = 0, requested_warmup = 0;
    int min_bursts = kMaxBursts, max_bursts = 0, min_warmup = kMaxBursts, max_warmup = 0;
    for (const auto& p : points) {
      if (p.block != block.name) continue;
      ++in_block;
      if (p.spec.num_bursts == p.requested_num_bursts && p.spec.warmup_bursts == p.requested_warmup_bursts) continue;
      ++changed;
      requested_bursts = p.requested_num_bursts;
      requested_warmup = p.requested_warmup_bursts;
      min_bursts = std::min(min_bursts, p.spec.num_bursts);
      max_bursts = std::max(max_bursts, p.spec.num_bursts);
      min_warmup = std::min(min_warmup, p.spec.warmup_bursts);
      max_warmup = std::max(max_warmup, p.spec.warmup_bursts);
    }
    if (changed == 0) continue;
    const auto span = [](int lo, int hi) { return lo == hi ? std::to_string(lo) : fmt::format("{}..{}", lo, hi); };
    const auto stream = min_stream_bytes(config.defaults, block.overrides, "config");
    lines.push_back(fmt::format(
        "block {}: num_bursts {} -> {}, warmup_bursts {} -> {} on {} of {} points: min_stream_bytes {} (each "
        "repetition streams that much after warm-up; --min-stream 0 keeps the values as given)",
        block.name, requested_bursts, span(min_bursts, max_bursts), requested_warmup, span(min_warmup, max_warmup),
        changed, in_block, format_bytes(static_cast<double>(stream))));
  }
  return lines;
}

}  // namespace xs::bench
