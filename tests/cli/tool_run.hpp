// tests/cli: runs a built xstage executable (XS_BIN_DIR) in a child process, in a scratch folder, with its
// exit code, stdout and stderr captured (in the background too, for the signal tests), and snapshots the
// folder so a test can assert that a refused command created, removed or changed nothing.
#pragma once
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace xs::test {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Non-empty lines of a file (a journal's header and points); 0 where it does not exist yet.
inline std::size_t count_lines(const std::string& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.empty() ? 0 : 1;
  return n;
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc | std::ios::binary) << text;
}

inline bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// A command line as typed, split on whitespace (no test argument holds a space or needs quoting).
inline std::vector<std::string> words(const std::string& command_line) {
  std::vector<std::string> out;
  std::istringstream in(command_line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

struct ToolRun {
  int rc = -1;  // exit status, 128 + signal, or -1 when the hang guard killed it
  std::string out, err;
};

struct RunOptions {
  std::string cwd;       // empty: the test's own working directory
  uid_t run_as_uid = 0;  // non-zero: drop to this uid/gid before exec (the caller must be root)
  std::string stdin_path;  // non-empty: the child's standard input reads this file (relative to cwd)
};

// Starts `tool` with `args` in the background; stdout/stderr go to stdout.txt/stderr.txt in `capture_dir`.
// A child that cannot set up exits 126 (capture or cwd), 125 (privileges) or 127 (exec).
inline pid_t start_tool(const std::string& tool, const std::vector<std::string>& args, const std::string& capture_dir,
                        const RunOptions& options = {}) {
  const std::string exe = std::string(XS_BIN_DIR) + "/" + tool;
  std::vector<std::string> argv_s = {exe};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  const std::string out = capture_dir + "/stdout.txt", err = capture_dir + "/stderr.txt";
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr)) ::_exit(126);
  if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
  if (!options.stdin_path.empty() && !std::freopen(options.stdin_path.c_str(), "r", stdin)) ::_exit(126);
  if (options.run_as_uid != 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(options.run_as_uid) != 0 || ::setuid(options.run_as_uid) != 0)
      ::_exit(125);
  }
  ::execv(exe.c_str(), argv.data());
  ::_exit(127);
}

// Waits for `pid` for at most `limit_s` (a hang guard, not a timing assertion: the child is then killed).
inline int wait_tool(pid_t pid, double limit_s = 600) {
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs to completion. Captures go to a fresh folder that is not the one under test.
inline ToolRun run_tool(const std::string& tool, const std::vector<std::string>& args, const RunOptions& options = {}) {
  std::string pattern = (std::filesystem::temp_directory_path() / "xs_cli_capture_XXXXXX").string();
  const std::string capture = ::mkdtemp(pattern.data());
  if (options.run_as_uid != 0) ::chmod(capture.c_str(), 0777);
  ToolRun r;
  r.rc = wait_tool(start_tool(tool, args, capture, options));
  r.out = read_file(capture + "/stdout.txt");
  r.err = read_file(capture + "/stderr.txt");
  std::filesystem::remove_all(capture);
  return r;
}

// Every entry below `dir`: its type and, for regular files, its bytes. Equal snapshots: nothing was
// created, removed or changed.
inline std::map<std::string, std::string> snapshot(const std::filesystem::path& dir) {
  std::map<std::string, std::string> entries;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const auto status = std::filesystem::symlink_status(e.path());
    std::string what = std::to_string(static_cast<int>(status.type()));
    if (status.type() == std::filesystem::file_type::regular) what += ":" + read_file(e.path().string());
    entries[e.path().lexically_relative(dir).string()] = what;
  }
  return entries;
}

// A fresh folder under the system temp dir, removed at scope end (made writable first, for tests that
// take the write bit away).
class Scratch {
 public:
  Scratch() {
    std::string pattern = (std::filesystem::temp_directory_path() / "xs_cli_XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(dir_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const std::string& dir() const { return dir_; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  // Runs `tool` with this folder as working directory (relative paths in `args` land here).
  ToolRun run(const std::string& tool, const std::string& args, RunOptions options = {}) const {
    options.cwd = dir_;
    return run_tool(tool, words(args), options);
  }

 private:
  std::string dir_;
};

// A refusal: exit `rc`, every needle on stderr after "<tool>: error:", nothing on stdout.
inline void expect_refusal(const ToolRun& r, const std::string& tool, int rc, const std::vector<std::string>& needles) {
  EXPECT_EQ(r.rc, rc) << tool << "\n" << r.err;
  EXPECT_TRUE(contains(r.err, tool + ": error:")) << r.err;
  for (const auto& n : needles) EXPECT_TRUE(contains(r.err, n)) << "missing '" << n << "' in: " << r.err;
  EXPECT_EQ(r.out, "") << "a refused command wrote to stdout";
}

// Runs `tool args` in `s`, expects a refusal, and that the folder is exactly as it was.
inline void expect_refused(const Scratch& s, const std::string& tool, const std::string& args, int rc,
                           const std::vector<std::string>& needles, const RunOptions& options = {}) {
  SCOPED_TRACE(tool + " " + args);
  const auto before = snapshot(s.dir());
  expect_refusal(s.run(tool, args, options), tool, rc, needles);
  EXPECT_EQ(snapshot(s.dir()), before) << args << ": a refused command created or changed a file";
}

}  // namespace xs::test
