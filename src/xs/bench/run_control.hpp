// xstage bench layer: how a sweep run stops and shows progress, shared by the micro-benchmark runner and
// the application-suite point loop: SIGINT/SIGTERM handlers (the first finishes the point in progress, the
// second aborts) and the one-line progress display on stderr.
#pragma once
#include <cstddef>
#include <string>

namespace xs::bench {

// Installs the stop handlers for its lifetime and restores the previous ones. The first signal sets
// g_stop_requested_ns (bench/backend.hpp) and prints "stopping: finishing point i/n"; the second restores
// the default action and re-raises (the process dies of the signal: 130/143, the journal keeps every
// finished point). `abandons_long_points`: the point in progress polls throw_if_stopping() and is given
// up kStopGraceS after the request (the message says so); otherwise it always runs to its end.
class StopSignalScope {
 public:
  StopSignalScope(std::size_t num_points, bool abandons_long_points);
  ~StopSignalScope();
  StopSignalScope(const StopSignalScope&) = delete;
  StopSignalScope& operator=(const StopSignalScope&) = delete;
  bool stopping() const;
  void set_point_number(std::size_t number) const;  // 1-based, for the message

 private:
  void (*old_int_)(int) = nullptr;
  void (*old_term_)(int) = nullptr;
};

// The exit code of a run that a stop signal ended: 128 + the first signal (130 SIGINT, 143 SIGTERM), the code a
// shell reports for a process that signal killed; 130 when no signal was recorded (docs/exit-codes.md).
int interrupted_exit_code();

// After the sweep (fitting, writing): SIGINT/SIGTERM print "<tool>: interrupted: <message>" on stderr and end the
// process at once with 128 + the signal (the default action, re-raised). `message` says what is kept and what was
// not written. Restores the previous handlers at scope end.
class InterruptExitScope {
 public:
  explicit InterruptExitScope(const std::string& message);
  ~InterruptExitScope();
  InterruptExitScope(const InterruptExitScope&) = delete;
  InterruptExitScope& operator=(const InterruptExitScope&) = delete;
  // Replaces the message (e.g. once the outputs are written); safe against a signal arriving meanwhile.
  void set_message(const std::string& message);

 private:
  void (*old_int_)(int) = nullptr;
  void (*old_term_)(int) = nullptr;
};

// "\r[done/total] what  E s elapsed, ~L s left" on stderr; nothing when `enabled` is false.
void draw_progress(bool enabled, std::size_t done, std::size_t total, const std::string& what, double elapsed_s,
                   double eta_s);
// Clears the progress line (when it was drawn).
void clear_progress(bool enabled);

}  // namespace xs::bench
