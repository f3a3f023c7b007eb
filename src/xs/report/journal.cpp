// xstage report layer: the JSON-lines journal of finished points and its run header (see journal.hpp).
// A line is complete only when its '\n' is on disk: each append is one write of "<record>\n" and fsync.
#include "xs/report/journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "xs/common/error.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/result_file.hpp"

namespace xs::report {
using nlohmann::json;

namespace {

std::string errno_text() { return std::strerror(errno); }

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// A compact value for a mismatch message: numbers as the journal stores them, strings unquoted.
std::string show(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

// Walks both values in parallel and names the first leaf that differs ("sim.R_Bps").
std::optional<std::string> first_difference(const json& a, const json& b, const std::string& path) {
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      const auto other = b.find(key);
      if (other == b.end()) return fmt::format("{} (journal: {}, this run: absent)", join_path(path, key), show(value));
      if (auto d = first_difference(value, *other, join_path(path, key))) return d;
    }
    for (const auto& [key, value] : b.items())
      if (!a.contains(key)) return fmt::format("{} (journal: absent, this run: {})", join_path(path, key), show(value));
    return std::nullopt;
  }
  if (a == b) return std::nullopt;
  return fmt::format("{} (journal: {}, this run: {})", path, show(a), show(b));
}

// Locks `fd` for this process or throws "another run holds <path>".
void lock_or_throw(int fd, const std::string& path) {
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      throw io_error(path, "another run holds " + path + " (two runs cannot share one output; wait for it, "
                           "or choose another --out)");
    }
    throw io_error(path, std::string("cannot lock the journal: ") + std::strerror(err));
  }
}

}  // namespace

json to_json(const JournalHeader& h) {
  return {{"schema", {{"name", kJournalSchemaName}, {"version", kJournalSchemaVersion}}},
          {"backend", h.backend},
          {"target", h.target},
          {"seed", h.seed},
          {"sim", h.sim},
          {"device", h.device},
          {"git_sha", h.git_sha},
          {"config_hash", h.config_hash},
          {"num_points", h.num_points}};
}

namespace {

// The header but its schema (checked by journal_header_from_json).
JournalHeader journal_header_body(const json& j, const std::string& path) {
  const ObjectReader r(j, path,
                       {"schema", "backend", "target", "seed", "sim", "device", "git_sha", "config_hash", "num_points"});
  JournalHeader h;
  h.backend = read_string(r.required("backend"), r.path("backend"));
  h.target = read_string(r.required("target"), r.path("target"));
  h.seed = r.required("seed");
  if (!h.seed.is_null()) (void)read_unsigned(h.seed, r.path("seed"));
  h.sim = r.required("sim");
  if (!h.sim.is_null()) read_object(h.sim, r.path("sim"));
  h.device = r.required("device");
  if (!h.device.is_null()) read_object(h.device, r.path("device"));
  h.git_sha = read_string(r.required("git_sha"), r.path("git_sha"));
  h.config_hash = read_string(r.required("config_hash"), r.path("config_hash"));
  h.num_points = read_unsigned(r.required("num_points"), r.path("num_points"));
  return h;
}

}  // namespace

JournalHeader journal_header_from_json(const json& j, const std::string& path) {
  // The schema first, so that a journal of another or a newer version is named as such, not as "unknown key".
  read_object(j, path.empty() ? "(document)" : path);
  const auto found = j.find("schema");
  if (found == j.end()) throw input_error(join_path(path, "schema"), "required field is missing");
  const ObjectReader schema(*found, join_path(path, "schema"), {"name", "version"});
  const std::string name = read_string(schema.required("name"), schema.path("name"));
  if (name != kJournalSchemaName)
    throw input_error(schema.path("name"), fmt::format("expected \"{}\", got \"{}\"", kJournalSchemaName, name));
  const std::string version = read_string(schema.required("version"), schema.path("version"));
  unsigned major = 0, minor = 0, reader_major = 0, reader_minor = 0;
  parse_schema_version(kJournalSchemaVersion, reader_major, reader_minor);
  if (!parse_schema_version(version, major, minor) || major != reader_major)
    throw input_error(schema.path("version"),
                      fmt::format("this reader accepts {}.x, got \"{}\"", reader_major, version));
  try {
    return journal_header_body(j, path);
  } catch (const Error& e) {
    throw with_schema_version(e, {kJournalSchemaName, major, minor, reader_major, reader_minor});
  }
}

std::string json_sweep_hash(const std::vector<json>& canonical_specs) {
  std::uint64_t h = fnv1a64("xstage.sweep");
  for (const auto& spec : canonical_specs) h = fnv1a64(spec.dump() + "\n", h);
  return fmt::format("fnv1a64:{:016x}", h);
}

std::string sweep_hash(const std::vector<PointSpec>& specs) {
  std::vector<json> canonical;
  for (const auto& spec : specs) canonical.push_back(to_json(spec));
  return json_sweep_hash(canonical);
}

std::optional<std::string> header_mismatch(const JournalHeader& journal, const JournalHeader& run, bool any_build) {
  // Named fields first, in the order a user would look for the cause.
  json a = to_json(journal), b = to_json(run);
  for (const char* key : {"schema", "backend", "target", "seed", "sim", "device", "git_sha", "num_points",
                          "config_hash"}) {
    if (any_build && std::string(key) == "git_sha") continue;
    if (auto d = first_difference(a.at(key), b.at(key), key)) return d;
  }
  return std::nullopt;
}

std::string journal_path_for(const std::string& output_path) { return output_path + ".journal.jsonl"; }

std::unique_ptr<Journal> Journal::create(const std::string& path, const JournalHeader& header) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST) {
    throw io_error(path, "the journal appeared while this run was starting: another run on the same output? "
                         "(wait for it, or choose another --out)");
  }
  if (fd < 0) throw io_error(path, "cannot create the journal: " + errno_text());
  // Only a process that opened it after our O_EXCL create can hold the lock. Both runs then fail (it finds
  // no header), so the empty file is removed here rather than left to block every later run.
  try {
    lock_or_throw(fd, path);
  } catch (...) {
    ::unlink(path.c_str());
    throw;
  }
  std::unique_ptr<Journal> journal(new Journal(path, fd));
  try {
    journal->write_header(header);
  } catch (...) {
    ::unlink(path.c_str());
    throw;
  }
  fsync_parent_dir(path);
  return journal;
}

std::unique_ptr<Journal> Journal::open_existing(const std::string& path) {
  if (const std::string kind = non_regular_kind(path); !kind.empty())
    throw io_error(path, "the journal is " + kind + ", not a regular file");
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw io_error(path, "cannot open the journal: " + errno_text());
  lock_or_throw(fd, path);
  return std::unique_ptr<Journal>(new Journal(path, fd));
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

JournalContents Journal::read() const {
  std::string text;
  char buffer[1 << 16];
  for (off_t offset = 0;;) {
    const ssize_t n = ::pread(fd_, buffer, sizeof buffer, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw io_error(path_, "cannot read the journal: " + errno_text());
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    offset += n;
  }
  return parse_journal_file(text, path_);
}

void Journal::write_header(const JournalHeader& header) {
  write_all(fd_, dump_strict(to_json(header), -1) + "\n", path_);
  if (::fsync(fd_) != 0) throw io_error(path_, "fsync: " + errno_text());
}

void Journal::restart(const JournalHeader& header) {
  if (::ftruncate(fd_, 0) != 0) throw io_error(path_, "cannot truncate the journal: " + errno_text());
  write_header(header);
}

// Cuts a trailing line without '\n' (left by a process killed mid-append). Without this, the next append
// would glue a record onto the fragment and turn a tolerated tail into a corrupt middle line.
void Journal::drop_partial_tail() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw io_error(path_, "fstat: " + errno_text());
  off_t end = st.st_size;
  char chunk[4096];
  while (end > 0) {
    const off_t start = end > static_cast<off_t>(sizeof chunk) ? end - static_cast<off_t>(sizeof chunk) : 0;
    const auto length = static_cast<std::size_t>(end - start);
    if (::pread(fd_, chunk, length, start) != static_cast<ssize_t>(length)) {
      throw io_error(path_, "cannot read the journal's tail");
    }
    for (std::size_t i = length; i > 0; --i) {
      if (chunk[i - 1] != '\n') continue;
      const off_t keep = start + static_cast<off_t>(i);
      if (keep != st.st_size && ::ftruncate(fd_, keep) != 0) {
        throw io_error(path_, "cannot drop the partial last line: " + errno_text());
      }
      return;
    }
    end = start;
  }
  if (st.st_size > 0 && ::ftruncate(fd_, 0) != 0) {  // one partial line and nothing else
    throw io_error(path_, "cannot drop the partial line: " + errno_text());
  }
}

void Journal::append(const PointRecord& record) { append_json(to_json(record)); }  // refuses invalid records

void Journal::append_json(const json& record) {
  const std::string line = dump_strict(record, -1) + "\n";
  const off_t before = ::lseek(fd_, 0, SEEK_END);
  try {
    write_all(fd_, line, path_);
    if (::fsync(fd_) != 0) throw io_error(path_, "fsync: " + errno_text());
  } catch (...) {
    // A short write (disk full) would leave a fragment in front of the next record; take it back out.
    if (before >= 0) (void)::ftruncate(fd_, before);
    throw;
  }
}

std::vector<PointRecord> parse_journal(std::string_view text, const std::string& source, std::size_t first_line) {
  std::vector<PointRecord> records;
  std::size_t pos = 0;
  for (std::size_t line_no = first_line;; ++line_no) {
    const std::size_t newline = text.find('\n', pos);
    if (newline == std::string_view::npos) break;  // no '\n': a truncated last append, ignored
    const std::string_view line = text.substr(pos, newline - pos);
    pos = newline + 1;
    try {
      records.push_back(record_from_json(parse_json_text(line, ""), ""));
    } catch (const Error& e) {
      const std::string where = fmt::format("{}:{}", source, line_no);
      const std::string field = e.field().empty() ? where : where + " " + e.field();
      throw input_error(field, bare_message(e) + " (every journal line but a truncated last one must be a "
                                                 "complete point record)");
    }
  }
  return records;
}

JournalContents parse_journal_file(std::string_view text, const std::string& source) {
  const std::size_t newline = text.find('\n');
  const std::string remedy = "; this journal cannot be checked against the run that would resume it: remove it "
                             "(or move it away) and measure again";
  if (newline == std::string_view::npos)
    throw input_error(source + ":1", "the journal has no complete header line" + remedy);
  json first;
  try {
    first = parse_json_text(text.substr(0, newline), "");
  } catch (const Error& e) {
    throw input_error(source + ":1", bare_message(e) + " (line 1 must be the journal header)");
  }
  if (first.is_object() && !first.contains("schema") && first.contains("spec")) {
    throw input_error(source + ":1", "the journal has no header line (written by an xstage before journals had "
                                     "one)" + remedy);
  }
  JournalContents contents;
  try {
    contents.header = journal_header_from_json(first, "");
  } catch (const Error& e) {
    const std::string field = e.field().empty() ? source + ":1" : source + ":1 " + e.field();
    throw input_error(field, bare_message(e) + " (line 1 must be the journal header)");
  }
  contents.records = parse_journal(text.substr(newline + 1), source, 2);
  return contents;
}

JournalContents read_journal(const std::string& path) { return parse_journal_file(read_text_file(path), path); }

}  // namespace xs::report
