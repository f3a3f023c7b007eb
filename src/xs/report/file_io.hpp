// xstage report layer: the few POSIX file operations the result writer and the journal need (whole-file
// read, complete writes, directory fsync, output-path checks). Failures are Errors in domain "io" with
// exit code 2 (bad path).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "xs/common/error.hpp"

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

// Where an output may go besides a file. kFile: only a regular file. kFileOrStream: also the process's own
// standard output or error (a stream path, see stream_fd), written directly. kJournal: a run's own journal
// (<out>.journal.jsonl), the one output that may be named and shaped like a journal.
enum class OutputKind { kFile, kFileOrStream, kJournal };

// The file descriptor a path names by itself: "-" and /dev/stdout 1, /dev/stderr 2, /dev/stdin 0, and N for
// /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N or /proc/<this pid>/fd/N; -1 for any other path.
int named_fd(const std::string& path);
// True for a stream path (stream_fd > 0): never created or renamed over, written directly.
bool is_stream_path(const std::string& path);
// 1 (stdout) or 2 (stderr) for a stream path; -1 otherwise. A stream path is one that names fd 1 or 2
// (named_fd: "-", /dev/stdout, /dev/stderr, /dev/fd/1, /proc/self/fd/2, ...) or the existing regular file the
// process's stdout or stderr writes to (`--csv log.txt > log.txt`, by device and inode): an atomic rename over
// that file would leave the stream writing into an unlinked inode and lose what either of them wrote.
int stream_fd(const std::string& path);

// Checks, without changing anything lasting, that a regular file can be written at `path`: the path is absent or
// a writable regular file (never a read-only file, a device such as /dev/null, a fifo, a socket or a folder, also
// behind a symlink), its file name is within the file system's limit (max_name_bytes), and its folder is a
// writable folder, or can be created (the nearest existing ancestor is a writable folder). A symlink is judged by
// its target (the file written through it). The folder is probed: a temporary file is created in it and removed
// (or, where the folder is still to be created, a temporary folder in its nearest existing ancestor), so that a
// folder that looks writable but takes no file (sysfs as root) is refused here, before anything is measured. A
// stream path is accepted only with OutputKind::kFileOrStream. Only OutputKind::kJournal may name a journal: a
// path ending in ".journal.jsonl" or an existing file whose first line is a journal header is another run's
// journal, which an output would destroy. `what` names the option in the message ("--out"). Throws io_error
// (exit 2) naming the path. Call it for every output before anything is measured; it also notes what is at the
// path for changed_since_checked.
void check_output_path(const std::string& path, const std::string& what, OutputKind kind = OutputKind::kFile);

// The longest file name (one path component, in bytes) the file system holding folder `dir` takes: pathconf's
// _PC_NAME_MAX, else NAME_MAX (255). check_output_path refuses an output whose name is longer.
std::size_t max_name_bytes(const std::string& dir);

// mkstemp's template for the temporary file written beside `path` before it is renamed into place:
// "<path>.tmp.XXXXXX", its name cut short (at a UTF-8 character boundary) where the whole would pass the file
// system's limit per name, so that an output name of up to that limit has a temporary too.
std::string temporary_name_template(const std::string& path);

// Two commands writing one output (only journals are locked): check_output_path notes what is at each output path
// the first time this process checks it, and write_outputs_atomic refuses to replace a file that another process
// created, replaced or changed since then. `changed_since_checked` says how it changed ("" where it did not, or
// where this process never checked it); `note_written` (after this process wrote it) forgets the path, so that its
// next check starts afresh.
std::string changed_since_checked(const std::string& resolved_path);
void note_written(const std::string& resolved_path);

// check_output_path, then creates the missing folders of `path` (io_error if that fails); nothing for a
// stream.
void prepare_output_path(const std::string& path, const std::string& what, OutputKind kind = OutputKind::kFile);

// The file a write to `path` replaces: `path` itself, or the final target of a symlink (chain), so that an
// atomic rename writes through the link and leaves it a link.
std::string resolved_output_path(const std::string& path);

// An output or input path with the option that named it ("--junit", "--candidate", "the journal").
struct NamedPath {
  std::string path;
  std::string what;
};
// No output overwrites an input or another output: every non-empty output must differ from every input and
// every other output, by resolved path (symlinks and ".." followed) and, where both exist, by device and
// inode (hard links). Throws input_error(output.what, ...) naming both (exit 2); run it before anything is
// read, measured or written.
void check_distinct_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);
// No input is given twice: inputs whose every entry counts (result files scored together, calibrations
// judged side by side) must be distinct files, by resolved path and by device and inode (a symlink, "..",
// a hard link). Throws input_error(the later one's what, ...) naming both paths (exit 2).
void check_distinct_inputs(const std::vector<NamedPath>& inputs);
// No input is a copy of another: files holding the same JSON values (a byte copy, or one re-serialized with other
// whitespace or key order; a file that is not JSON is compared by its bytes) would count every row twice. Throws
// input_error(the later one's what, ...) naming both (exit 2). Reads each file; after check_distinct_inputs.
void check_distinct_contents(const std::vector<NamedPath>& inputs);

// "a character device", "a fifo", "a folder", ... for the file at `path`; "" when it is absent or a
// regular file. Follows symlinks.
std::string non_regular_kind(const std::string& path);

}  // namespace xs::report
