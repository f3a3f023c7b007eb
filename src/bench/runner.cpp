// xstage bench layer: the sweep runner (see runner.hpp).
#include "bench/runner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>

#include "bench/run_control.hpp"
#include "bench/run_journal.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "report/file_io.hpp"
#include "report/result_file.hpp"
#include "xstage/build_info.hpp"

namespace xs::bench {
namespace {

std::string describe_point(const PointSpec& s) {
  return fmt::format("{} K={} B={} G={}", point_id(s), s.num_producers,
                     format_bytes(static_cast<double>(s.bytes_per_producer)), format_seconds(s.gap_s));
}

// The runner's rules for its journal (bench/run_journal.hpp) over PointRecord lines; fills `finished`
// on --resume.
std::shared_ptr<report::Journal> open_journal(const std::string& journal_path, const RunOptions& options,
                                              const report::JournalHeader& header,
                                              std::map<std::string, PointRecord>& finished) {
  report::JournalContents contents;
  auto journal = open_run_journal(journal_path, options.output_path, options.resume, header,
                                  [&](const report::Journal& j) {
                                    contents = j.read();
                                    return JournalState{contents.header, contents.records.size()};
                                  });
  if (options.resume)
    for (const auto& record : contents.records) finished[point_key(record.spec)] = record;
  return journal;
}

}  // namespace

std::vector<std::string> check_points(const Backend& backend, const std::vector<ExpandedPoint>& points) {
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
  return skip_reasons;
}

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
  const std::vector<std::string> skip_reasons = check_points(backend, points);

  // 3. The journal: created, replaced or resumed only now.
  std::map<std::string, PointRecord> finished;
  SweepOutcome outcome;
  outcome.journal = open_journal(journal_path, options, journal_header_for(backend, points), finished);
  if (options.resume) {
    std::size_t have = 0;
    for (const auto& p : points) have += finished.count(point_key(p.spec));
    std::fprintf(stderr, "xstage: resuming %zu/%zu points from %s\n", have, points.size(), journal_path.c_str());
  }

  const StopSignalScope signals(points.size(), /*abandons_long_points=*/true);
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
    signals.set_point_number(i + 1);
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
  clear_progress(draw);
  if (signals.stopping() && outcome.records.size() < points.size()) outcome.interrupted = true;
  outcome.wall_s = std::chrono::duration<double>(clock::now() - t0).count();
  return outcome;
}

}  // namespace xs::bench
