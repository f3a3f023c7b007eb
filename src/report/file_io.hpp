// xstage report layer: the few POSIX file operations the result writer and the journal need (whole-file
// read, complete writes, directory fsync, output-path checks). Failures are Errors in domain "io" with
// exit code 2 (bad path).
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

// Checks, without changing anything, that a regular file can be written at `path`: the path is absent or
// a regular file (never a device such as /dev/null, a fifo, a socket or a folder, also behind a symlink),
// and its folder is a writable folder, or can be created (the nearest existing ancestor is a writable
// folder). `what` names the option in the message ("--out"). Throws io_error (exit 2) naming the path.
// Call it for every output before anything is measured.
void check_output_path(const std::string& path, const std::string& what);

// check_output_path, then creates the missing folders of `path` (io_error if that fails).
void prepare_output_path(const std::string& path, const std::string& what);

// "a character device", "a fifo", "a folder", ... for the file at `path`; "" when it is absent or a
// regular file. Follows symlinks.
std::string non_regular_kind(const std::string& path);

}  // namespace xs::report
