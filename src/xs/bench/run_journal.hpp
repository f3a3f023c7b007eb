// xstage bench layer: opening the journal of a run, with the rules every suite shares (docs/result-schema.md
// "Journal"): create it when absent, refuse --resume without one, refuse an unfinished run's journal without
// --resume ("use --resume or remove it"), start a finished run's journal over, and on --resume refuse another
// run's header (naming the first difference) and cut a partial last line off.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "xs/report/journal.hpp"

namespace xs::bench {

// What an existing journal holds, as the suite reads its own point lines.
struct JournalState {
  report::JournalHeader header;
  std::size_t num_finished = 0;  // distinct finished points
};

// Opens, creates or restarts `journal_path` (beside `output_path`) for a run described by `header`.
// `read_existing` is called (with the locked journal) only when the file exists; the caller keeps what it
// parsed and, after a --resume return, takes its finished points from it. Throws input_error / io_error
// (exit 2); creates the output's folders only when it creates the journal.
// `any_build` (--resume-any-build): on --resume a journal written by another build of the tools (another
// git_sha or dirty flag; every other field must still match) is continued, with a note on stderr, and
// `*resumed_from_build` (when given) is set to the journal's build, which the result's meta records as
// resumed_from_build; it stays empty when the builds agree.
std::shared_ptr<report::Journal> open_run_journal(
    const std::string& journal_path, const std::string& output_path, bool resume,
    const report::JournalHeader& header, const std::function<JournalState(const report::Journal&)>& read_existing,
    bool any_build = false, std::string* resumed_from_build = nullptr);

// --dry-run's share of what open_run_journal and the runner check before measuring, changing nothing: --out
// and the journal must be writable regular-file paths (report::check_output_path), --resume needs a journal,
// an existing journal must read (`read_existing(journal_path)`, which throws what the run's reader throws)
// and, without --resume, hold a finished run whose result exists (the run would start it over). Throws the
// run's own refusals (exit 2). The header is compared with this run's only by the run itself (it needs the
// backend's description).
void check_journal_for_dry_run(const std::string& journal_path, const std::string& output_path, bool resume,
                               const std::function<JournalState(const std::string&)>& read_existing);

// After a finished run wrote `output_path`: one note on stderr saying why its journal stays beside it
// (--resume rebuilds the result from it without measuring; the next run without --resume starts it over;
// removing it is safe). Prints nothing when there is no journal.
void note_kept_journal(const std::string& tool, const std::string& output_path);

// Runs `write` (a sweep's outputs, after every point was measured); where it throws an xs::Error, rethrows it with
// where the `num_points` measured points are kept (the journal beside `output_path`) and how to fit them again.
void write_keeping_points(const std::function<void()>& write, std::size_t num_points, const std::string& output_path);

}  // namespace xs::bench
