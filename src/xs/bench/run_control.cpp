// xstage bench layer: stop signals and the progress line (see run_control.hpp).
#include "xs/bench/run_control.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "xs/bench/backend.hpp"
#include "xs/common/program_name.hpp"

namespace xs::bench {
namespace {

// Shared with the signal handler: lock-free atomics only.
std::atomic<int> g_num_signals{0};
std::atomic<std::size_t> g_point_number{0};  // 1-based number of the point in progress
std::atomic<std::size_t> g_num_points{0};
std::atomic<bool> g_abandons_long_points{true};
std::atomic<int> g_stop_signal{0};  // the first stop signal of the run; kept after the scope ends

// InterruptExitScope's message: two buffers, the handler reads the one g_exit_message_idx names.
char g_exit_messages[2][1024] = {};
std::atomic<int> g_exit_message_idx{0};

// Appends the decimal digits of `n` (no snprintf: it is not async-signal-safe).
char* put_number(char* out, std::size_t n) {
  char digits[24];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  while (count > 0) *out++ = digits[--count];
  return out;
}

// Copies at most `max_bytes` of `text` (the messages below fit their buffers with a 63-byte tool name).
char* put_text(char* out, const char* text, std::size_t max_bytes = 128) {
  while (*text && max_bytes-- > 0) *out++ = *text++;
  return out;
}

extern "C" void on_stop_signal(int sig) {
  const int saved_errno = errno;
  if (g_num_signals.fetch_add(1) == 0) {
    g_stop_signal.store(sig);
    g_stop_requested_ns.store(monotonic_ns());
    char message[256];
    char* p = put_text(message, "\n");
    p = put_text(p, program_name(), 63);
    p = put_text(p, ": stopping: finishing point ");
    p = put_number(p, g_point_number.load());
    p = put_text(p, "/");
    p = put_number(p, g_num_points.load());
    if (g_abandons_long_points.load()) p = put_text(p, " (abandoned if it needs more than 1 s more)");
    p = put_text(p, ", Ctrl-C again to abort\n");
    (void)!::write(STDERR_FILENO, message, static_cast<std::size_t>(p - message));
  } else {
    char message[128];
    char* p = put_text(message, "\n");
    p = put_text(p, program_name(), 63);
    p = put_text(p, ": aborted; finished points are in the journal\n");
    (void)!::write(STDERR_FILENO, message, static_cast<std::size_t>(p - message));
    std::signal(sig, SIG_DFL);  // die of the signal, as the shell expects (130/143)
    std::raise(sig);
  }
  errno = saved_errno;
}

extern "C" void on_exit_signal(int sig) {
  char message[1024 + 96];
  char* p = put_text(message, "\n");
  p = put_text(p, program_name(), 63);
  p = put_text(p, ": interrupted: ");
  p = put_text(p, g_exit_messages[g_exit_message_idx.load()], 1023);
  p = put_text(p, "\n");
  (void)!::write(STDERR_FILENO, message, static_cast<std::size_t>(p - message));
  std::signal(sig, SIG_DFL);  // die of the signal: the shell reports 128 + sig, as for an interrupted sweep
  std::raise(sig);
}

void copy_message(char* to, const std::string& message) {
  const std::size_t n = std::min<std::size_t>(message.size(), 1023);
  std::memcpy(to, message.data(), n);
  to[n] = '\0';
}

}  // namespace

int interrupted_exit_code() {
  const int sig = g_stop_signal.load();
  return 128 + (sig != 0 ? sig : SIGINT);
}

InterruptExitScope::InterruptExitScope(const std::string& message) {
  copy_message(g_exit_messages[0], message);
  g_exit_message_idx.store(0);
  old_int_ = std::signal(SIGINT, on_exit_signal);
  old_term_ = std::signal(SIGTERM, on_exit_signal);
}

InterruptExitScope::~InterruptExitScope() {
  std::signal(SIGINT, old_int_);
  std::signal(SIGTERM, old_term_);
}

void InterruptExitScope::set_message(const std::string& message) {
  const int next = 1 - g_exit_message_idx.load();
  copy_message(g_exit_messages[next], message);  // the handler reads the other buffer meanwhile
  g_exit_message_idx.store(next);
}

StopSignalScope::StopSignalScope(std::size_t num_points, bool abandons_long_points) {
  g_num_signals.store(0);
  g_stop_signal.store(0);
  g_stop_requested_ns.store(0);
  g_point_number.store(0);
  g_num_points.store(num_points);
  g_abandons_long_points.store(abandons_long_points);
  old_int_ = std::signal(SIGINT, on_stop_signal);
  old_term_ = std::signal(SIGTERM, on_stop_signal);
}

StopSignalScope::~StopSignalScope() {
  std::signal(SIGINT, old_int_);
  std::signal(SIGTERM, old_term_);
  g_stop_requested_ns.store(0);
}

bool StopSignalScope::stopping() const { return g_stop_requested_ns.load() != 0; }

void StopSignalScope::set_point_number(std::size_t number) const { g_point_number.store(number); }

void draw_progress(bool enabled, std::size_t done, std::size_t total, const std::string& what, double elapsed_s,
                   double eta_s) {
  if (!enabled) return;
  std::fprintf(stderr, "\r\033[K[%zu/%zu] %s  %.1fs elapsed, ~%.0fs left", done, total, what.c_str(), elapsed_s,
               eta_s);
  std::fflush(stderr);
}

void clear_progress(bool enabled) {
  if (enabled) std::fprintf(stderr, "\r\033[K");
}

}  // namespace xs::bench
