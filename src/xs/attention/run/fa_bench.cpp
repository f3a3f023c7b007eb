// xstage attention layer: the fa_a2a sweep (see fa_bench.hpp): a thin adapter over the application-suite
// point loop (bench/app_bench.hpp), which owns the journal, --resume, signals and the result file.
#include "xs/attention/run/fa_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "xs/attention/point/fa_app_point.hpp"
#include "xs/attention/io/fa_report.hpp"
#include "xs/attention/run/fa_runner.hpp"
#include "xs/attention/model/fa_calibration.hpp"
#include "xs/bench/app_bench.hpp"
#include "xs/bench/rank_agree.hpp"
#include "xs/bench/runner.hpp"
#include "xs/bench/topology_record.hpp"
#include "xs/common/error.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/result_file.hpp"
#include "xs/backends/cuda/devices.hpp"
#include "xs/backends/gpu/gpu_backend.hpp"
#include "xs/backends/nccl/rank_windows.hpp"
#include "xs/backends/gpu/topology_probe.hpp"

namespace xs::attention {
namespace {
using nlohmann::json;

bool is_nccl(const std::string& t) { return t.rfind("nccl:", 0) == 0; }

// Refuses a remote target without peer access; returns meta.topology when a target is remote, else null.
json check_topology(const FaBenchOptions& o, bool several) {
  json topology;
  // Topology check (issue 14): the pairs the peer/nccl points store across, refused without peer access.
  // (Several ranks: an nccl target is the All-to-All across the ranks' windows, checked by NCCL itself.)
  std::vector<std::string> checked;
  for (const auto& target : o.targets)
    if (!(several && target.rfind("nccl:", 0) == 0)) checked.push_back(target);
  std::vector<bench::GpuPair> pairs;
  for (const auto& target : checked)
    for (const auto& p : bench::pairs_for_point(target, o.point.device, o.point.num_ranks))
      if (std::find(pairs.begin(), pairs.end(), p) == pairs.end()) pairs.push_back(p);
  const bool remote = std::any_of(checked.begin(), checked.end(),
                                  [](const std::string& t) { return bench::remote_target_of(t).has_value(); });
  if (remote) {
    const auto links = runtime::query_peer_links(pairs);
    for (const auto& target : checked)
      bench::check_peer_access(target, bench::pairs_for_point(target, o.point.device, o.point.num_ranks), links,
                               runtime::count_devices());
    std::vector<int> gpus = bench::gpus_of(pairs);
    if (gpus.empty()) gpus = {o.point.device};  // nccl:<device>: a one-rank communicator
    topology = runtime::measure_topology_record(gpus, pairs, links);
  }
  return topology;
}

// The receive window of the largest nccl point: P x its slice = M H d 2 bytes.
std::size_t nccl_window_bytes(const std::vector<FaA2aPointSpec>& specs) {
  std::size_t window_bytes = 0;
  for (const auto& s : specs)
    if (is_nccl(s.target))
      window_bytes = std::max(window_bytes, std::size_t{2} * static_cast<std::size_t>(s.seq_len) *
                                                static_cast<std::size_t>(s.num_heads) * static_cast<std::size_t>(s.head_dim));
  return window_bytes;
}

// The point loop's plan: one point per spec, the run's identity and output (describe_rank: the caller's).
bench::AppBenchPlan make_plan(const FaBenchOptions& o, const std::vector<FaA2aPointSpec>& specs, const Backend& backend,
                              bool several) {
  bench::AppBenchPlan plan;
  plan.suite = kFaSuiteId;
  for (const auto& s : specs) {
    json axes = fa_canonical_spec(s);
    if (several) axes.erase("device");  // each rank's own GPU: meta.ranks lists them
    plan.points.push_back({fa_point_id(s), s.target, axes,
                           fmt::format("M={} heads={} target={}", s.seq_len, s.num_heads, s.target)});
  }
  plan.run_identity = {{"model", o.model_path}};  // the journaled points carry that model's predictions
  plan.identity = bench::journal_header_for(backend, {});
  plan.output_path = o.out_path;
  plan.resume = o.resume;
  plan.resume_any_build = o.resume_any_build;
  plan.progress = o.progress;
  return plan;
}

// The result file's meta, config and extra sections (extra.fa_a2a: the legacy per-point objects).
bench::AppResultSections make_sections(const FaBenchOptions& o, const Backend& backend, const std::vector<json>& legacy,
                                       const json& topology, bool several, bool has_nccl_exchange) {
  bench::AppResultSections sections;
  sections.meta = report::make_meta(o.argv, "gpu", backend.describe());
  sections.config = {{"M", o.seq_lens}, {"targets", o.targets}, {"heads", o.num_heads}, {"P", o.point.num_ranks},
                     {"head_dim", o.point.head_dim}, {"device", o.point.device},
                     {"num_ctas", o.point.num_ctas}, {"repetitions", o.point.repetitions},
                     {"launches_per_graph", o.point.launches_per_graph}, {"verify", o.point.verify}};
  if (several) sections.config.erase("device");  // each rank's own GPU (meta.ranks)
  sections.extra["fa_a2a"] = legacy;
  if (!o.model_path.empty()) sections.extra["model_from"] = o.model_path;
  if (!topology.is_null()) sections.meta["topology"] = topology;
  if (several)
    sections.extra["multi_rank"] = {
        {"mode", has_nccl_exchange ? "nccl targets: an All-to-All across the ranks; local/host: independent senders"
                                   : "independent senders"},
        {"note", "local/host: each rank ran the one-GPU emulation of every point on its own GPU with the same inputs; "
                 "no data crossed ranks. nccl:N: every rank's fused epilogue stored each rank slice into that "
                 "rank's NCCL window (Serial and A2A-only by ncclAlltoAll into the same layout), every replay "
                 "started together on all ranks, and each rank checked the blocks it received from every sender "
                 "(attention/run/fa_runner.hpp FaExchange, backends/nccl/rank_windows.hpp, docs/multi-gpu.md)"}};
  return sections;
}

// Rank 0's console output: the whole result file (--json) or the table and the path written.
void print_result(const FaBenchOptions& o, const std::vector<json>& legacy) {
  if (o.json) {
    fmt::print("{}\n", report::read_json_file(o.out_path).dump(1));
  } else {
    print_fa_table(legacy, stdout);
    fmt::print("wrote {} ({} points)\n", o.out_path, legacy.size());
  }
}

}  // namespace

int run_fa_bench(const FaBenchOptions& o, bench::RankComm* comm_or_null) {
  bench::SingleRankComm single;
  bench::RankComm& comm = comm_or_null != nullptr ? *comm_or_null : single;
  const bool several = comm.size() > 1;
  std::optional<model::FaCalibration> calibration;  // frozen before any launch: the predictions' input
  std::string model_target;
  std::vector<FaA2aPointSpec> specs;
  std::unique_ptr<Backend> backend;
  json topology;  // meta.topology of a run with a peer/nccl target
  // Everything that can refuse the run, on every rank before any point: one rank's refusal ends every rank
  // with the same message (bench/rank_agree.hpp; with one rank its error propagates unchanged).
  bench::agree(comm, [&] {
    if (o.seq_lens.empty() || o.targets.empty()) throw input_error("--M/--target", "nothing to run");
    // Every output path before anything is measured: no device node, fifo or unwritable folder (exit 2).
    // Rank 0 alone writes, so only its paths matter.
    if (comm.rank() == 0) {
      report::check_output_path(o.out_path, "--out");
      report::check_output_path(report::journal_path_for(o.out_path), "the journal",
                                report::OutputKind::kJournal);
    }
    if (!o.model_path.empty()) {  // before any launch
      calibration = model::load_fa_calibration(report::read_text_file(o.model_path), o.model_path);
      model_target = calibration->target;
    }
    specs = fa_sweep_points(o.point, o.targets, o.num_heads, o.seq_lens);
    // The GPU backend names the device in the journal header and the result's meta. No usable GPU (exit 77)
    // stops here, before a journal exists: the points could not run on it either.
    if (const int num_gpus = runtime::count_devices(); o.point.device >= num_gpus)
      throw input_error("--device", fmt::format("GPU {} does not exist: this node has {} GPU{} (use 0..{})",
                                                o.point.device, num_gpus, num_gpus == 1 ? "" : "s", num_gpus - 1));
    backend = runtime::make_gpu_backend(o.point.device);
    topology = check_topology(o, several);
  });

  // Several ranks with an nccl target: one communicator and one receive window per rank for the whole run,
  // sized for the largest point (P x its slice = M H d 2 bytes), made collectively before the first point.
  std::unique_ptr<runtime::RankWindows> windows;
  std::shared_ptr<const FaExchange> nccl_exchange;
  if (several && std::any_of(specs.begin(), specs.end(), [&](const FaA2aPointSpec& s) { return is_nccl(s.target); })) {
    const std::size_t window_bytes = nccl_window_bytes(specs);
    bench::agree(comm, [&] { windows = runtime::RankWindows::create(comm, o.point.device, window_bytes); });
    nccl_exchange = fa_exchange_over(*windows, comm);
  }

  bench::AppBenchPlan plan = make_plan(o, specs, *backend, several);
  if (several) plan.describe_rank = [&] { return runtime::describe_rank_device(o.point.device); };
  const bench::AppBenchOutcome outcome = bench::run_app_points(
      plan, comm, [&](std::size_t i, const bench::AppPointSpec& spec, const bench::PointContext& ctx) {
        FaA2aPointSpec s = specs[i];
        s.seed = ctx.seed;  // the same inputs on every rank
        if (nccl_exchange && is_nccl(s.target)) s.exchange = nccl_exchange;
        const FaA2aPointResult r = run_fa_a2a_point(s);
        report::AppPoint point = fa_app_point(s, r, fa_point_json(s, r, calibration ? &*calibration : nullptr, model_target));
        point.axes = spec.axes;  // several ranks: without the rank's own device
        return point;
      });
  // Ranks other than 0 write and print nothing (write_app_result returns rank 0's code).
  if (!outcome.writes_output) return bench::write_app_result(plan, outcome, {});

  std::vector<json> legacy;  // extra.fa_a2a: the per-point objects scripts/plot_fa_a2a.py reads
  for (const auto& p : outcome.points) legacy.push_back(fa_legacy_json(p));
  bench::AppResultSections sections = make_sections(o, *backend, legacy, topology, several, nccl_exchange != nullptr);
  const int code = bench::write_app_result(plan, outcome, std::move(sections));
  if (outcome.interrupted) return code;
  print_result(o, legacy);
  return code;
}

}  // namespace xs::attention
