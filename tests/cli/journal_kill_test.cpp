// xstage-calibrate under SIGKILL: the journal keeps every finished point, no partial result file is left,
// and --resume finishes the sweep without re-measuring what the journal holds.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tool_run.hpp"

namespace {

using xs::test::count_lines;

TEST(JournalUnderSigkill, FinishedPointsSurviveAndResumeCompletes) {
  const auto dir = std::filesystem::temp_directory_path() / ("xs_kill_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "cal.json").string(), journal = out + ".journal.jsonl";
  const std::string exe = std::string(XS_BIN_DIR) + "/xstage-calibrate";
  // A noisy simulated sweep of 1005 points: a few seconds, long enough to be killed in the middle.
  std::vector<std::string> args = {exe, "--backend", "sim", "--sim-noise", "0.05", "--suite", "periodic",
                                   "--K", "132", "--B", "16KiB:256KiB:x2", "--G", "0:100us:+0.5us",
                                   "--no-progress", "--out", out};
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    freopen("/dev/null", "w", stdout);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  // Wait for some finished points, then kill without warning.
  for (int i = 0; i < 3000 && count_lines(journal) < 20; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the sweep finished before it could be killed";
  const std::size_t journaled = count_lines(journal);
  EXPECT_GE(journaled, 20u);
  EXPECT_FALSE(std::filesystem::exists(out)) << "a killed run must not leave a result file";

  std::string resume;
  for (const auto& a : args) resume += a + " ";
  resume += "--resume > /dev/null 2>&1";
  ASSERT_EQ(std::system(resume.c_str()), 0);
  std::ifstream in(out);
  const auto result = nlohmann::json::parse(in);
  EXPECT_EQ(result["points"].size(), 1005u);
  // Every complete journal line but the header was reused (a line cut by the kill is dropped and measured
  // again).
  EXPECT_GE(result["meta"]["resumed_points"].get<std::size_t>(), journaled - 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
