// xstage attention layer: the fa_a2a suite's flags, dry run and run (see suite.hpp). The run itself is
// attention/run/fa_bench.cpp, linked only where the CUDA part (xs_attention) is built.
#include "xs/attention/suite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "xs/kernels/attention/config.hpp"
#include "xs/attention/point/fa_app_point.hpp"
#include "xs/bench/app_bench.hpp"
#include "xs/bench/sweep.hpp"
#include "xs/bench/topology_record.hpp"
#include "xs/common/error.hpp"
#include "xs/common/range.hpp"
#if defined(XS_HAVE_ATTENTION_RUNNER)
#include "xs/attention/run/fa_bench.hpp"
#endif

namespace xs::attention {
namespace {

constexpr const char* kDefaultOutPath = "out/bench-fa_a2a.json";  // --out when not given

constexpr const char* kSuiteId = "fa_a2a";

struct FaFlags {
  std::string M = "8192,16384,32768,49152,65536";
  std::string heads = "8";
  int P = 8, ctas = 0, launches_per_graph = 5, head_dim = 128;
  FaKnobs knobs;  // --fa-*
  bool no_verify = false;
};

struct FaSweep {
  std::vector<long long> seq_lens, heads;
  std::vector<std::string> targets;
  FaA2aPointSpec prototype;            // every point but its M, heads and target
  std::vector<FaA2aPointSpec> points;  // fa_sweep_space's order (targets x heads x M), checked (fa_sweep_points)
};

// Ulysses over P ranks (bench/rank_layout.hpp), its errors naming the flag. --heads is per rank (after the
// pre-attention All-to-All), so the run's H = heads * P: P divides H by construction and the check that can
// fire is P dividing M, which validate_fa_point_spec makes first (naming --P).
void check_ulysses(long long heads_per_rank, int num_ranks, long long seq_len) {
  try {
    bench::validate_ulysses_partition(static_cast<int>(heads_per_rank * num_ranks), num_ranks,
                                      static_cast<int>(seq_len));
  } catch (const Error& e) {
    const std::string what = e.what(), prefix = e.field() + ": ";
    throw input_error("--" + e.field(), what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what);
  }
}

// The GPU a rank's points run on: --device with one rank (as before ranks existed), the rank's own GPU (its
// local rank) with several, where --device would be ambiguous.
int point_device(const bench::SuiteContext& c) {
  if (c.rank.world_size <= 1) return c.device;
  if (c.device != 0)
    throw input_error("--device", "with " + std::to_string(c.rank.world_size) + " ranks each rank drives its own "
                                  "GPU (its local rank); drop --device");
  return c.rank.device;
}

// The shared flags' checks and the sweep's axes, for the dry run and the run alike.
FaSweep expand(const FaFlags& f, const bench::SuiteContext& c) {
  if (c.backend == "sim")
    throw input_error("--backend", "fa_a2a has no simulator: it runs real FlashAttention and All-to-All "
                                   "kernels on a GPU (drop --backend sim; try remote_store.periodic with sim)");
  if (!c.table_flag.empty())
    throw input_error(c.table_flag, "not available for fa_a2a (its table is printed by the suite itself)");
  FaSweep s;
  s.seq_lens = parse_integer_range(f.M, "--M");
  s.heads = parse_integer_range(f.heads, "--heads");
  require_distinct(s.seq_lens, f.M, "--M");
  require_distinct(s.heads, f.heads, "--heads");
  s.targets = parse_name_list(c.target.empty() ? "local,host" : c.target, "--target");
  bench::check_target_names(s.targets);
  if (const std::uint64_t n = fa_sweep_space(s.targets, s.heads, s.seq_lens).size(); n > bench::kMaxSweepPoints)
    throw input_error("--M", fmt::format("--M x --heads x --target expand to {} points, over the cap of {}; narrow the "
                                         "ranges or split the run", n, bench::kMaxSweepPoints));
  // Every point's shape and flags before anything runs, the dry run included (exit 2 naming the flag).
  s.prototype.head_dim = f.head_dim;
  s.prototype.num_ranks = f.P;
  s.prototype.device = point_device(c);
  s.prototype.num_ctas = f.ctas;
  s.prototype.knobs = f.knobs;
  s.prototype.launches_per_graph = f.launches_per_graph;
  if (c.repetitions) s.prototype.repetitions = *c.repetitions;
  s.prototype.verify = !f.no_verify;
  s.points = fa_sweep_points(s.prototype, s.targets, s.heads, s.seq_lens);
  for (const auto& [h, m] : product(IntegerAxis("--heads", s.heads), IntegerAxis("--M", s.seq_lens)))
    check_ulysses(h, f.P, m);
  // Several ranks: P is the number of ranks (also checked by the point loop). nccl:N is the real All-to-All
  // through every rank's NCCL window (fa_runner.hpp FaExchange); peer:N still refused (peer access does not
  // cross processes, and one process's peer:N already is an All-to-All).
  bench::check_world_matches_p(c.rank.world_size, f.P, "--P");
  bench::check_targets_on_ranks(kSuiteId, s.targets, c.rank.world_size);
  return s;
}

int dry_run(const FaFlags& f, const bench::SuiteContext& c) {
  const FaSweep s = expand(f, c);
  // The outputs and the journal are refused as the run refuses them, before anything is printed.
  bench::check_app_outputs_for_dry_run(kSuiteId, c.out_path.empty() ? kDefaultOutPath : c.out_path, c.resume);
  for (const auto& p : s.points)
    fmt::print("fa_a2a M={} heads={} P={} target={} device={} d={}{}\n", p.seq_len, p.num_heads, p.num_ranks,
               p.target, c.rank.world_size > 1 ? std::string("per-rank") : std::to_string(c.device), p.head_dim,
               describe_fa_knobs(p.knobs));
  fmt::print("{} points\n", s.points.size());
  return 0;
}

int run(const FaFlags& f, const bench::SuiteContext& c) {
  const FaSweep s = expand(f, c);
#if defined(XS_HAVE_ATTENTION_RUNNER)
  FaBenchOptions o;
  o.seq_lens = s.seq_lens;
  o.targets = s.targets;
  o.num_heads = s.heads;
  o.point = s.prototype;
  o.resume = c.resume;
  o.resume_any_build = c.resume_any_build;
  o.progress = c.progress;
  o.json = c.json;
  o.model_path = c.model_path;
  o.out_path = c.out_path.empty() ? kDefaultOutPath : c.out_path;
  o.argv = c.argv;
  return run_fa_bench(o, c.comm);
#else
  (void)s;
  throw no_gpu_error("fa_a2a needs the CUDA build (nvcc was not found at configure time): not built");
#endif
}

}  // namespace

void register_suites(bench::SuiteRegistry& registry) {
  auto flags = std::make_shared<FaFlags>();
  bench::SuiteDefinition d;
  d.id = kSuiteId;
  d.description = "FlashAttention + Ulysses post-attention All-to-All: FA-only, A2A, serial, fused, completion-coupled";
  d.example = "--M 8192:65536:x2 --target local,host --model out/calibration-gpu-host.json";
  d.options_title = "Options of the fa_a2a suite (--target takes a list: local,host)";
  d.add_options = [flags](bench::OptionSink& sink) {
    sink.add_text("--M", flags->M, "Sequence lengths, range grammar (multiples of 128)");
    sink.add_text("--heads", flags->heads, "Heads per rank (after the pre-attention All-to-All), range grammar "
                                          "(e.g. 4,8,16)");
    sink.add_integer("--head-dim", flags->head_dim, "Head dim d (built: 64, 128)", 1, 1024);
    sink.add_integer("--P", flags->P, "Ulysses ranks the output is split over", 1, 1024);
    sink.add_integer("--ctas", flags->ctas, "Persistent CTAs (0: one per SM)", 0, 1 << 20);
    sink.add_text("--fa-schedule", flags->knobs.schedule,
                  "FlashAttention consumer schedule: baseline, pingpong, pingpong_full (src/xs/kernels/attention/config.hpp)");
    sink.add_text("--fa-tile-scheduler", flags->knobs.tile_scheduler,
                  "Which CTA computes which tile: dynamic (a global ticket counter: slow SMs take fewer tiles) or "
                  "static (CTA c: tiles c, c + grid, ...)");
    sink.add_text("--fa-store-cache", flags->knobs.store_cache,
                  "Cache operator of the output-tile stores, every variant: default (st.global) or streaming "
                  "(st.global.cs, evict-first in L2)");
    sink.add_integer("--fa-kv-cluster", flags->knobs.kv_cluster,
                     "CTAs per cluster sharing each K/V tile by TMA multicast, every variant: 1 (none) or 2 (the "
                     "two m-blocks of a head in step, half the K/V traffic from L2; baseline schedule, M a "
                     "multiple of 256)",
                     1, 2);
    sink.add_integer("--fa-heads-per-band", flags->knobs.heads_per_band,
                     "Tile order, every variant: tiles run in bands of this many heads, the head fastest inside a "
                     "band (co-running CTAs write contiguous Ulysses rows); 1 (default) = the m-block-fastest order; "
                     "0 = auto: the widest band whose K/V fits in 3/4 of L2 (measured slower on the H200); else a "
                     "divisor of --heads",
                     0, 1024);
    sink.add_integer("--fa-tail-splits", flags->knobs.tail_splits,
                     "Split tail, every variant: the last round of tiles (one per cluster of the grid) runs in this "
                     "many pieces over disjoint KV ranges, combined by the piece that finishes last (shorter idle "
                     "tail); 1 = off (every tile whole); must divide M / 128; baseline schedule",
                     1, kernels::attention::kMaxTailKvSplits);
    sink.add_integer("--launches-per-graph", flags->launches_per_graph, "Back-to-back launches per graph replay",
                     1, 100);
    sink.add_flag("--no-verify", flags->no_verify, "Skip the reference comparison (not recommended)");
  };
  d.dry_run = [flags](const bench::SuiteContext& c) { return dry_run(*flags, c); };
  d.run = [flags](const bench::SuiteContext& c) { return run(*flags, c); };
  d.default_out_path = [](const bench::SuiteContext&) { return std::string(kDefaultOutPath); };
  d.runs_on_ranks = true;  // local/host on every rank's own GPU; peer/nccl refused on several (expand)
  registry.add(std::move(d));
}

}  // namespace xs::attention
