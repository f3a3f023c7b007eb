// xstage report layer: POSIX file helpers (see file_io.hpp).
#include "report/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace xs::report {

std::string read_text_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
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

void check_output_path(const std::string& path, const std::string& what) {
  const std::string label = what.empty() ? "" : what + " ";
  if (path.empty()) throw input_error(what, "an output path is required");
  if (const std::string kind = non_regular_kind(path); !kind.empty()) {
    throw io_error(path, fmt::format("{}is {}, not a regular file; xstage writes only regular files (give a "
                                     "file path such as out/result.json)", label, kind));
  }
  // The nearest existing ancestor must be a writable, searchable folder: then the missing ones below it
  // can be created and the temporary file of the atomic write can be made beside the output.
  std::filesystem::path dir = parent_of(path);
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

void prepare_output_path(const std::string& path, const std::string& what) {
  check_output_path(path, what);
  std::error_code ec;
  std::filesystem::create_directories(parent_of(path), ec);
  if (ec) {
    throw io_error(path, fmt::format("{}cannot create its folder {}: {}", what.empty() ? "" : what + " ",
                                     parent_of(path).string(), ec.message()));
  }
}

}  // namespace xs::report
