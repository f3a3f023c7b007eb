// xstage cli tests: runs a built executable (XS_BIN_DIR) in a child process, with its stdout/stderr
// captured, optionally as an unprivileged user, and snapshots folders to prove nothing was changed.
#pragma once
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace xs::test {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct ToolRun {
  int exit_code = -1;   // exit status, or 128 + signal
  std::string out, err;
};

struct ChildOptions {
  uid_t run_as_uid = 0;  // non-zero: drop to this uid/gid before exec (the caller must be root)
};

// Starts `tool` (a name in XS_BIN_DIR) with `args`; stdout/stderr go to files under `capture_dir`.
inline pid_t start_tool(const std::string& tool, const std::vector<std::string>& args, const std::string& capture_dir,
                        ChildOptions options = {}) {
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
  if (options.run_as_uid != 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(options.run_as_uid) != 0 || ::setuid(options.run_as_uid) != 0)
      ::_exit(125);
  }
  ::execv(exe.c_str(), argv.data());
  ::_exit(127);
}

// Waits for `pid` for at most `limit_s` (a hang guard, not a timing assertion: the child is then killed).
inline int wait_tool(pid_t pid, double limit_s = 120) {
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
inline ToolRun run_tool(const std::string& tool, const std::vector<std::string>& args, ChildOptions options = {}) {
  std::string pattern = (std::filesystem::temp_directory_path() / "xs_cli_capture_XXXXXX").string();
  const std::string capture = ::mkdtemp(pattern.data());
  if (options.run_as_uid != 0) ::chmod(capture.c_str(), 0777);
  ToolRun r;
  r.exit_code = wait_tool(start_tool(tool, args, capture, options));
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

// A fresh folder under the system temp dir, removed at scope end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "xs_cli_test_XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace xs::test
