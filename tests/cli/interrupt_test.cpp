// tests/cli: an interrupt at any phase of xstage-calibrate ends it with 128 + the signal (130 SIGINT, 143 SIGTERM,
// docs/exit-codes.md) and a message naming what is kept and what was not written, and leaves no temporary
// (*.tmp.*) and no half-written set of outputs: while it fits (before issue 31 it died silently), while --refit
// fits, and inside a simulated point that hangs (XS_SIM_FAULT=<rank>:<point>:hang; it was never abandoned).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tool_run.hpp"

namespace xs::test {
namespace {

// Every entry of `dir` whose name holds ".tmp." (a temporary of an atomic write left behind).
std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) found.push_back(e.path().string());
  return found;
}

// The number of points of the built-in simulator sweep, from --dry-run's last line ("222 points, ...").
std::size_t default_sweep_points() {
  const ToolRun r = run_tool("xstage-calibrate", {"--backend", "sim", "--dry-run"});
  const std::size_t at = r.out.rfind("\n", r.out.size() - 2);
  return std::stoul(r.out.substr(at == std::string::npos ? 0 : at + 1));
}

// The default sweep on the simulator with a long fit (100,000 bootstrap resamples): the signal arrives once the
// journal holds every point, i.e. while rank 0 fits.
void interrupt_while_fitting(int sig, int expected_rc) {
  Scratch dir;
  const std::string out = dir.path("cal.json"), csv = dir.path("cal.csv"), journal = out + ".journal.jsonl";
  const std::size_t num_points = default_sweep_points();
  ASSERT_GT(num_points, 10u);
  Scratch capture;
  const pid_t pid = start_tool("xstage-calibrate",
                               {"--backend", "sim", "--no-progress", "--bootstrap", "100000", "--out", out, "--csv", csv},
                               capture.dir());
  for (int i = 0; i < 6000 && count_lines(journal) < num_points + 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(count_lines(journal), num_points + 1) << read_file(capture.path("stderr.txt"));  // header + every point
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // inside the fit
  ::kill(pid, sig);
  const int code = wait_tool(pid, 60);
  const std::string err = read_file(capture.path("stderr.txt"));
  ASSERT_NE(code, -1) << "the signal did not end the fit: " << err;
  EXPECT_EQ(code, expected_rc) << err;
  EXPECT_TRUE(contains(err, "xstage-calibrate: interrupted: while fitting: " + out + " was not written (nor --csv); the " +
                                std::to_string(num_points) + " measured points are in " + journal +
                                ": run the same command with --resume"))
      << err;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(csv));
  EXPECT_EQ(count_lines(journal), num_points + 1);  // the measurements are kept
  EXPECT_EQ(temporaries(dir.dir()), std::vector<std::string>{});
}

TEST(CalibrateInterrupt, SigintWhileFittingSaysWhatIsKeptAndExits130) { interrupt_while_fitting(SIGINT, 130); }

TEST(CalibrateInterrupt, SigtermWhileFittingExits143) { interrupt_while_fitting(SIGTERM, 143); }

// --refit: the input stays as it was, no --out, no --csv and no temporary.
TEST(CalibrateInterrupt, RefitInterruptedLeavesNoTemporaryAndTheInputUnchanged) {
  Scratch dir;
  const ToolRun cal = dir.run("xstage-calibrate", "--backend sim --no-progress --bootstrap 0 --out cal.json");
  ASSERT_EQ(cal.rc, 0) << cal.err;
  const std::string before = read_file(dir.path("cal.json"));
  Scratch capture;
  const pid_t pid = start_tool("xstage-calibrate",
                               {"--refit", dir.path("cal.json"), "--bootstrap", "100000", "--out", dir.path("refit.json"),
                                "--csv", dir.path("refit.csv")},
                               capture.dir());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // read, then fitting
  ::kill(pid, SIGINT);
  const int code = wait_tool(pid, 60);
  const std::string err = read_file(capture.path("stderr.txt"));
  EXPECT_EQ(code, 130) << err;
  EXPECT_TRUE(contains(err, "xstage-calibrate: interrupted: while refitting: " + dir.path("refit.json") +
                                " was not written (nor --csv); " + dir.path("cal.json") + " is unchanged"))
      << err;
  EXPECT_FALSE(std::filesystem::exists(dir.path("refit.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.path("refit.csv")));
  EXPECT_EQ(read_file(dir.path("cal.json")), before);
  EXPECT_EQ(temporaries(dir.dir()), std::vector<std::string>{});
}

const char* kThreePoints = R"({"target": "host", "defaults": {"repetitions": 3},
  "blocks": [{"name": "a", "suite": "periodic", "K": "1", "B": "16KiB", "G": "0"},
             {"name": "b", "suite": "periodic", "K": "2", "B": "16KiB", "G": "0"},
             {"name": "c", "suite": "periodic", "K": "4", "B": "16KiB", "G": "0"}]})";

// The planted fault's environment for one child (restored at scope end).
class SimFaultEnv {
 public:
  explicit SimFaultEnv(const char* value) { ::setenv("XS_SIM_FAULT", value, 1); }
  ~SimFaultEnv() { ::unsetenv("XS_SIM_FAULT"); }
};

// A simulated point that hangs is abandoned like any long point, 1 s after SIGINT: exit 130, the finished point kept.
TEST(CalibrateInterrupt, AHungSimulatorPointIsAbandonedAfterSigint) {
  Scratch dir;
  write_file(dir.path("sweep.json"), kThreePoints);
  const std::string out = dir.path("r.json"), journal = out + ".journal.jsonl";
  Scratch capture;
  pid_t pid = 0;
  {
    const SimFaultEnv fault("0:2:hang");
    pid = start_tool("xstage-calibrate", {"--backend", "sim", "--config", dir.path("sweep.json"), "--no-fit",
                                          "--no-progress", "--out", out},
                     capture.dir());
  }
  for (int i = 0; i < 6000 && count_lines(journal) < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(count_lines(journal), 2u) << read_file(capture.path("stderr.txt"));  // header + the first point
  std::this_thread::sleep_for(std::chrono::milliseconds(300));                   // inside the hung point
  ::kill(pid, SIGINT);
  const int code = wait_tool(pid, 60);
  const std::string err = read_file(capture.path("stderr.txt"));
  ASSERT_NE(code, -1) << "SIGINT did not end the hung point: " << err;
  EXPECT_EQ(code, 130) << err;
  EXPECT_TRUE(contains(err, "xstage-calibrate: point 2/3")) << err;
  EXPECT_TRUE(contains(err, "abandoned")) << err;
  EXPECT_EQ(count_lines(journal), 2u);
  EXPECT_FALSE(std::filesystem::exists(out));
}

// The simulator's own messages carry the running tool's name, like every other line on stderr.
TEST(SimulatorMessages, APlantedFaultNamesTheTool) {
  Scratch dir;
  write_file(dir.path("sweep.json"), kThreePoints);
  const SimFaultEnv fault("0:1:exit");
  const ToolRun r = dir.run("xstage-calibrate", "--backend sim --config sweep.json --no-fit --no-progress --out r.json");
  EXPECT_EQ(r.rc, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "xstage-calibrate: rank 0: planted fault (XS_SIM_FAULT)")) << r.err;
  EXPECT_FALSE(contains(r.err, "sim: ")) << r.err;
}

}  // namespace
}  // namespace xs::test
