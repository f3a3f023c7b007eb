// xstage report layer: POSIX file helpers (see file_io.hpp).
#include "xs/report/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "xs/report/fnv1a.hpp"

namespace xs::report {

std::string read_text_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever before the type check below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw io_error(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw io_error(path, "not a regular file");
  }
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw io_error(path, std::string("read failed: ") + std::strerror(err));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

void write_all(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw io_error(path, std::string("write failed: ") + std::strerror(errno));
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void fsync_parent_dir(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::filesystem::path dir = parent.empty() ? std::filesystem::path(".") : parent;
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

std::string non_regular_kind(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {  // absent (ENOTDIR: a parent is a file; the caller names it)
      struct stat lst {};
      if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) return "a dangling symlink";
      return "";
    }
    return std::string("unreadable (") + std::strerror(errno) + ")";
  }
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "a folder";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISFIFO(st.st_mode)) return "a fifo";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

namespace {

std::filesystem::path parent_of(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

}  // namespace

int named_fd(const std::string& path) {
  if (path == "-") return STDOUT_FILENO;
  const std::string p = std::filesystem::path(path).lexically_normal().string();
  if (p == "/dev/stdin") return STDIN_FILENO;
  if (p == "/dev/stdout") return STDOUT_FILENO;
  if (p == "/dev/stderr") return STDERR_FILENO;
  // /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N and /proc/<this pid>/fd/N name this process's fd N.
  const std::string prefixes[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/",
                                  fmt::format("/proc/{}/fd/", ::getpid())};
  for (const std::string& prefix : prefixes) {
    if (p.size() <= prefix.size() || p.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = p.substr(prefix.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoi(digits);
  }
  return -1;
}

namespace {

// True when `path` exists and is the regular file that fd `fd` writes to (`--csv log.txt > log.txt`): an
// atomic rename there would leave the fd writing into an unlinked inode, so the path is that stream.
bool is_file_behind_fd(const std::string& path, int fd) {
  struct stat fd_st {}, path_st {};
  if (::fstat(fd, &fd_st) != 0 || !S_ISREG(fd_st.st_mode)) return false;
  if (::stat(path.c_str(), &path_st) != 0) return false;
  return fd_st.st_dev == path_st.st_dev && fd_st.st_ino == path_st.st_ino;
}

}  // namespace

bool is_stream_path(const std::string& path) { return stream_fd(path) > 0; }

int stream_fd(const std::string& path) {
  if (path.empty()) return -1;
  const int fd = named_fd(path);
  if (fd == STDOUT_FILENO || fd == STDERR_FILENO) return fd;
  if (fd >= 0) return -1;  // stdin or another descriptor: check_output_path refuses it
  for (const int std_fd : {STDOUT_FILENO, STDERR_FILENO})
    if (is_file_behind_fd(path, std_fd)) return std_fd;
  return -1;
}

std::string resolved_output_path(const std::string& path) {
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode)) return path;
  std::error_code ec;
  const std::filesystem::path target = std::filesystem::canonical(path, ec);
  return ec ? path : target.string();  // a dangling link: check_output_path names it
}

namespace {

constexpr std::string_view kJournalSuffix = ".journal.jsonl";  // report::journal_path_for

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// An existing regular file whose first line is a journal header ({"backend":...,"schema":{"name":"xstage.journal"...).
bool starts_with_journal_header(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  std::string head;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char buffer[4096];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) head.assign(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  head = head.substr(0, head.find('\n'));
  return head.find("\"schema\":{\"name\":\"xstage.journal\"") != std::string::npos;
}

// What was at an output path when this process first checked it (by resolved path), for changed_since_checked.
struct OutputState {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  struct timespec mtime {};
};

OutputState state_of(const std::string& resolved_path) {
  OutputState s;
  struct stat st {};
  if (::stat(resolved_path.c_str(), &st) != 0) return s;
  s.exists = true;
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.size = st.st_size;
  s.mtime = st.st_mtim;
  return s;
}

std::mutex g_states_mutex;  // ranks run as threads (--gpus N)
std::map<std::string, OutputState>& first_states() {
  static std::map<std::string, OutputState> states;
  return states;
}

void note_first_state(const std::string& resolved_path) {
  const OutputState s = state_of(resolved_path);
  const std::lock_guard<std::mutex> lock(g_states_mutex);
  first_states().emplace(resolved_path, s);
}

// A file name longer than the file system takes (ENAMETOOLONG when created), named before anything runs. A journal's
// name is --out's and ".journal.jsonl", so its refusal says how long --out's name may be.
void check_name_length(const std::string& path, const std::string& label, OutputKind kind, std::size_t max_bytes) {
  const std::string name = std::filesystem::path(resolved_output_path(path)).filename().string();
  if (name.size() <= max_bytes) return;
  const std::string journal_hint =
      kind == OutputKind::kJournal && ends_with(name, kJournalSuffix)
          ? fmt::format(" (a journal is named <out>{}: give --out a file name of at most {} bytes)", kJournalSuffix,
                        max_bytes - std::string(kJournalSuffix).size())
          : "";
  throw io_error(path, fmt::format("{}has a file name of {} bytes, over the {} bytes per name this file system "
                                   "takes{}; give a shorter name", label, name.size(), max_bytes, journal_hint));
}

// Creates and removes a temporary file beside the output (`own_folder`: `dir` is the output's folder) or a temporary
// folder in `dir` (its nearest existing ancestor): access() grants root everything, also where the file system
// takes no new entry (sysfs), which the write after a whole sweep would find.
void probe_folder(const std::string& path, const std::string& label, const std::string& dir, bool own_folder) {
  std::string name = own_folder ? temporary_name_template(resolved_output_path(path)) : dir + "/.xs-probe.XXXXXX";
  std::vector<char> buffer(name.begin(), name.end());
  buffer.push_back('\0');
  if (own_folder) {
    const int fd = ::mkstemp(buffer.data());
    if (fd >= 0) {
      ::close(fd);
      ::unlink(buffer.data());
      return;
    }
  } else if (::mkdtemp(buffer.data()) != nullptr) {
    ::rmdir(buffer.data());
    return;
  }
  const int err = errno;
  throw io_error(path, fmt::format("{}cannot be written: folder {} takes no new {} ({})", label, dir,
                                   own_folder ? "file" : "folder", std::strerror(err)));
}

}  // namespace

std::string temporary_name_template(const std::string& path) {
  const std::string suffix = ".tmp.XXXXXX";
  const std::size_t slash = path.rfind('/');
  const std::size_t name_at = slash == std::string::npos ? 0 : slash + 1;
  std::string name = path.substr(name_at);
  const std::size_t max_bytes = max_name_bytes(name_at == 0 ? "." : path.substr(0, name_at));
  if (name.size() + suffix.size() > max_bytes && max_bytes > suffix.size()) {
    std::size_t keep = max_bytes - suffix.size();
    while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) --keep;  // a continuation byte
    name.resize(keep);
  }
  return path.substr(0, name_at) + name + suffix;
}

std::string changed_since_checked(const std::string& resolved_path) {
  OutputState before;
  {
    const std::lock_guard<std::mutex> lock(g_states_mutex);
    const auto it = first_states().find(resolved_path);
    if (it == first_states().end()) return "";
    before = it->second;
  }
  const OutputState now = state_of(resolved_path);
  if (!before.exists) return now.exists ? "it was created" : "";
  if (!now.exists) return "it was removed";
  if (now.dev != before.dev || now.ino != before.ino) return "it was replaced";
  if (now.size != before.size || now.mtime.tv_sec != before.mtime.tv_sec || now.mtime.tv_nsec != before.mtime.tv_nsec)
    return "it was changed";
  return "";
}

void note_written(const std::string& resolved_path) {
  const std::lock_guard<std::mutex> lock(g_states_mutex);
  first_states().erase(resolved_path);  // the next check of it starts afresh
}

std::size_t max_name_bytes(const std::string& dir) {
  const long limit = ::pathconf(dir.empty() ? "." : dir.c_str(), _PC_NAME_MAX);
  return limit > 0 ? static_cast<std::size_t>(limit) : static_cast<std::size_t>(NAME_MAX);
}

void check_output_path(const std::string& path, const std::string& what, OutputKind kind) {
  const std::string label = what.empty() ? "" : what + " ";
  if (path.empty()) throw input_error(what, "an output path is required");
  // A path that names a folder by its spelling (`out/`, `.`, `..`): refused here, before anything is measured, not
  // after (a hostile review of 2026-12-07: a whole sweep went into a hidden `out/.journal.jsonl` and was refused).
  if (const std::string name = std::filesystem::path(path).filename().string();
      name.empty() || name == "." || name == "..")
    throw io_error(path, fmt::format("{}names a folder (it ends in '{}'), not a file; give a file name in it such "
                                     "as {}result.json", label, name.empty() ? "/" : name,
                                     name.empty() ? path : path + "/"));
  // A name longer than the file system takes (ENAMETOOLONG), before any check that would stat it.
  if (!is_stream_path(path)) {
    const std::filesystem::path target = resolved_output_path(path);
    std::filesystem::path folder = parent_of(target.string());
    std::error_code ec;
    while (!std::filesystem::is_directory(folder, ec) && folder.has_parent_path() && folder.parent_path() != folder)
      folder = folder.parent_path();
    check_name_length(path, label, kind, max_name_bytes(folder.string()));
  }
  if (const int fd = stream_fd(path); fd > 0) {
    if (kind == OutputKind::kFileOrStream) return;
    const bool named = named_fd(path) == fd;  // else a file the shell redirected the stream into
    throw io_error(path, fmt::format("{}is the standard {}{}, not a file of its own; this output needs a file path "
                                     "such as out/result.json", label, fd == STDOUT_FILENO ? "output" : "error",
                                     named ? "" : " of this command (the shell redirected it there)"));
  }
  if (const int fd = named_fd(path); fd >= 0) {  // stdin, or a descriptor other than 1 and 2
    throw io_error(path, fmt::format("{}names file descriptor {}, not a file; {}", label, fd,
                                     kind == OutputKind::kFileOrStream
                                         ? "a stream output goes only to the standard output or error (-, /dev/stdout, "
                                           "/dev/stderr): give one of them or a file path such as out/table.csv"
                                         : "this output needs a file path such as out/result.json"));
  }
  if (const std::string kind_text = non_regular_kind(path); !kind_text.empty()) {
    throw io_error(path, fmt::format("{}is {}, not a regular file; xstage writes only regular files (give a "
                                     "file path such as out/result.json)", label, kind_text));
  }
  if (kind != OutputKind::kJournal) {
    const std::string target = resolved_output_path(path);
    if (ends_with(path, kJournalSuffix) || ends_with(target, kJournalSuffix) || starts_with_journal_header(target)) {
      throw io_error(path, fmt::format("{}is {}a run's journal (<out>{}), which this output would destroy: give "
                                       "another path (a journal is removed only by hand, once its run is done)",
                                       label, ends_with(path, kJournalSuffix) ? "named like " : "", kJournalSuffix));
    }
  }
  // The atomic rename needs only the folder's write permission, so it would replace a file its owner made
  // read-only (as root, access() grants everything: a file with no write bit at all is read-only too).
  if (struct stat st {}; ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
                         ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0 || ::access(path.c_str(), W_OK) != 0)) {
    const std::string target = resolved_output_path(path);
    throw io_error(path, fmt::format("{}is a read-only file{}; xstage never replaces a file it may not write: make "
                                     "it writable (chmod u+w {}) or give another path", label,
                                     target == path ? "" : " (behind the link, " + target + ")", target));
  }
  // The nearest existing ancestor of the file written (through a symlink: its target) must be a writable,
  // searchable folder: then the missing ones below it can be created and the temporary file of the atomic
  // write can be made beside the output.
  std::filesystem::path dir = parent_of(resolved_output_path(path));
  while (true) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        throw io_error(path, fmt::format("{}cannot be written: {} is not a folder", label, dir.string()));
      }
      if (::access(dir.c_str(), W_OK | X_OK) != 0) {
        throw io_error(path, fmt::format("{}cannot be written: folder {} is not writable ({})", label,
                                         dir.string(), std::strerror(errno)));
      }
      probe_folder(path, label, dir.string(), dir == parent_of(resolved_output_path(path)));
      if (kind != OutputKind::kJournal) note_first_state(resolved_output_path(path));
      return;
    }
    if (errno != ENOENT && errno != ENOTDIR) {  // ENOTDIR: an ancestor is a file; found further up
      throw io_error(path, fmt::format("{}cannot be written: {}: {}", label, dir.string(), std::strerror(errno)));
    }
    std::filesystem::path up = dir.parent_path();
    if (up.empty()) up = ".";  // a relative path: its first component goes into the working folder
    if (up == dir) return;
    dir = up;
  }
}

void prepare_output_path(const std::string& path, const std::string& what, OutputKind kind) {
  check_output_path(path, what, kind);
  if (is_stream_path(path)) return;
  const std::filesystem::path folder = parent_of(resolved_output_path(path));
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) {
    throw io_error(path, fmt::format("{}cannot create its folder {}: {}", what.empty() ? "" : what + " ",
                                     folder.string(), ec.message()));
  }
}

namespace {

// What makes two paths one file: the resolved path, and device and inode where the file exists (a hard
// link resolves to another path). A stream is "<stdout>"/"<stderr>", with the inode of what it writes to
// when that is a regular file (`> input.json` would append to an input).
struct FileIdentity {
  std::string resolved;
  bool has_inode = false;
  dev_t dev = 0;
  ino_t ino = 0;
};

FileIdentity identity_of(const std::string& path) {
  FileIdentity id;
  struct stat st {};
  if (const int fd = stream_fd(path); fd > 0) {
    id.resolved = fd == STDOUT_FILENO ? "<stdout>" : "<stderr>";
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      id.has_inode = true;
      id.dev = st.st_dev;
      id.ino = st.st_ino;
    }
    return id;
  }
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(absolute, ec);
  id.resolved = ec ? absolute.lexically_normal().string() : canonical.string();
  if (::stat(path.c_str(), &st) == 0) {
    id.has_inode = true;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
  }
  return id;
}

bool same_file(const FileIdentity& a, const FileIdentity& b, bool both_outputs) {
  if (a.resolved == b.resolved) return true;
  // Two streams may share a terminal's inode; only a regular file behind a stream is compared.
  if (both_outputs && (a.resolved.front() == '<' || b.resolved.front() == '<')) return false;
  return a.has_inode && b.has_inode && a.dev == b.dev && a.ino == b.ino;
}

}  // namespace

void check_distinct_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  std::vector<std::pair<const NamedPath*, FileIdentity>> seen;  // outputs checked so far
  for (const NamedPath& out : outputs) {
    if (out.path.empty()) continue;
    const FileIdentity id = identity_of(out.path);
    const auto refuse = [&](const NamedPath& other, const char* role) {
      const std::string how = other.path == out.path ? "" : fmt::format(" '{}'", other.path);
      throw input_error(out.what, fmt::format("'{}' is the same file as {}{} ({}); an output never overwrites an "
                                              "input or another output: give another path", out.path, other.what,
                                              how, role));
    };
    for (const NamedPath& in : inputs) {
      if (in.path.empty()) continue;
      if (const int fd = named_fd(in.path); fd >= 0) {
        // An input read through a descriptor (`--model /dev/stdin < cal.json`): the regular file behind it is
        // that input (a hostile review of 2026-12-07 overwrote calibrations and gate configs this way).
        if (is_file_behind_fd(out.path, fd)) refuse(in, "an input, the file behind its descriptor");
        continue;
      }
      if (same_file(id, identity_of(in.path), false)) refuse(in, "an input");
    }
    for (const auto& [other, other_id] : seen)
      if (same_file(id, other_id, true)) refuse(*other, "another output");
    seen.emplace_back(&out, id);
  }
}

void check_distinct_inputs(const std::vector<NamedPath>& inputs) {
  std::vector<std::pair<const NamedPath*, FileIdentity>> seen;
  for (const NamedPath& in : inputs) {
    if (in.path.empty()) continue;
    const FileIdentity id = identity_of(in.path);
    for (const auto& [other, other_id] : seen) {
      if (!same_file(id, other_id, false)) continue;
      const std::string how = other->path == in.path ? "given twice" : fmt::format("the same file as '{}'", other->path);
      throw input_error(in.what, fmt::format("'{}' is {} ({}); every input is counted, so each file may be given "
                                             "only once: drop the duplicate", in.path, how, other->what));
    }
    seen.emplace_back(&in, id);
  }
}

void check_distinct_contents(const std::vector<NamedPath>& inputs) {
  std::map<std::string, std::vector<std::pair<const NamedPath*, std::string>>> by_hash;  // hash -> (input, content)
  for (const NamedPath& in : inputs) {
    if (in.path.empty()) continue;
    std::string content = read_text_file(in.path);
    const nlohmann::json parsed = nlohmann::json::parse(content, nullptr, false);
    if (!parsed.is_discarded()) content = parsed.dump();
    auto& same = by_hash[fnv1a64(content)];
    for (const auto& [other, other_content] : same)
      if (other_content == content)
        throw input_error(in.what, fmt::format("'{}' holds the same content (the same JSON values) as '{}' ({}): a copy "
                                               "would count every row twice; drop it", in.path, other->path,
                                               other->what));
    same.emplace_back(&in, std::move(content));
  }
}

}  // namespace xs::report
