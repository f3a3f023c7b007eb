// xstage report layer: the JSON-lines journal beside an output (`<out>.journal.jsonl`). Line 1 is a header
// naming the run (backend, seed, simulator parameters, device, targets, git sha, sweep hash) so --resume
// can refuse another run's journal; every further line is one finished PointRecord, fsync'd as the point
// ends, so SIGINT/SIGKILL loses no finished point. A run holds an advisory lock (flock) on its journal.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/report/records.hpp"

namespace xs::report {

inline constexpr const char* kJournalSchemaName = "xstage.journal";
inline constexpr const char* kJournalSchemaVersion = "1.0";

// What makes two runs the same run: a journal is resumed only by a run with an equal header.
struct JournalHeader {
  std::string backend;                          // "gpu", "sim"
  std::string target;                           // the sweep's targets in first-use order, comma-joined
  nlohmann::json seed = nlohmann::json();       // the simulator's seed; null on hardware
  nlohmann::json sim = nlohmann::json();        // the simulator's planted parameters (seed aside); null on hardware
  nlohmann::json device = nlohmann::json();     // {"index", "name", "uuid"} of the measured GPU; null for sim
  std::string git_sha;                          // of the binary that measures
  std::string config_hash;                      // sweep_hash() of the expanded sweep
  std::uint64_t num_points = 0;                 // points in the expanded sweep
};
nlohmann::json to_json(const JournalHeader& header);  // {"schema": {...}, "backend": ..., ...}
// Strict (unknown keys, wrong types, another schema are input_error naming the field).
JournalHeader journal_header_from_json(const nlohmann::json& j, const std::string& path);

// "fnv1a64:<16 hex digits>" of the specs' canonical JSON in order: equal iff the same points in the same order.
std::string sweep_hash(const std::vector<PointSpec>& specs);
// The same hash over specs already in canonical JSON (suites whose points are not PointSpecs, e.g. fa_a2a);
// sweep_hash(specs) == json_sweep_hash(to_json of each spec).
std::string json_sweep_hash(const std::vector<nlohmann::json>& canonical_specs);

// The first field where `journal` (what the journal was started with) and `run` (this command) differ,
// as "sim.R_Bps (journal: 7.17e+11, this run: 5e+11)"; nullopt when they describe the same run.
// `any_build`: the build (git_sha) is not compared (--resume-any-build).
std::optional<std::string> header_mismatch(const JournalHeader& journal, const JournalHeader& run,
                                           bool any_build = false);

std::string journal_path_for(const std::string& output_path);

struct JournalContents {
  JournalHeader header;
  std::vector<PointRecord> records;
};

// An open, locked journal. The lock is flock(LOCK_EX) on the journal itself, held until destruction; a
// second process gets io_error "another run holds <path>" (exit 2).
class Journal {
 public:
  // Creates a new journal (refuses an existing file), locks it and writes `header` as line 1. On any
  // failure nothing is left at `path`.
  static std::unique_ptr<Journal> create(const std::string& path, const JournalHeader& header);
  // Opens and locks an existing journal without changing it.
  static std::unique_ptr<Journal> open_existing(const std::string& path);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // The header and every complete record (read through the locked descriptor; see parse_journal_file).
  JournalContents read() const;
  // Before appending to a resumed journal: cuts a partial last line left by a kill mid-append.
  void drop_partial_tail();
  // Starts over: truncates and writes `header` as line 1.
  void restart(const JournalHeader& header);
  void append(const PointRecord& record);
  // One line of any JSON object (suites whose records are not PointRecords); same durability as append.
  void append_json(const nlohmann::json& line);
  const std::string& path() const { return path_; }

 private:
  Journal(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  void write_header(const JournalHeader& header);
  std::string path_;
  int fd_ = -1;
};

// A whole journal: line 1 the header (a journal without one, as written before headers existed, is an
// input_error saying so), then parse_journal's rules for the rest.
JournalContents parse_journal_file(std::string_view text, const std::string& source);
JournalContents read_journal(const std::string& path);  // a missing file is an io error
// Record lines only: every complete line must be a point record; a last line without '\n' (a write cut
// short) is ignored; a corrupt complete line is an input_error "<source>:<line> <field>".
// `first_line` numbers the first line of `text` in messages.
std::vector<PointRecord> parse_journal(std::string_view text, const std::string& source, std::size_t first_line = 1);

}  // namespace xs::report
