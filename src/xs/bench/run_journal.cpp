// xstage bench layer: the journal-opening rules (see run_journal.hpp).
#include "xs/bench/run_journal.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>

#include "xs/common/error.hpp"
#include "xs/common/program_name.hpp"
#include "xs/report/file_io.hpp"

namespace xs::bench {
namespace {

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool exists_no_follow(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}


// The refusal of an existing journal without --resume, unless it holds a finished run whose result exists.
void check_restartable(const std::string& journal_path, const std::string& output_path, const JournalState& state) {
  const bool finished_run = state.num_finished >= state.header.num_points && is_regular_file(output_path);
  if (finished_run) return;
  throw report::io_error(journal_path, fmt::format("a journal of an unfinished run ({} of {} points) is here: use "
                                                   "--resume or remove it", state.num_finished,
                                                   state.header.num_points));
}

void refuse_resume_without_journal(const std::string& journal_path) {
  throw input_error("--resume", fmt::format("no journal '{}' to resume from (run without --resume to start)",
                                            journal_path));
}

// Reads an existing journal through `read`. One that cannot be read (corrupt, foreign, cut) blocks the run with
// or without --resume: the refusal names the file and how to remove it to start over (exit 2).
JournalState read_or_explain(const std::string& journal_path, bool resume, const std::function<JournalState()>& read) {
  try {
    return read();
  } catch (const Error& e) {
    if (e.code() != ExitCode::kBadInput) throw;
    const std::string message = e.what();
    if (message.find("remove it") != std::string::npos || message.find("remove the journal") != std::string::npos)
      throw;  // the reader already says what to do
    throw Error(e.code(), e.domain(), e.field(),
                message + fmt::format("; the journal {} cannot be read, so {}: remove it (rm '{}') and run again "
                                      "without --resume to start over", journal_path,
                                      resume ? "it cannot be resumed" : "a new run cannot tell whether it holds an "
                                                                         "unfinished run to keep",
                                      journal_path));
  }
}

}  // namespace

void check_journal_for_dry_run(const std::string& journal_path, const std::string& output_path, bool resume,
                               const std::function<JournalState(const std::string&)>& read_existing) {
  report::check_output_path(output_path, "--out");
  report::check_output_path(journal_path, "the journal", report::OutputKind::kJournal);
  if (!exists_no_follow(journal_path)) {
    if (resume) refuse_resume_without_journal(journal_path);
    return;
  }
  const JournalState state = read_or_explain(journal_path, resume, [&] { return read_existing(journal_path); });
  if (!resume) check_restartable(journal_path, output_path, state);
}

std::shared_ptr<report::Journal> open_run_journal(
    const std::string& journal_path, const std::string& output_path, bool resume,
    const report::JournalHeader& header, const std::function<JournalState(const report::Journal&)>& read_existing,
    bool any_build, std::string* resumed_from_build) {
  if (!exists_no_follow(journal_path)) {
    if (resume) refuse_resume_without_journal(journal_path);
    report::prepare_output_path(output_path, "--out");
    return report::Journal::create(journal_path, header);
  }
  std::shared_ptr<report::Journal> journal = report::Journal::open_existing(journal_path);  // locks
  const JournalState state = read_or_explain(journal_path, resume, [&] { return read_existing(*journal); });
  if (!resume) {
    check_restartable(journal_path, output_path, state);
    std::fprintf(stderr, "%s: starting over: %s holds the finished run that wrote %s\n", xs::program_name(),
                 journal_path.c_str(), output_path.c_str());
    journal->restart(header);
    return journal;
  }
  if (auto difference = report::header_mismatch(state.header, header, any_build)) {
    const bool build_only = !report::header_mismatch(state.header, header, true);
    throw input_error("--resume", fmt::format("{} was written by another run: {} differs; resume with the same "
                                              "command and build, or remove the journal to start over{}",
                                              journal_path, *difference,
                                              build_only ? " (only the build differs: --resume-any-build keeps its "
                                                           "points, measured by that build, and the result says so)"
                                                         : ""));
  }
  if (state.header.git_sha != header.git_sha) {
    // What the result will name as the build that measured the journal's points: a commit (7 to 40 hex digits)
    // or "unknown", either with "+dirty"; anything else is not a build this tool wrote.
    std::string id = state.header.git_sha;
    if (id.size() > 6 && id.compare(id.size() - 6, 6, "+dirty") == 0) id.resize(id.size() - 6);
    const bool hex = id.size() >= 7 && id.size() <= 40 &&
                     id.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!hex && id != "unknown")
      throw input_error("--resume-any-build",
                        fmt::format("{}: its header's git_sha is not a build id (accepted: 7 to 40 lowercase hex "
                                    "digits or \"unknown\", optionally with \"+dirty\"): the result could not say "
                                    "which build measured its points; remove the journal to start over",
                                    journal_path));
    std::fprintf(stderr, "%s: --resume-any-build: %s was written by build %s; this build is %s. Its finished "
                 "points are kept as that build measured them; meta.resumed_from_build records it\n",
                 xs::program_name(), journal_path.c_str(), state.header.git_sha.c_str(), header.git_sha.c_str());
    if (resumed_from_build) *resumed_from_build = state.header.git_sha;
  }
  journal->drop_partial_tail();
  return journal;
}

void note_kept_journal(const std::string& tool, const std::string& output_path) {
  const std::string journal = report::journal_path_for(output_path);
  if (!exists_no_follow(journal)) return;
  std::fprintf(stderr, "%s: note: kept the journal %s: --resume rebuilds this result from it without measuring "
               "again; the next run without --resume starts it over; it is safe to remove\n", tool.c_str(),
               journal.c_str());
}

void write_keeping_points(const std::function<void()>& write, std::size_t num_points, const std::string& output_path) {
  try {
    write();
  } catch (const Error& e) {  // nothing was written, but nothing measured is lost: say where it is
    throw Error(e.code(), e.domain(), e.field(),
                fmt::format("{}; the {} measured points are kept in {}: give outputs that can be written and run the "
                            "same command with --resume to use them without measuring again",
                            e.what(), num_points, report::journal_path_for(output_path)));
  }
}

}  // namespace xs::bench
