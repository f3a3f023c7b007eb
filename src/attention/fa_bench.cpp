// xstage attention layer: the fa_a2a sweep (see fa_bench.hpp): a thin adapter over the application-suite
// point loop (bench/app_bench.hpp), which owns the journal, --resume, signals and the result file.
#include "attention/fa_bench.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "attention/fa_app_point.hpp"
#include "attention/fa_report.hpp"
#include "attention/fa_runner.hpp"
#include "bench/app_bench.hpp"
#include "bench/runner.hpp"
#include "common/error.hpp"
#include "report/file_io.hpp"
#include "report/result_file.hpp"
#include "runtime/devices.hpp"
#include "runtime/gpu_backend.hpp"

namespace xs::attention {
namespace {
using nlohmann::json;

std::vector<FaA2aPointSpec> expand(const FaBenchOptions& o) {
  std::vector<FaA2aPointSpec> specs;
  for (const auto& target : o.targets)
    for (long long heads : o.num_heads)
      for (long long m : o.seq_lens) {
        if (m <= 0 || m > (1 << 20)) throw input_error("--M", fmt::format("M={} out of range (1..1M)", m));
        if (heads <= 0 || heads > 1024) throw input_error("--heads", fmt::format("{} heads: accepted 1..1024", heads));
        FaA2aPointSpec s;
        s.device = o.device;
        s.head_dim = o.head_dim;
        s.seq_len = static_cast<int>(m);
        s.num_heads = static_cast<int>(heads);
        s.num_ranks = o.num_ranks;
        s.target = target;
        s.num_ctas = o.num_ctas;
        s.fa_schedule = o.fa_schedule;
        s.repetitions = o.repetitions;
        s.launches_per_graph = o.launches_per_graph;
        s.verify = o.verify;
        validate_fa_point_spec(s);
        specs.push_back(s);
      }
  return specs;
}

}  // namespace

int run_fa_bench(const FaBenchOptions& o) {
  if (o.seq_lens.empty() || o.targets.empty()) throw input_error("--M/--target", "nothing to run");
  // Every output path before anything is measured: no device node, fifo or unwritable folder (exit 2).
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
  const std::vector<FaA2aPointSpec> specs = expand(o);
  // The GPU backend names the device in the journal header and the result's meta. No usable GPU (exit 77)
  // stops here, before a journal exists: the points could not run on it either.
  if (const int num_gpus = runtime::count_devices(); o.device >= num_gpus)
    throw input_error("--device", fmt::format("GPU {} does not exist: this node has {} GPU{} (use 0..{})", o.device,
                                              num_gpus, num_gpus == 1 ? "" : "s", num_gpus - 1));
  const std::unique_ptr<Backend> backend = runtime::make_gpu_backend(o.device);

  bench::AppBenchPlan plan;
  plan.suite = kFaSuiteId;
  for (const auto& s : specs)
    plan.points.push_back({fa_point_id(s), s.target, fa_canonical_spec(s),
                           fmt::format("M={} heads={} target={}", s.seq_len, s.num_heads, s.target)});
  plan.run_identity = {{"model", o.model_path}};  // the journaled points carry that model's predictions
  plan.identity = bench::journal_header_for(*backend, {});
  plan.output_path = o.out_path;
  plan.resume = o.resume;
  plan.progress = o.progress;
  const bench::AppBenchOutcome outcome = bench::run_app_points(plan, [&](std::size_t i, const bench::AppPointSpec&) {
    const FaA2aPointResult r = run_fa_a2a_point(specs[i]);
    return fa_app_point(specs[i], r, fa_point_json(specs[i], r, platform, model_target));
  });

  std::vector<json> legacy;  // extra.fa_a2a: the per-point objects scripts/plot_fa_a2a.py reads
  for (const auto& p : outcome.points) legacy.push_back(fa_legacy_json(p));
  bench::AppResultSections sections;
  sections.meta = report::make_meta(o.argv, "gpu", backend->describe());
  sections.config = {{"M", o.seq_lens}, {"targets", o.targets}, {"heads", o.num_heads}, {"P", o.num_ranks},
                     {"head_dim", o.head_dim}, {"device", o.device},
                     {"num_ctas", o.num_ctas}, {"repetitions", o.repetitions},
                     {"launches_per_graph", o.launches_per_graph}, {"verify", o.verify}};
  sections.extra["fa_a2a"] = legacy;
  if (!o.model_path.empty()) sections.extra["model_from"] = o.model_path;
  const int code = bench::write_app_result(plan, outcome, std::move(sections));
  if (outcome.interrupted) return code;
  if (o.json) {
    fmt::print("{}\n", report::read_json_file(o.out_path).dump(1));
  } else {
    print_fa_table(legacy, stdout);
    fmt::print("wrote {} ({} points)\n", o.out_path, legacy.size());
  }
  return code;
}

}  // namespace xs::attention
