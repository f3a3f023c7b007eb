// xstage report layer: the few POSIX file operations the result writer and the journal need (whole-file
// read, complete writes, directory fsync). Failures are Errors in domain "io" with exit code 2 (bad path).
#pragma once
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace xs::report {

inline Error io_error(const std::string& path, const std::string& message) {
  return Error(ExitCode::kBadInput, "io", path, path + ": " + message);
}

// Whole file as bytes; a missing file, a directory or a read error is io_error(path, ...).
std::string read_text_file(const std::string& path);

// write(2) until every byte is out (retries EINTR and short writes); throws io_error on failure.
void write_all(int fd, std::string_view bytes, const std::string& path);

// Makes a rename or create in `path`'s directory durable. Best effort: by the time it runs the file is
// already complete, so a failure here is not reported.
void fsync_parent_dir(const std::string& path);

}  // namespace xs::report
