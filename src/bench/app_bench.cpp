// xstage bench layer: the application-suite point loop (see app_bench.hpp).
#include "bench/app_bench.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <set>

#include "bench/backend.hpp"
#include "bench/run_control.hpp"
#include "bench/run_journal.hpp"
#include "bench/runner.hpp"
#include "common/error.hpp"
#include "report/file_io.hpp"
#include "report/json_read.hpp"
#include "report/result_file.hpp"

namespace xs::bench {
namespace {
using nlohmann::json;

std::string key_of(const AppPointSpec& p) { return report::app_point_key(p.id, p.axes); }

struct AppJournalText {
  report::JournalHeader header;
  std::vector<report::AppPoint> points;  // complete lines only (a last line without '\n' is a cut write)
};

// Line 1 through the shared header reader (same messages for a missing or foreign header); every other
// complete line must be an application point of this suite.
AppJournalText read_app_journal(const std::string& path, const std::string& suite) {
  const std::string text = report::read_text_file(path);
  const std::size_t first_newline = text.find('\n');
  AppJournalText out;
  out.header = report::parse_journal_file(std::string_view(text).substr(0, first_newline + 1), path).header;
  std::size_t line_no = 2;
  for (std::size_t pos = first_newline + 1, nl; (nl = text.find('\n', pos)) != std::string::npos;
       pos = nl + 1, ++line_no) {
    try {
      const json j = report::parse_json_text(std::string_view(text).substr(pos, nl - pos), "");
      report::AppPoint p = report::app_point_from_json(j, "");
      if (p.suite != suite) throw input_error("suite", fmt::format("\"{}\", this run is {}", p.suite, suite));
      out.points.push_back(std::move(p));
    } catch (const std::exception& e) {
      throw input_error(fmt::format("{}:{}", path, line_no),
                        fmt::format("not a {} point ({}); every journal line but a truncated last one must be one: "
                                    "remove the journal to start over", suite, e.what()));
    }
  }
  return out;
}

}  // namespace

Summary paired_difference(const std::vector<double>& a_s, const std::vector<double>& b_s) {
  if (a_s.size() != b_s.size())
    throw input_error("paired_difference", fmt::format("{} rounds against {}: pairs need the same rounds",
                                                       a_s.size(), b_s.size()));
  std::vector<double> d(a_s.size());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = a_s[i] - b_s[i];
  return summarize(std::move(d));
}

report::JournalHeader app_journal_header(const AppBenchPlan& plan) {
  report::JournalHeader h = plan.identity;
  h.target.clear();
  std::vector<json> canonical{plan.run_identity};
  for (const auto& p : plan.points) {
    canonical.push_back(p.axes);
    if (("," + h.target + ",").find("," + p.target + ",") == std::string::npos)
      h.target += (h.target.empty() ? "" : ",") + p.target;
  }
  h.config_hash = report::json_sweep_hash(canonical);
  h.num_points = plan.points.size();
  return h;
}

AppBenchOutcome run_app_points(const AppBenchPlan& plan, const AppPointRunner& run_point) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  if (plan.output_path.empty()) throw input_error("--out", "an output path is required");
  if (plan.points.empty()) throw input_error(plan.suite, "the sweep has no points");
  const std::string journal_path = report::journal_path_for(plan.output_path);
  report::check_output_path(plan.output_path, "--out");
  report::check_output_path(journal_path, "the journal");
  std::set<std::string> run_keys;
  for (std::size_t i = 0; i < plan.points.size(); ++i)
    if (!run_keys.insert(key_of(plan.points[i])).second)
      throw input_error(plan.suite, fmt::format("point {} ({}) is listed twice", i, plan.points[i].label));

  AppJournalText contents;
  AppBenchOutcome outcome;
  auto read_existing = [&](const report::Journal& j) {
    contents = read_app_journal(j.path(), plan.suite);
    std::set<std::string> keys;
    for (const auto& p : contents.points) keys.insert(report::app_point_key(p.id, p.axes));
    return JournalState{contents.header, keys.size()};
  };
  outcome.journal =
      open_run_journal(journal_path, plan.output_path, plan.resume, app_journal_header(plan), read_existing);
  std::map<std::string, report::AppPoint> finished;
  if (plan.resume) {
    for (auto& p : contents.points) {
      const std::string key = report::app_point_key(p.id, p.axes);
      if (run_keys.count(key)) finished.emplace(key, std::move(p));  // first line of a point wins
    }
    std::fprintf(stderr, "xstage: resuming %zu/%zu points from %s\n", finished.size(), plan.points.size(),
                 journal_path.c_str());
  }

  const StopSignalScope signals(plan.points.size(), plan.point_polls_stop);
  const bool draw = plan.progress && isatty(STDERR_FILENO);
  std::size_t measured = 0;
  double measured_s = 0;
  for (std::size_t i = 0; i < plan.points.size(); ++i) {
    const AppPointSpec& spec = plan.points[i];
    report::AppPoint point;
    if (auto it = finished.find(key_of(spec)); it != finished.end()) {
      point = std::move(it->second);
      ++outcome.num_resumed;
    } else {
      if (signals.stopping()) break;
      signals.set_point_number(i + 1);
      const double elapsed_s = std::chrono::duration<double>(clock::now() - t0).count();
      const double eta_s = measured ? measured_s / static_cast<double>(measured) *
                                          static_cast<double>(plan.points.size() - i) : 0;
      draw_progress(draw, i, plan.points.size(), plan.suite + " " + spec.label, elapsed_s, eta_s);
      const auto p0 = clock::now();
      try {
        point = run_point(i, spec);
      } catch (const PointInterrupted&) {
        std::fprintf(stderr, "\nxstage: point %zu/%zu (%s) abandoned: it was still running %.0f s after the stop "
                     "request\n", i + 1, plan.points.size(), spec.label.c_str(), kStopGraceS);
        break;
      }
      measured_s += std::chrono::duration<double>(clock::now() - p0).count();
      ++measured;
      if (point.id != spec.id || point.axes != spec.axes)
        throw input_error(plan.suite, fmt::format("point {} came back as {} {} (expected {} {})", i, point.id,
                                                  point.axes.dump(), spec.id, spec.axes.dump()));
      if (report::failed_verification(point)) {
        std::string why = point.status == "failed" ? point.reason : point.verification.detail;
        if (why.empty()) why = "no detail given";
        std::fprintf(stderr, "\nxstage-bench: %s %s FAILED verification: %s\n", plan.suite.c_str(),
                     spec.label.c_str(), why.c_str());
      }
      outcome.journal->append_json(report::to_json(point));
    }
    if (report::failed_verification(point)) ++outcome.num_failed;
    outcome.points.push_back(std::move(point));
  }
  clear_progress(draw);
  outcome.interrupted = signals.stopping() && outcome.points.size() < plan.points.size();
  outcome.wall_s = std::chrono::duration<double>(clock::now() - t0).count();
  return outcome;
}

int write_app_result(const AppBenchPlan& plan, const AppBenchOutcome& outcome, AppResultSections sections) {
  if (outcome.interrupted) {
    std::fprintf(stderr, "xstage-bench: interrupted; finished points are in %s; rerun with --resume\n",
                 report::journal_path_for(plan.output_path).c_str());
    return kInterruptedExitCode;
  }
  report::ResultFile file;
  file.meta = std::move(sections.meta);
  file.meta["suite"] = plan.suite;
  file.meta["wall_s"] = outcome.wall_s;
  file.config = std::move(sections.config);
  file.extra = std::move(sections.extra);
  file.app_points = outcome.points;
  report::write_json_atomic(plan.output_path, report::to_json(file));
  return outcome.num_failed > 0 ? 1 : 0;
}

}  // namespace xs::bench
