// xstage report layer: a command's outputs written as one set. Every file goes to a temporary beside its
// destination; only once all are complete are they renamed into place, so an output that fails (a folder that
// takes no files, such as /sys as root; a full disk) leaves none of the set written, and an interrupt never leaves
// a temporary (*.tmp.*) or half a set behind.
#pragma once
#include <signal.h>

#include <string>
#include <vector>

namespace xs::report {

// One output: its path (a file, or with `may_stream` a stream path, report/file_io.hpp), the option that named it
// ("--csv") and its bytes.
struct PendingOutput {
  std::string path;
  std::string what;
  std::string text;
  bool may_stream = false;
};

// Holds SIGINT and SIGTERM for its lifetime (this thread's signal mask): a stop signal that arrives meanwhile is
// delivered, to whatever handler is then installed, when the scope ends.
class StopSignalsHeld {
 public:
  StopSignalsHeld();
  ~StopSignalsHeld();
  StopSignalsHeld(const StopSignalsHeld&) = delete;
  StopSignalsHeld& operator=(const StopSignalsHeld&) = delete;

 private:
  sigset_t old_mask_;
};

// Writes every output, all or none: prepare_output_path (check_output_path and its folders) for each, each file to a temporary beside it
// (fsync), then every rename; a failure before the renames removes every temporary and throws io_error naming
// that output (exit 2). Stream outputs are written last, once the files are in place. SIGINT/SIGTERM are held
// (StopSignalsHeld) from the first temporary to the last rename. Empty paths are skipped. `create_folders` false:
// an output whose folder is missing is refused like any unwritable one (check_output_path alone).
void write_outputs_atomic(const std::vector<PendingOutput>& outputs, bool create_folders = true);

}  // namespace xs::report
