// xstage bench layer: the sweep runner (see runner.hpp).
#include "bench/runner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>

#include "common/error.hpp"
#include "common/units.hpp"
#include "report/result_file.hpp"

namespace xs::bench {
namespace {

std::atomic<int> g_stop_signal{0};

extern "C" void on_stop_signal(int sig) {
  g_stop_signal.store(sig);
  std::signal(sig, SIG_DFL);  // a second signal kills at once; the journal already holds finished points
}

// Installs the handlers for the lifetime of one sweep and restores the previous ones.
class SignalScope {
 public:
  SignalScope() {
    g_stop_signal.store(0);
    old_int_ = std::signal(SIGINT, on_stop_signal);
    old_term_ = std::signal(SIGTERM, on_stop_signal);
  }
  ~SignalScope() {
    std::signal(SIGINT, old_int_);
    std::signal(SIGTERM, old_term_);
  }

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

}  // namespace

SweepOutcome run_sweep(Backend& backend, const std::vector<ExpandedPoint>& points, const RunOptions& options) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  if (options.output_path.empty()) throw input_error("--out", "an output path is required");

  // 1. Check every point before the first launch.
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

  // 2. Resume: index the journal's finished points by their spec.
  const std::string journal_path = report::journal_path_for(options.output_path);
  std::map<std::string, PointRecord> finished;
  if (options.resume) {
    if (!std::filesystem::exists(journal_path))
      throw input_error("--resume", fmt::format("no journal '{}' to resume from", journal_path));
    for (auto& record : report::read_journal(journal_path)) finished[point_key(record.spec)] = std::move(record);
  }
  report::Journal journal(journal_path, /*truncate=*/!options.resume);

  SweepOutcome outcome;
  SignalScope signals;
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
    if (g_stop_signal.load() != 0) {
      outcome.interrupted = true;
      break;
    }
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
      record = backend.run(spec);
      measured_s += std::chrono::duration<double>(clock::now() - p0).count();
      ++measured;
      if (record.verification.wrong > 0)
        std::fprintf(stderr, "\nxstage: VERIFICATION FAILED at %s: %llu wrong words of %llu bytes checked\n",
                     describe_point(spec).c_str(), static_cast<unsigned long long>(record.verification.wrong),
                     static_cast<unsigned long long>(record.verification.bytes_checked));
    }
    journal.append(record);
    outcome.records.push_back(std::move(record));
  }
  if (draw) std::fprintf(stderr, "\r\033[K");
  if (g_stop_signal.load() != 0 && outcome.records.size() < points.size()) outcome.interrupted = true;
  outcome.wall_s = std::chrono::duration<double>(clock::now() - t0).count();
  return outcome;
}

}  // namespace xs::bench
