// tests/cli: xstage-bench's rank start-up without a GPU: --gpus N (ranks as threads) in a dry run, a simulator
// sweep on thread ranks written once, --gpus out of range, and (in a build without MPI) a process
// started as rank 0 or 1 of 2 by a launcher: rank 0 says how to enable MPI, rank 1 says nothing.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "tool_run.hpp"

namespace {

using namespace xs::test;
const std::string kTool = "xstage-bench";
const std::string kSim = "remote_store.periodic --backend sim --K 8 --B 16KiB --G 0,1us --reps 2 --no-progress";

int occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(RanksFlags, DryRunWithGpusPrintsTheLaunchAndTheSweepOnce) {
  Scratch s;
  const ToolRun r = s.run(kTool, "fa_a2a --dry-run --gpus 4 --P 4 --M 8192 --target host");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(occurrences(r.out, "launch: all-gpus-one-process, 4 ranks\n"), 1) << r.out;
  EXPECT_EQ(occurrences(r.out, "1 points\n"), 1) << r.out;
  EXPECT_TRUE(snapshot(s.dir()).empty());
}

// The remote_store suites run on several ranks: every rank simulates, rank 0 merges, prints and writes once.
TEST(RanksFlags, RemoteStoreOnThreadRanksWritesOneMergedFile) {
  Scratch s;
  const ToolRun r = s.run(kTool, kSim + " --gpus 3 --out b.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(occurrences(r.out, "wrote b.json (2 points"), 1) << r.out;
  const std::string file = read_file(s.dir() + "/b.json");
  EXPECT_TRUE(contains(file, "\"launch\"") && contains(file, "\"num_ranks\": 3")) << file.substr(0, 2000);
  EXPECT_EQ(occurrences(file, "\"backend\": \"sim\""), 3 + 1) << "meta.backend and one per meta.ranks[]";
}

TEST(RanksFlags, GpusOutOfRangeAndNoGpu) {
  Scratch s;
  expect_refused(s, kTool, kSim + " --gpus -1 --out b.json", 2, {"--gpus"});
  // Without a GPU: exit 77, said once. The CUDA build's fa_a2a checks --device against the devices first
  // (CUDA's own reason); the host-only build reaches the rank start-up's check.
  const ToolRun r = s.run(kTool, "fa_a2a --gpus 2 --M 8192 --out b.json");
  EXPECT_EQ(r.rc, 77) << r.err;
  EXPECT_TRUE(r.err.find("no rank has a GPU") != std::string::npos ||
              r.err.find("no usable GPU") != std::string::npos)
      << r.err;
  EXPECT_EQ(occurrences(r.err, "error:"), 1) << r.err;
  EXPECT_TRUE(snapshot(s.dir()).empty());
}

#if !defined(XS_HAVE_MPI)
// Sets OpenMPI's rank variables for one scope (the tool inherits them), as mpirun -np 2 would.
class LauncherEnv {
 public:
  explicit LauncherEnv(int rank) {
    ::setenv("OMPI_COMM_WORLD_RANK", std::to_string(rank).c_str(), 1);
    ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank).c_str(), 1);
    ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  }
  ~LauncherEnv() {
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                             "OMPI_COMM_WORLD_LOCAL_SIZE"})
      ::unsetenv(name);
  }
};

TEST(RanksFlags, WithoutMpiTwoLauncherRanksAreRefusedByRankZeroAlone) {
  Scratch s;
  {
    LauncherEnv env(0);
    expect_refused(s, kTool, "fa_a2a --dry-run --M 8192", 2,
                   {"started as rank 0 of 2 ranks", "built without MPI: configure with -DXS_WITH_MPI=ON"});
  }
  {
    LauncherEnv env(1);
    const ToolRun r = s.run(kTool, "fa_a2a --dry-run --M 8192");
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "") << "rank 1 repeats rank 0's refusal";
    EXPECT_EQ(r.out, "");
    const ToolRun help = s.run(kTool, "--help");
    EXPECT_EQ(help.rc, 0);
    EXPECT_EQ(help.out, "") << "rank 1 prints no help: rank 0 does";
  }
}
#endif

}  // namespace
