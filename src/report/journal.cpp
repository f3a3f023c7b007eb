// xstage report layer: the JSON-lines journal of finished points (see result_file.hpp). A line is complete
// only when its '\n' is on disk: each append is one write of "<record>\n" followed by fsync.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "common/error.hpp"
#include "report/file_io.hpp"
#include "report/json_read.hpp"
#include "report/result_file.hpp"

namespace xs::report {
namespace {

// Cuts a trailing line without '\n' (left by a process killed mid-append). Without this, the next append
// would glue a record onto the fragment and turn a tolerated tail into a corrupt middle line.
void drop_partial_tail(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw io_error(path, std::string("fstat: ") + std::strerror(errno));
  off_t end = st.st_size;
  char chunk[4096];
  while (end > 0) {
    const off_t start = end > static_cast<off_t>(sizeof chunk) ? end - static_cast<off_t>(sizeof chunk) : 0;
    const auto length = static_cast<std::size_t>(end - start);
    if (::pread(fd, chunk, length, start) != static_cast<ssize_t>(length)) {
      throw io_error(path, "cannot read the journal's tail");
    }
    for (std::size_t i = length; i > 0; --i) {
      if (chunk[i - 1] != '\n') continue;
      const off_t keep = start + static_cast<off_t>(i);
      if (keep != st.st_size && ::ftruncate(fd, keep) != 0) {
        throw io_error(path, std::string("cannot drop the partial last line: ") + std::strerror(errno));
      }
      return;
    }
    end = start;
  }
  if (st.st_size > 0 && ::ftruncate(fd, 0) != 0) {  // one partial line and nothing else
    throw io_error(path, std::string("cannot drop the partial line: ") + std::strerror(errno));
  }
}

}  // namespace

std::string journal_path_for(const std::string& output_path) { return output_path + ".journal.jsonl"; }

Journal::Journal(const std::string& path, bool truncate) : path_(path) {
  const int flags = O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0);
  fd_ = ::open(path.c_str(), flags, 0666);
  if (fd_ < 0) throw io_error(path, std::string("cannot open the journal: ") + std::strerror(errno));
  try {
    if (!truncate) drop_partial_tail(fd_, path_);
  } catch (...) {
    ::close(fd_);
    throw;
  }
  fsync_parent_dir(path_);
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(const PointRecord& record) {
  const std::string line = dump_strict(to_json(record), -1) + "\n";  // to_json refuses invalid records
  const off_t before = ::lseek(fd_, 0, SEEK_END);
  try {
    write_all(fd_, line, path_);
    if (::fsync(fd_) != 0) throw io_error(path_, std::string("fsync: ") + std::strerror(errno));
  } catch (...) {
    // A short write (disk full) would leave a fragment in front of the next record; take it back out.
    if (before >= 0) (void)::ftruncate(fd_, before);
    throw;
  }
}

std::vector<PointRecord> parse_journal(std::string_view text, const std::string& source) {
  std::vector<PointRecord> records;
  std::size_t pos = 0;
  for (std::size_t line_no = 1;; ++line_no) {
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

std::vector<PointRecord> read_journal(const std::string& path) { return parse_journal(read_text_file(path), path); }

}  // namespace xs::report
