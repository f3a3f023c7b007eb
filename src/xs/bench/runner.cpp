// xstage bench layer: the sweep runner (see runner.hpp).
#include "xs/bench/runner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>

#include "xs/bench/rank_agree.hpp"
#include "xs/bench/rank_merge.hpp"
#include "xs/bench/run_control.hpp"
#include "xs/bench/run_journal.hpp"
#include "xs/common/error.hpp"
#include "xs/common/program_name.hpp"
#include "xs/common/units.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/result_file.hpp"
#include "xs/build_info.hpp"

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
                                              std::map<std::string, PointRecord>& finished,
                                              std::string& resumed_from_build) {
  report::JournalContents contents;
  auto journal = open_run_journal(journal_path, options.output_path, options.resume, header,
                                  [&](const report::Journal& j) {
                                    contents = j.read();
                                    return JournalState{contents.header, contents.records.size()};
                                  },
                                  options.resume_any_build, &resumed_from_build);
  if (options.resume)
    for (const auto& record : contents.records) finished[point_key(record.spec)] = record;
  return journal;
}

// The GPU a backend's description names by device_index: {index, name, uuid}; null where it names none.
nlohmann::json device_of(const nlohmann::json& description) {
  const auto index = description.find("device_index");
  const auto devices = description.find("devices");
  if (index == description.end() || !index->is_number_integer() || devices == description.end() ||
      !devices->is_array())
    return nullptr;
  const auto i = index->get<long long>();
  if (i < 0 || static_cast<std::size_t>(i) >= devices->size()) return nullptr;
  const nlohmann::json& dev = (*devices)[static_cast<std::size_t>(i)];
  return {{"index", i}, {"name", dev.value("name", "")}, {"uuid", dev.value("uuid", "")}};
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

report::JournalHeader journal_header_for(const Backend& backend, const std::vector<ExpandedPoint>& points,
                                         int num_ranks) {
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
  if (nlohmann::json device = device_of(d); !device.is_null()) h.device = std::move(device);
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
  if (num_ranks > 1) h.config_hash = report::json_sweep_hash({h.config_hash, {{"num_ranks", num_ranks}}});
  h.num_points = points.size();
  return h;
}

namespace {

// Step 1 of run_sweep (rank 0): every output path, before anything is measured or created. Step 2 (every rank,
// on its own backend) is check_points.
void check_outputs(const RunOptions& options) {
  if (options.output_path.empty()) throw input_error("--out", "an output path is required");
  report::check_output_path(options.output_path, "--out");
  report::check_output_path(report::journal_path_for(options.output_path), "the journal",
                            report::OutputKind::kJournal);
}

using SweepClock = std::chrono::steady_clock;

// One sweep across its ranks: its inputs, this rank's place, the points' skip reasons, the points the journal
// already holds (--resume), and the outcome built so far.
struct SweepRun {
  SweepRun(Backend& backend_, const std::vector<ExpandedPoint>& points_, const RunOptions& options_, RankComm& comm_)
      : backend(backend_), points(points_), options(options_), comm(comm_), root(comm_.rank() == 0),
        several(comm_.size() > 1), journal_path(report::journal_path_for(options_.output_path)) {}
  Backend& backend;
  const std::vector<ExpandedPoint>& points;
  const RunOptions& options;
  RankComm& comm;
  const bool root, several;
  const std::string journal_path;
  std::vector<std::string> skip_reasons;
  std::map<std::string, PointRecord> finished;
  SweepOutcome outcome;
};

// Rank 0 opens the journal (created, replaced or resumed only now) and, on --resume, says how many points it holds.
void open_journal_on_root(SweepRun& run) {
  run.outcome.journal = open_journal(run.journal_path, run.options,
                                     journal_header_for(run.backend, run.points, run.comm.size()), run.finished,
                                     run.outcome.resumed_from_build);
  if (!run.options.resume) return;
  std::size_t have = 0;
  for (const auto& p : run.points) have += run.finished.count(point_key(p.spec));
  std::fprintf(stderr, "%s: resuming %zu/%zu points from %s\n", xs::program_name(), have, run.points.size(),
               run.journal_path.c_str());
}

// Steps 1-3: outputs, points, then the journal; every rank learns which points are finished, and gets them
// (several ranks: each checks the points on its own backend and describes itself to rank 0).
void prepare_sweep(SweepRun& run) {
  using nlohmann::json;
  if (!run.several) {
    check_outputs(run.options);
    run.skip_reasons = check_points(run.backend, run.points);
    open_journal_on_root(run);
    return;
  }
  const json done = gather_combine_broadcast(
      run.comm,
      [&] {
        run.skip_reasons = check_points(run.backend, run.points);
        return rank_description(run.backend, run.comm.rank());
      },
      [&](std::vector<json> by_rank) {
        check_outputs(run.options);
        open_journal_on_root(run);
        run.outcome.ranks = std::move(by_rank);
        json records = json::object();
        for (const auto& [key, record] : run.finished) records[key] = report::to_json(record);
        return records;
      });
  if (!run.root)
    for (const auto& [key, record] : done.items()) run.finished.emplace(key, report::record_from_json(record, key));
  if (run.root) run.outcome.launch = {{"model", run.comm.kind()}, {"num_ranks", run.comm.size()}};
}

// Point i measured, or recorded as skipped with its reason, and appended to the journal. Several ranks: every rank
// starts it together, rank 0 merges their records (per repetition the slowest rank) and appends the merge, which
// every rank gets back.
PointRecord run_point(SweepRun& run, std::size_t i) {
  using nlohmann::json;
  const PointSpec& spec = run.points[i].spec;
  const bool skip = !run.skip_reasons[i].empty();
  const auto measure = [&] {
    if (!skip) return run.backend.run(spec);
    PointRecord record;
    record.id = point_id(spec);
    record.spec = spec;
    record.skipped = true;
    record.skip_reason = run.skip_reasons[i];
    return record;
  };
  if (!run.several) {
    PointRecord record = measure();
    run.outcome.journal->append(record);
    return record;
  }
  run.comm.barrier();  // every rank starts the point together
  const json merged = gather_combine_broadcast(
      run.comm, [&] { return report::to_json(measure()); },
      [&](std::vector<json> by_rank) {
        std::vector<PointRecord> records;
        for (std::size_t r = 0; r < by_rank.size(); ++r)
          records.push_back(report::record_from_json(by_rank[r], fmt::format("rank {}", r)));
        const PointRecord m = merge_rank_records(records);
        run.outcome.journal->append(m);
        return report::to_json(m);
      });
  return report::record_from_json(merged, describe_point(spec));
}

// An error that abandons the point after a stop request (rather than failing the sweep): the point outran the
// grace period, or, with several ranks, the ranks agreed on the interrupt.
bool is_abandoned(const Error& e, bool several) {
  return dynamic_cast<const PointInterrupted*>(&e) != nullptr ||
         (several && dynamic_cast<const RankAgreedError*>(&e) != nullptr &&
          static_cast<int>(e.code()) == kInterruptedExitCode);
}

// Every point in sweep order until a stop: a finished one taken from the journal, the others run (with the
// progress line and its ETA) and added to the outcome. Returns whether the sweep stopped early.
bool run_points(SweepRun& run, const std::optional<StopSignalScope>& signals, bool draw, SweepClock::time_point t0) {
  const std::vector<ExpandedPoint>& points = run.points;
  SweepOutcome& outcome = run.outcome;
  std::size_t measured = 0;
  double measured_s = 0;
  bool stopped = false;
  for (std::size_t i = 0; i < points.size() && !stopped; ++i) {
    const PointSpec& spec = points[i].spec;
    if (auto it = run.finished.find(point_key(spec)); it != run.finished.end()) {
      outcome.records.push_back(it->second);
      ++outcome.num_resumed;
      continue;
    }
    stopped = run.root && signals->stopping();
    if (run.several) stopped = broadcast_string(run.comm, stopped ? "stop" : "go") == "stop";
    if (stopped) break;
    if (run.root) signals->set_point_number(i + 1);
    const bool skip = !run.skip_reasons[i].empty();
    if (!skip) {
      const double elapsed_s = std::chrono::duration<double>(SweepClock::now() - t0).count();
      const std::size_t left = points.size() - i;
      const double eta_s = measured ? measured_s / static_cast<double>(measured) * static_cast<double>(left) : 0;
      draw_progress(draw, i, points.size(), describe_point(spec), elapsed_s, eta_s);
    }
    const auto p0 = SweepClock::now();
    PointRecord record;
    try {
      record = run_point(run, i);
    } catch (const Error& e) {
      if (!is_abandoned(e, run.several)) throw;
      if (run.root)
        std::fprintf(stderr, "%s: point %zu/%zu (%s) abandoned: it was still running %.0f s after the stop "
                     "request\n", xs::program_name(), i + 1, points.size(), describe_point(spec).c_str(), kStopGraceS);
      stopped = true;
      break;
    }
    if (skip) {
      ++outcome.num_skipped;
    } else {
      measured_s += std::chrono::duration<double>(SweepClock::now() - p0).count();
      ++measured;
    }
    if (run.root && record.verification.wrong > 0)
      std::fprintf(stderr, "\n%s: VERIFICATION FAILED at %s: %llu wrong words of %llu bytes checked\n",
                   xs::program_name(), describe_point(spec).c_str(),
                   static_cast<unsigned long long>(record.verification.wrong),
                   static_cast<unsigned long long>(record.verification.bytes_checked));
    outcome.records.push_back(std::move(record));
  }
  return stopped;
}

}  // namespace

nlohmann::json rank_description(const Backend& backend, int rank) {
  const nlohmann::json d = backend.describe();
  nlohmann::json out = {{"rank", rank}, {"backend", backend.name()}};
  if (auto planted = d.find("planted"); planted != d.end() && planted->is_object() && planted->contains("seed"))
    out["seed"] = planted->at("seed");
  if (nlohmann::json device = device_of(d); !device.is_null()) out["device"] = std::move(device);
  return out;
}

SweepOutcome run_sweep(Backend& backend, const std::vector<ExpandedPoint>& points, const RunOptions& options) {
  SingleRankComm one;
  return run_sweep(backend, points, options, one);
}

SweepOutcome run_sweep(Backend& backend, const std::vector<ExpandedPoint>& points, const RunOptions& options,
                       RankComm& comm) {
  const auto t0 = SweepClock::now();
  SweepRun run(backend, points, options, comm);

  // 1-3: outputs, points, then the journal (created, replaced or resumed only now); every rank learns which
  // points are finished, and gets them.
  prepare_sweep(run);

  std::optional<StopSignalScope> signals;  // rank 0 decides when to stop; the others follow its word
  if (run.root) signals.emplace(points.size(), /*abandons_long_points=*/true);
  const bool draw = run.root && options.progress && isatty(STDERR_FILENO);
  const bool stopped = run_points(run, signals, draw, t0);
  clear_progress(draw);
  if ((stopped || (run.root && signals->stopping())) && run.outcome.records.size() < points.size())
    run.outcome.interrupted = true;
  run.outcome.wall_s = std::chrono::duration<double>(SweepClock::now() - t0).count();
  return std::move(run.outcome);
}

}  // namespace xs::bench
