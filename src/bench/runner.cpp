// xstage bench layer: the sweep runner (see runner.hpp).
#include "bench/runner.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>

#include "common/error.hpp"
#include "common/units.hpp"
#include "report/file_io.hpp"
#include "report/result_file.hpp"
#include "xstage/build_info.hpp"

namespace xs::bench {
namespace {

// Shared with the signal handler: lock-free atomics only.
std::atomic<int> g_num_signals{0};
std::atomic<std::size_t> g_point_number{0};  // 1-based number of the point in progress
std::atomic<std::size_t> g_num_points{0};

// Appends the decimal digits of `n` (no snprintf: it is not async-signal-safe).
char* put_number(char* out, std::size_t n) {
  char digits[24];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  while (count > 0) *out++ = digits[--count];
  return out;
}

char* put_text(char* out, const char* text) {
  while (*text) *out++ = *text++;
  return out;
}

extern "C" void on_stop_signal(int sig) {
  const int saved_errno = errno;
  if (g_num_signals.fetch_add(1) == 0) {
    g_stop_requested_ns.store(monotonic_ns());
    char message[256];
    char* p = put_text(message, "\nxstage: stopping: finishing point ");
    p = put_number(p, g_point_number.load());
    p = put_text(p, "/");
    p = put_number(p, g_num_points.load());
    p = put_text(p, " (abandoned if it needs more than 1 s more), Ctrl-C again to abort\n");
    (void)!::write(STDERR_FILENO, message, static_cast<std::size_t>(p - message));
  } else {
    static const char kAbort[] = "\nxstage: aborted; finished points are in the journal\n";
    (void)!::write(STDERR_FILENO, kAbort, sizeof kAbort - 1);
    std::signal(sig, SIG_DFL);  // die of the signal, as the shell expects (130/143)
    std::raise(sig);
  }
  errno = saved_errno;
}

// Installs the handlers for the lifetime of one sweep and restores the previous ones.
class SignalScope {
 public:
  explicit SignalScope(std::size_t num_points) {
    g_num_signals.store(0);
    g_stop_requested_ns.store(0);
    g_point_number.store(0);
    g_num_points.store(num_points);
    old_int_ = std::signal(SIGINT, on_stop_signal);
    old_term_ = std::signal(SIGTERM, on_stop_signal);
  }
  ~SignalScope() {
    std::signal(SIGINT, old_int_);
    std::signal(SIGTERM, old_term_);
    g_stop_requested_ns.store(0);
  }
  bool stopping() const { return g_stop_requested_ns.load() != 0; }

 private:
  void (*old_int_)(int) = nullptr;
  void (*old_term_)(int) = nullptr;
};

std::string describe_point(const PointSpec& s) {
  return fmt::format("{} K={} B={} G={}", point_id(s), s.num_producers,
                     format_bytes(static_cast<double>(s.bytes_per_producer)), format_seconds(s.gap_s));
}

void draw_progress(bool enabled, std::size_t done, std::size_t total, const std::string& what, double elapsed_s,
                   double eta_s) {
  if (!enabled) return;
  std::fprintf(stderr, "\r\033[K[%zu/%zu] %s  %.1fs elapsed, ~%.0fs left", done, total, what.c_str(), elapsed_s,
               eta_s);
  std::fflush(stderr);
}

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool exists_no_follow(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Opens (or creates) the journal for this run, after every check; fills `finished` on --resume.
std::shared_ptr<report::Journal> open_journal(const std::string& journal_path, const RunOptions& options,
                                              const report::JournalHeader& header,
                                              std::map<std::string, PointRecord>& finished) {
  if (!exists_no_follow(journal_path)) {
    if (options.resume) {
      throw input_error("--resume", fmt::format("no journal '{}' to resume from (run without --resume to start)",
                                                journal_path));
    }
    report::prepare_output_path(options.output_path, "--out");
    return report::Journal::create(journal_path, header);
  }
  std::shared_ptr<report::Journal> journal = report::Journal::open_existing(journal_path);  // locks
  const report::JournalContents contents = journal->read();
  if (!options.resume) {
    const bool finished_run = contents.records.size() >= contents.header.num_points &&
                              is_regular_file(options.output_path);
    if (!finished_run) {
      throw report::io_error(journal_path,
                             fmt::format("a journal of an unfinished run ({} of {} points) is here: use --resume "
                                         "or remove it", contents.records.size(), contents.header.num_points));
    }
    std::fprintf(stderr, "xstage: starting over: %s holds the finished run that wrote %s\n", journal_path.c_str(),
                 options.output_path.c_str());
    journal->restart(header);
    return journal;
  }
  if (auto difference = report::header_mismatch(contents.header, header)) {
    throw input_error("--resume", fmt::format("{} was written by another run: {} differs; resume with the same "
                                              "command and build, or remove the journal to start over",
                                              journal_path, *difference));
  }
  journal->drop_partial_tail();
  for (const auto& record : contents.records) finished[point_key(record.spec)] = record;
  return journal;
}

}  // namespace

report::JournalHeader journal_header_for(const Backend& backend, const std::vector<ExpandedPoint>& points) {
  report::JournalHeader h;
  h.backend = backend.name();
  const nlohmann::json d = backend.describe();
  if (auto planted = d.find("planted"); planted != d.end() && planted->is_object()) {
    h.sim = *planted;
    if (auto seed = h.sim.find("seed"); seed != h.sim.end()) {
      h.seed = *seed;
      h.sim.erase(seed);
    }
  }
  const auto index = d.find("device_index");
  const auto devices = d.find("devices");
  if (index != d.end() && index->is_number_integer() && devices != d.end() && devices->is_array()) {
    const auto i = index->get<long long>();
    if (i >= 0 && static_cast<std::size_t>(i) < devices->size()) {
      const nlohmann::json& dev = (*devices)[static_cast<std::size_t>(i)];
      h.device = {{"index", i}, {"name", dev.value("name", "")}, {"uuid", dev.value("uuid", "")}};
    }
  }
  std::vector<PointSpec> specs;
  for (const auto& p : points) {
    specs.push_back(p.spec);
    const std::string& t = p.spec.target;
    const std::string padded = "," + h.target + ",";
    if (padded.find("," + t + ",") == std::string::npos) h.target += (h.target.empty() ? "" : ",") + t;
  }
  // A dirty build is another binary than its commit: its points must not merge with a clean one's.
  h.git_sha = std::string(build_info::kGitSha) + (build_info::kGitDirty ? "+dirty" : "");
  h.config_hash = report::sweep_hash(specs);
  h.num_points = points.size();
  return h;
}

SweepOutcome run_sweep(Backend& backend, const std::vector<ExpandedPoint>& points, const RunOptions& options) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  if (options.output_path.empty()) throw input_error("--out", "an output path is required");

  // 1. Every output path, before anything is measured or created.
  const std::string journal_path = report::journal_path_for(options.output_path);
  report::check_output_path(options.output_path, "--out");
  report::check_output_path(journal_path, "the journal");

  // 2. Every point before the first launch.
  std::vector<std::string> skip_reasons(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    validate_spec(points[i].spec);
    if (auto reason = backend.unavailable_reason(points[i].spec)) {
      if (reason->rfind("unavailable", 0) == 0) {
        skip_reasons[i] = *reason;
      } else {
        throw input_error(fmt::format("point {} ({})", i, describe_point(points[i].spec)), *reason);
      }
    }
  }

  // 3. The journal: created, replaced or resumed only now.
  std::map<std::string, PointRecord> finished;
  SweepOutcome outcome;
  outcome.journal = open_journal(journal_path, options, journal_header_for(backend, points), finished);
  if (options.resume) {
    std::size_t have = 0;
    for (const auto& p : points) have += finished.count(point_key(p.spec));
    std::fprintf(stderr, "xstage: resuming %zu/%zu points from %s\n", have, points.size(), journal_path.c_str());
  }

  SignalScope signals(points.size());
  const bool draw = options.progress && isatty(STDERR_FILENO);
  std::size_t measured = 0;
  double measured_s = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const PointSpec& spec = points[i].spec;
    if (auto it = finished.find(point_key(spec)); it != finished.end()) {
      outcome.records.push_back(it->second);
      ++outcome.num_resumed;
      continue;
    }
    if (signals.stopping()) break;
    g_point_number.store(i + 1);
    PointRecord record;
    if (!skip_reasons[i].empty()) {
      record.id = point_id(spec);
      record.spec = spec;
      record.skipped = true;
      record.skip_reason = skip_reasons[i];
      ++outcome.num_skipped;
    } else {
      const double elapsed_s = std::chrono::duration<double>(clock::now() - t0).count();
      const std::size_t left = points.size() - i;
      const double eta_s = measured ? measured_s / static_cast<double>(measured) * static_cast<double>(left) : 0;
      draw_progress(draw, i, points.size(), describe_point(spec), elapsed_s, eta_s);
      const auto p0 = clock::now();
      try {
        record = backend.run(spec);
      } catch (const PointInterrupted&) {
        std::fprintf(stderr, "xstage: point %zu/%zu (%s) abandoned: it was still running %.0f s after the stop "
                     "request\n", i + 1, points.size(), describe_point(spec).c_str(), kStopGraceS);
        break;
      }
      measured_s += std::chrono::duration<double>(clock::now() - p0).count();
      ++measured;
      if (record.verification.wrong > 0)
        std::fprintf(stderr, "\nxstage: VERIFICATION FAILED at %s: %llu wrong words of %llu bytes checked\n",
                     describe_point(spec).c_str(), static_cast<unsigned long long>(record.verification.wrong),
                     static_cast<unsigned long long>(record.verification.bytes_checked));
    }
    outcome.journal->append(record);
    outcome.records.push_back(std::move(record));
  }
  if (draw) std::fprintf(stderr, "\r\033[K");
  if (signals.stopping() && outcome.records.size() < points.size()) outcome.interrupted = true;
  outcome.wall_s = std::chrono::duration<double>(clock::now() - t0).count();
  return outcome;
}

}  // namespace xs::bench
