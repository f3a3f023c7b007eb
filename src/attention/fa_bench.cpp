// xstage attention layer: the fa_a2a sweep (see fa_bench.hpp).
#include "attention/fa_bench.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "attention/fa_report.hpp"
#include "attention/fa_runner.hpp"
#include "common/error.hpp"
#include "report/file_io.hpp"
#include "report/result_file.hpp"
#include "runtime/gpu_backend.hpp"

namespace xs::attention {
namespace {

std::string key_of(const FaA2aPointSpec& s) {
  return fmt::format("{}|{}|{}|{}|{}|{}", s.seq_len, s.num_heads, s.num_ranks, s.target, s.num_ctas,
                     s.launches_per_graph);
}
std::string key_of(const nlohmann::json& spec) {
  return fmt::format("{}|{}|{}|{}|{}|{}", spec["M"].get<int>(), spec["heads"].get<int>(), spec["P"].get<int>(),
                     spec["target"].get<std::string>(), spec["num_ctas"].get<int>(),
                     spec["launches_per_graph"].get<int>());
}

// Appends one JSON line and makes it durable before the next point starts.
void journal_append(std::FILE* f, const nlohmann::json& j) {
  const std::string line = j.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), f) != line.size() || std::fflush(f) != 0 || fsync(fileno(f)) != 0)
    throw Error(ExitCode::kBadInput, "io", "journal", "cannot append to the fa_a2a journal");
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
    const nlohmann::json file = report::read_json_file(o.model_path);
    if (file.contains("config") && file["config"].is_object() && file["config"].value("target", "") != "")
      model_target = file["config"]["target"].get<std::string>();
  }
  std::vector<FaA2aPointSpec> specs;
  for (const auto& target : o.targets)
    for (long long heads : o.num_heads)
    for (long long m : o.seq_lens) {
      if (m <= 0 || m > (1 << 20)) throw input_error("--M", fmt::format("M={} out of range (1..1M)", m));
      if (heads <= 0 || heads > 1024) throw input_error("--heads", fmt::format("{} heads: accepted 1..1024", heads));
      FaA2aPointSpec s;
      s.seq_len = static_cast<int>(m);
      s.num_heads = static_cast<int>(heads);
      s.num_ranks = o.num_ranks;
      s.target = target;
      s.num_ctas = o.num_ctas;
      s.repetitions = o.repetitions;
      s.launches_per_graph = o.launches_per_graph;
      s.verify = o.verify;
      specs.push_back(s);
    }
  const std::string journal_path = report::journal_path_for(o.out_path);
  std::vector<nlohmann::json> done;
  std::set<std::string> done_keys;
  if (o.resume) {
    std::ifstream in(journal_path);
    if (!in) throw input_error("--resume", fmt::format("no journal '{}' to resume from", journal_path));
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      try {
        auto j = nlohmann::json::parse(line);
        done_keys.insert(key_of(j.at("spec")));
        done.push_back(std::move(j));
      } catch (const std::exception&) {
        break;  // a line cut short by a kill: everything before it is kept
      }
    }
  }
  const auto parent = std::filesystem::path(o.out_path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::FILE* journal = std::fopen(journal_path.c_str(), o.resume ? "a" : "w");
  if (!journal) throw input_error("--out", fmt::format("cannot write the journal '{}'", journal_path));
  std::vector<nlohmann::json> points = done;
  bool all_verified = true;
  try {
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (done_keys.count(key_of(specs[i]))) continue;
      if (o.progress && isatty(STDERR_FILENO))
        std::fprintf(stderr, "\r\033[K[%zu/%zu] fa_a2a M=%d target=%s", i, specs.size(), specs[i].seq_len,
                     specs[i].target.c_str());
      const FaA2aPointResult r = run_fa_a2a_point(specs[i]);
      nlohmann::json j = fa_point_json(specs[i], r, platform, model_target);
      if (r.status == "failed" || (r.status == "ok" && specs[i].verify && !r.verified)) {
        all_verified = false;
        std::fprintf(stderr, "\nxstage-bench: fa_a2a M=%d target=%s FAILED verification: %s\n", specs[i].seq_len,
                     specs[i].target.c_str(), r.error_detail.c_str());
      }
      journal_append(journal, j);
      points.push_back(std::move(j));
    }
  } catch (...) {
    std::fclose(journal);
    throw;
  }
  std::fclose(journal);
  if (o.progress && isatty(STDERR_FILENO)) std::fprintf(stderr, "\r\033[K");

  report::ResultFile file;
  nlohmann::json description = nlohmann::json::object();
  try {
    description = runtime::make_gpu_backend(0)->describe();
  } catch (const Error&) {
  }
  file.meta = report::make_meta(o.argv, "gpu", description);
  file.meta["suite"] = "fa_a2a";
  file.config = {{"M", o.seq_lens}, {"targets", o.targets}, {"heads", o.num_heads}, {"P", o.num_ranks},
                 {"num_ctas", o.num_ctas}, {"repetitions", o.repetitions},
                 {"launches_per_graph", o.launches_per_graph}, {"verify", o.verify}};
  file.extra["fa_a2a"] = points;
  if (!o.model_path.empty()) file.extra["model_from"] = o.model_path;
  report::write_json_atomic(o.out_path, report::to_json(file));
  print_fa_table(points, stdout);
  fmt::print("wrote {} ({} points)\n", o.out_path, points.size());
  return all_verified ? 0 : 1;
}

}  // namespace xs::attention
