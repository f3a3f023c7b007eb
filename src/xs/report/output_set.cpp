// xstage report layer: all-or-nothing writes of a command's outputs (see output_set.hpp).
#include "xs/report/output_set.hpp"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "xs/common/error.hpp"
#include "xs/report/file_io.hpp"

namespace xs::report {
namespace {

// A complete temporary file beside `path` (mkstemp in the destination's own folder: rename(2) is atomic only
// within one file system), with the permissions a plain create would give.
std::string write_temporary(const std::string& path, const std::string& text) {
  const std::string temp_name = temporary_name_template(path);
  std::vector<char> temp(temp_name.begin(), temp_name.end());
  temp.push_back('\0');
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) throw io_error(path, std::string("cannot create a temporary file beside it: ") + std::strerror(errno));
  const std::string temp_path(temp.data());
  try {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    if (::fchmod(fd, 0666 & ~mask) != 0) throw io_error(temp_path, std::string("chmod: ") + std::strerror(errno));
    write_all(fd, text, temp_path);
    if (::fsync(fd) != 0) throw io_error(temp_path, std::string("fsync: ") + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(temp_path.c_str());
    throw;
  }
  if (::close(fd) != 0) {  // NFS may report a failed write only here
    const int err = errno;
    ::unlink(temp_path.c_str());
    throw io_error(temp_path, std::string("close: ") + std::strerror(err));
  }
  return temp_path;
}

}  // namespace

StopSignalsHeld::StopSignalsHeld() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, &old_mask_);
}

StopSignalsHeld::~StopSignalsHeld() { pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr); }

void write_outputs_atomic(const std::vector<PendingOutput>& outputs, bool create_folders) {
  // Every path checked (and its folders made) before the first byte: an unwritable one is refused with none written.
  for (const PendingOutput& o : outputs) {
    if (o.path.empty()) continue;
    const OutputKind kind = o.may_stream ? OutputKind::kFileOrStream : OutputKind::kFile;
    if (create_folders)
      prepare_output_path(o.path, o.what, kind);
    else
      check_output_path(o.path, o.what, kind);
  }
  struct Staged {
    std::string temp, target, what;
  };
  std::vector<Staged> staged;
  {
    const StopSignalsHeld held;
    const PendingOutput* current = nullptr;
    try {
      for (const PendingOutput& o : outputs) {
        if (o.path.empty() || (o.may_stream && stream_fd(o.path) > 0)) continue;
        current = &o;
        // A symlink is written through: its target is replaced and the link stays.
        const std::string target = resolved_output_path(o.path);
        staged.push_back({write_temporary(target, o.text), target, o.what});
      }
    } catch (const Error& e) {
      for (const Staged& s : staged) ::unlink(s.temp.c_str());
      const std::string what = current == nullptr || current->what.empty() ? "" : current->what + ": ";
      throw Error(e.code(), e.domain(), e.field(),
                  what + e.what() + (outputs.size() > 1 ? "; none of the outputs was written" : ""));
    } catch (...) {
      for (const Staged& s : staged) ::unlink(s.temp.c_str());
      throw;
    }
    // Another command that wrote one of these outputs since this one checked it (two runs given one --csv or
    // --junit; journals are locked): its file is not replaced, and none of the set is written.
    for (const Staged& s : staged) {
      const std::string change = changed_since_checked(s.target);
      if (change.empty()) continue;
      for (const Staged& t : staged) ::unlink(t.temp.c_str());
      const Error e = io_error(s.target, fmt::format("another command wrote this output while this one ran ({} after "
                                                     "this command checked it), so it is not replaced{}: run commands "
                                                     "that share an output one after the other, or give each its own "
                                                     "path", change,
                                                     outputs.size() > 1 ? "; none of the outputs was written" : ""));
      throw Error(e.code(), e.domain(), e.field(), (s.what.empty() ? "" : s.what + ": ") + e.what());
    }
    for (std::size_t i = 0; i < staged.size(); ++i) {
      if (::rename(staged[i].temp.c_str(), staged[i].target.c_str()) == 0) continue;
      const int err = errno;
      for (std::size_t j = i; j < staged.size(); ++j) ::unlink(staged[j].temp.c_str());
      throw io_error(staged[i].target, std::string("rename into place failed: ") + std::strerror(err) +
                                           (i > 0 ? " (the outputs before it were written)" : ""));
    }
  }
  for (const Staged& s : staged) {
    fsync_parent_dir(s.target);
    note_written(s.target);
  }
  for (const PendingOutput& o : outputs) {
    if (o.path.empty() || !o.may_stream) continue;
    if (const int fd = stream_fd(o.path); fd > 0) {
      std::fflush(fd == 1 ? stdout : stderr);  // after what the tool printed there before
      write_all(fd, o.text, o.path);
    }
  }
}

}  // namespace xs::report
