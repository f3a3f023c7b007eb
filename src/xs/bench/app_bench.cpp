// xstage bench layer: the application-suite point loop (see app_bench.hpp).
#include "xs/bench/app_bench.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "xs/bench/backend.hpp"
#include "xs/bench/rank_agree.hpp"
#include "xs/bench/rank_layout.hpp"
#include "xs/bench/rank_merge.hpp"
#include "xs/bench/run_control.hpp"
#include "xs/bench/run_journal.hpp"
#include "xs/bench/runner.hpp"
#include "xs/common/error.hpp"
#include "xs/common/program_name.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/result_file.hpp"

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

report::JournalHeader app_journal_header(const AppBenchPlan& plan, int num_ranks) {
  report::JournalHeader h = plan.identity;
  h.target.clear();
  std::vector<json> canonical{plan.run_identity};
  if (num_ranks > 1) canonical.push_back({{"num_ranks", num_ranks}});
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
  SingleRankComm one;
  return run_app_points(plan, one, [&](std::size_t i, const AppPointSpec& spec, const PointContext&) {
    return run_point(i, spec);
  });
}

namespace {

}  // namespace

void check_app_outputs_for_dry_run(const std::string& suite, const std::string& output_path, bool resume) {
  check_journal_for_dry_run(report::journal_path_for(output_path), output_path, resume, [&](const std::string& path) {
    const AppJournalText contents = read_app_journal(path, suite);
    std::set<std::string> keys;
    for (const auto& p : contents.points) keys.insert(report::app_point_key(p.id, p.axes));
    return JournalState{contents.header, keys.size()};
  });
}

namespace {

// Rank 0's checks before anything runs, then its journal (created, restarted or resumed): the finished points
// by key. Other ranks do nothing here (they write nothing).
std::map<std::string, report::AppPoint> open_journal_on_root(const AppBenchPlan& plan, int num_ranks,
                                                             AppBenchOutcome& outcome) {
  if (plan.output_path.empty()) throw input_error("--out", "an output path is required");
  if (plan.points.empty()) throw input_error(plan.suite, "the sweep has no points");
  const std::string journal_path = report::journal_path_for(plan.output_path);
  report::check_output_path(plan.output_path, "--out");
  report::check_output_path(journal_path, "the journal", report::OutputKind::kJournal);
  std::set<std::string> run_keys;
  for (std::size_t i = 0; i < plan.points.size(); ++i)
    if (!run_keys.insert(key_of(plan.points[i])).second)
      throw input_error(plan.suite, fmt::format("point {} ({}) is listed twice", i, plan.points[i].label));
  for (const auto& p : plan.points)  // a point split over P ranks runs on P ranks (one rank emulates any P)
    if (num_ranks > 1 && p.axes.is_object() && p.axes.contains("P") && p.axes["P"].is_number_integer())
      check_world_matches_p(num_ranks, p.axes["P"].get<long long>(), "--P");

  AppJournalText contents;
  auto read_existing = [&](const report::Journal& j) {
    contents = read_app_journal(j.path(), plan.suite);
    std::set<std::string> keys;
    for (const auto& p : contents.points) keys.insert(report::app_point_key(p.id, p.axes));
    return JournalState{contents.header, keys.size()};
  };
  outcome.journal = open_run_journal(journal_path, plan.output_path, plan.resume,
                                     app_journal_header(plan, num_ranks), read_existing, plan.resume_any_build,
                                     &outcome.resumed_from_build);
  std::map<std::string, report::AppPoint> finished;
  if (plan.resume) {
    for (auto& p : contents.points) {
      const std::string key = report::app_point_key(p.id, p.axes);
      if (run_keys.count(key)) finished.emplace(key, std::move(p));  // first line of a point wins
    }
    std::fprintf(stderr, "%s: resuming %zu/%zu points from %s\n", xs::program_name(), finished.size(),
                 plan.points.size(), journal_path.c_str());
  }
  return finished;
}

std::uint64_t draw_seed() {
  std::random_device device;
  const std::uint64_t seed = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  return seed == 0 ? 1 : seed;
}

void report_failed_verification(const AppBenchPlan& plan, const AppPointSpec& spec, const report::AppPoint& point) {
  std::string why = point.status == "failed" ? point.reason : point.verification.detail;
  if (why.empty()) why = "no detail given";
  std::fprintf(stderr, "\n%s: %s %s FAILED verification: %s\n", xs::program_name(), plan.suite.c_str(),
               spec.label.c_str(), why.c_str());
}

void check_returned_point(const AppBenchPlan& plan, std::size_t i, const AppPointSpec& spec,
                          const report::AppPoint& point) {
  if (point.id != spec.id || point.axes != spec.axes)
    throw input_error(plan.suite, fmt::format("point {} came back as {} {} (expected {} {})", i, point.id,
                                              point.axes.dump(), spec.id, spec.axes.dump()));
}

}  // namespace

AppBenchOutcome run_app_points(const AppBenchPlan& plan, RankComm& comm, const RankPointRunner& run_point) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const bool root = comm.rank() == 0, several = comm.size() > 1;
  AppBenchOutcome outcome;
  outcome.writes_output = root;

  // Start-up: rank 0's checks and journal; every rank learns which points are finished (and gets them).
  std::map<std::string, report::AppPoint> finished;
  if (!several) {
    finished = open_journal_on_root(plan, 1, outcome);
  } else {
    const json start = gather_combine_broadcast(
        comm, [] { return json(nullptr); },
        [&](std::vector<json>) {
          json done = json::object();
          for (auto& [key, p] : open_journal_on_root(plan, comm.size(), outcome)) done[key] = report::to_json(p);
          return done;
        });
    for (const auto& [key, p] : start.items()) finished.emplace(key, report::app_point_from_json(p, key));
  }
  if (plan.describe_rank || several) {
    outcome.ranks = gather_combine_broadcast(
        comm,
        [&] {
          json d = plan.describe_rank ? plan.describe_rank() : json::object();
          if (!d.is_object()) d = {{"description", d}};
          d["rank"] = comm.rank();
          return d;
        },
        [](std::vector<json> by_rank) { return json(std::move(by_rank)); });
    if (!root) outcome.ranks = nullptr;
  }
  if (several && root) outcome.launch = {{"model", comm.kind()}, {"num_ranks", comm.size()}};

  std::optional<StopSignalScope> signals;  // rank 0 decides when to stop; the others follow its word
  if (root) signals.emplace(plan.points.size(), plan.point_polls_stop);
  const bool draw = root && plan.progress && isatty(STDERR_FILENO);
  std::size_t measured = 0;
  double measured_s = 0;
  bool stopped = false;
  for (std::size_t i = 0; i < plan.points.size(); ++i) {
    const AppPointSpec& spec = plan.points[i];
    report::AppPoint point;
    if (auto it = finished.find(key_of(spec)); it != finished.end()) {
      point = std::move(it->second);
      ++outcome.num_resumed;
    } else {
      // Rank 0's word: stop here, or run this point with this seed.
      json word = {{"stop", root && signals->stopping()}, {"seed", root ? draw_seed() : 0}};
      if (several) word = json::parse(broadcast_string(comm, root ? word.dump() : ""));
      if (word["stop"].get<bool>()) {
        stopped = true;
        break;
      }
      if (root) {
        signals->set_point_number(i + 1);
        const double elapsed_s = std::chrono::duration<double>(clock::now() - t0).count();
        const double eta_s = measured ? measured_s / static_cast<double>(measured) *
                                            static_cast<double>(plan.points.size() - i) : 0;
        draw_progress(draw, i, plan.points.size(), plan.suite + " " + spec.label, elapsed_s, eta_s);
      }
      const PointContext context{comm, word["seed"].get<std::uint64_t>()};
      const auto p0 = clock::now();
      try {
        if (!several) {
          point = run_point(i, spec, context);
          check_returned_point(plan, i, spec, point);
          if (report::failed_verification(point)) report_failed_verification(plan, spec, point);
          outcome.journal->append_json(report::to_json(point));
        } else {
          comm.barrier();  // every rank starts the timed point together
          const json merged = gather_combine_broadcast(
              comm,
              [&] {
                const report::AppPoint mine = run_point(i, spec, context);
                check_returned_point(plan, i, spec, mine);
                return report::to_json(mine);
              },
              [&](std::vector<json> by_rank) {
                std::vector<report::AppPoint> points;
                for (std::size_t r = 0; r < by_rank.size(); ++r)
                  points.push_back(report::app_point_from_json(by_rank[r], fmt::format("rank {}", r)));
                const report::AppPoint m = merge_rank_points(points);
                if (report::failed_verification(m)) report_failed_verification(plan, spec, m);
                json j = report::to_json(m);
                outcome.journal->append_json(j);
                return j;
              });
          point = report::app_point_from_json(merged, spec.label);
        }
      } catch (const Error& e) {
        const bool abandoned = dynamic_cast<const PointInterrupted*>(&e) != nullptr ||
                               (several && dynamic_cast<const RankAgreedError*>(&e) != nullptr &&
                                static_cast<int>(e.code()) == kInterruptedExitCode);
        if (!abandoned) throw;
        if (root)
          std::fprintf(stderr, "\n%s: point %zu/%zu (%s) abandoned: it was still running %.0f s after the stop "
                       "request\n", xs::program_name(), i + 1, plan.points.size(), spec.label.c_str(), kStopGraceS);
        stopped = true;
        break;
      }
      measured_s += std::chrono::duration<double>(clock::now() - p0).count();
      ++measured;
    }
    if (report::failed_verification(point)) ++outcome.num_failed;
    outcome.points.push_back(std::move(point));
  }
  clear_progress(draw);
  outcome.interrupted = stopped && outcome.points.size() < plan.points.size();
  outcome.wall_s = std::chrono::duration<double>(clock::now() - t0).count();
  return outcome;
}

int write_app_result(const AppBenchPlan& plan, const AppBenchOutcome& outcome, AppResultSections sections) {
  if (!outcome.writes_output) return outcome.interrupted ? interrupted_exit_code() : outcome.num_failed > 0 ? 1 : 0;
  if (outcome.interrupted) {
    std::fprintf(stderr, "%s: interrupted; finished points are in %s; rerun with --resume (--resume-any-build once the "
                 "tools were rebuilt)\n", xs::program_name(), report::journal_path_for(plan.output_path).c_str());
    return interrupted_exit_code();
  }
  report::ResultFile file;
  file.meta = std::move(sections.meta);
  file.meta["suite"] = plan.suite;
  file.meta["wall_s"] = outcome.wall_s;
  if (!outcome.resumed_from_build.empty()) file.meta["resumed_from_build"] = outcome.resumed_from_build;
  if (!outcome.ranks.is_null()) file.meta["ranks"] = outcome.ranks;
  if (!outcome.launch.is_null()) file.meta["launch"] = outcome.launch;
  file.config = std::move(sections.config);
  file.extra = std::move(sections.extra);
  file.app_points = outcome.points;
  report::write_json_atomic(plan.output_path, report::to_json(file));
  note_kept_journal("xstage-bench", plan.output_path);
  return outcome.num_failed > 0 ? 1 : 0;
}

}  // namespace xs::bench
