// xstage attention layer: the fa_a2a sweep (see fa_bench.hpp).
#include "attention/fa_bench.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <sys/stat.h>

#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "attention/fa_report.hpp"
#include "attention/fa_runner.hpp"
#include "bench/runner.hpp"
#include "common/error.hpp"
#include "report/file_io.hpp"
#include "report/journal.hpp"
#include "report/json_read.hpp"
#include "report/result_file.hpp"
#include "runtime/gpu_backend.hpp"

namespace xs::attention {
namespace {
using nlohmann::json;

// What tells two points apart in the journal (head_dim is fixed; verify is covered by the header's hash).
std::string key_of(const FaA2aPointSpec& s) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}", s.seq_len, s.num_heads, s.num_ranks, s.target, s.num_ctas,
                     s.launches_per_graph, s.repetitions);
}
std::string key_of(const json& spec) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}", spec.at("M").get<int>(), spec.at("heads").get<int>(),
                     spec.at("P").get<int>(), spec.at("target").get<std::string>(), spec.at("num_ctas").get<int>(),
                     spec.at("launches_per_graph").get<int>(), spec.at("repetitions").get<int>());
}

// Everything that shapes a point's measurement; the header's config hash is taken over these in sweep order.
json canonical_spec(const FaA2aPointSpec& s) {
  return {{"M", s.seq_len}, {"heads", s.num_heads}, {"head_dim", s.head_dim}, {"P", s.num_ranks},
          {"target", s.target}, {"num_ctas", s.num_ctas}, {"launches_per_graph", s.launches_per_graph},
          {"repetitions", s.repetitions}, {"verify", s.verify}};
}

// The identity --resume compares: the runner's header (backend, device, git sha) over the fa_a2a specs.
// The --model path leads the hashed list: the journaled points carry that model's predictions.
report::JournalHeader journal_header(const Backend& backend, const std::vector<FaA2aPointSpec>& specs,
                                     const std::string& model_path) {
  report::JournalHeader h = bench::journal_header_for(backend, {});  // no PointSpecs: target/hash set below
  std::vector<json> canonical;
  canonical.push_back(json::object({{"model", model_path}}));
  for (const auto& s : specs) {
    canonical.push_back(canonical_spec(s));
    if (("," + h.target + ",").find("," + s.target + ",") == std::string::npos)
      h.target += (h.target.empty() ? "" : ",") + s.target;
  }
  h.config_hash = report::json_sweep_hash(canonical);
  h.num_points = specs.size();
  return h;
}

struct JournalText {
  report::JournalHeader header;
  std::vector<json> points;  // complete lines only: a last line without '\n' (a kill mid-append) is left out
};

// Line 1 goes through the shared reader (same messages for a missing, pre-header or foreign header); the
// rest must be fa_a2a point objects, else input_error "<path>:<line>".
JournalText read_journal_text(const std::string& path) {
  const std::string text = report::read_text_file(path);
  const std::size_t first_newline = text.find('\n');
  JournalText out;
  out.header = report::parse_journal_file(std::string_view(text).substr(0, first_newline + 1), path).header;
  std::size_t line_no = 2;
  for (std::size_t pos = first_newline + 1, nl; (nl = text.find('\n', pos)) != std::string::npos;
       pos = nl + 1, ++line_no) {
    try {
      json j = report::parse_json_text(std::string_view(text).substr(pos, nl - pos), "");
      (void)key_of(j.at("spec"));
      out.points.push_back(std::move(j));
    } catch (const std::exception& e) {
      throw input_error(fmt::format("{}:{}", path, line_no),
                        fmt::format("not an fa_a2a point ({}); every journal line but a truncated last one must be "
                                    "one: remove the journal to start over", e.what()));
    }
  }
  return out;
}

bool exists_no_follow(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Creates, restarts or resumes the journal (the runner's rules); fills `finished` with this run's points.
std::unique_ptr<report::Journal> open_journal(const FaBenchOptions& o, const std::string& path,
                                              const report::JournalHeader& header,
                                              const std::set<std::string>& run_keys,
                                              std::map<std::string, json>& finished) {
  if (!exists_no_follow(path)) {
    if (o.resume)
      throw input_error("--resume", fmt::format("no journal '{}' to resume from (run without --resume to start)", path));
    report::prepare_output_path(o.out_path, "--out");
    return report::Journal::create(path, header);
  }
  auto journal = report::Journal::open_existing(path);  // locks: a second run on this output stops here
  const JournalText contents = read_journal_text(path);
  if (!o.resume) {
    std::set<std::string> keys;
    for (const auto& j : contents.points) keys.insert(key_of(j.at("spec")));
    struct stat st {};
    const bool finished_run = keys.size() >= contents.header.num_points && ::stat(o.out_path.c_str(), &st) == 0 &&
                              S_ISREG(st.st_mode);
    if (!finished_run) {
      throw report::io_error(path, fmt::format("a journal of an unfinished run ({} of {} points) is here: use "
                                               "--resume or remove it", keys.size(), contents.header.num_points));
    }
    std::fprintf(stderr, "xstage: starting over: %s holds the finished run that wrote %s\n", path.c_str(),
                 o.out_path.c_str());
    journal->restart(header);
    return journal;
  }
  if (auto difference = report::header_mismatch(contents.header, header)) {
    throw input_error("--resume", fmt::format("{} was written by another run: {} differs; resume with the same "
                                              "command and build, or remove the journal to start over",
                                              path, *difference));
  }
  journal->drop_partial_tail();
  for (const auto& j : contents.points) {
    const std::string key = key_of(j.at("spec"));
    if (run_keys.count(key)) finished.emplace(key, j);  // first line of a point wins
  }
  return journal;
}

// A point that makes the run exit 1: it failed, or it ran with verification and did not verify.
bool failed_verification(const json& point, bool verify) {
  const std::string status = point.value("status", "");
  if (status == "failed") return true;
  if (status != "ok" || !verify) return false;
  const auto v = point.find("verification");
  return v == point.end() || !v->is_object() || !v->value("verified", false);
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
  // The GPU backend names the device in the journal header and the result's meta. No usable GPU (exit 77)
  // stops here, before a journal exists: the points could not run on it either.
  const std::unique_ptr<Backend> backend = runtime::make_gpu_backend(0);
  const report::JournalHeader header = journal_header(*backend, specs, o.model_path);
  std::set<std::string> run_keys;
  for (const auto& s : specs) run_keys.insert(key_of(s));
  const std::string journal_path = report::journal_path_for(o.out_path);
  std::map<std::string, json> finished;
  // Held until the result file is written: its lock keeps any other run off this output.
  const auto journal = open_journal(o, journal_path, header, run_keys, finished);
  if (o.resume)
    std::fprintf(stderr, "xstage: resuming %zu/%zu points from %s\n", finished.size(), specs.size(),
                 journal_path.c_str());

  std::vector<json> points;
  bool all_verified = true;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (auto it = finished.find(key_of(specs[i])); it != finished.end()) {
      if (failed_verification(it->second, specs[i].verify)) all_verified = false;
      points.push_back(it->second);
      continue;
    }
    if (o.progress && isatty(STDERR_FILENO))
      std::fprintf(stderr, "\r\033[K[%zu/%zu] fa_a2a M=%d target=%s", i, specs.size(), specs[i].seq_len,
                   specs[i].target.c_str());
    const FaA2aPointResult r = run_fa_a2a_point(specs[i]);
    json j = fa_point_json(specs[i], r, platform, model_target);
    if (failed_verification(j, specs[i].verify)) {
      all_verified = false;
      std::fprintf(stderr, "\nxstage-bench: fa_a2a M=%d target=%s FAILED verification: %s\n", specs[i].seq_len,
                   specs[i].target.c_str(), r.error_detail.c_str());
    }
    journal->append_json(j);
    points.push_back(std::move(j));
  }
  if (o.progress && isatty(STDERR_FILENO)) std::fprintf(stderr, "\r\033[K");

  report::ResultFile file;
  const json description = backend->describe();
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
