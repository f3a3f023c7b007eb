// Tests for bench/rank_launch choose_launch: one rank, ranks as threads (--gpus), a launcher's ranks with and
// without MPI in the build, and each refusal (exit 2 naming the flag; 77 without a GPU); dry runs and the
// simulator (uses_gpus false) touch no GPU.
#include "xs/bench/rank_launch.hpp"

#include <gtest/gtest.h>

#include "xs/common/error.hpp"

namespace xs::bench {
namespace {

using Env = std::map<std::string, std::string>;

const Env kMpiTwo = {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                     {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}};

std::function<int()> gpus(int n) { return [n] { return n; }; }
std::function<int()> no_gpu() {
  return []() -> int { throw no_gpu_error("no CUDA device"); };
}
std::function<int()> must_not_count() {
  return []() -> int { throw std::logic_error("a dry run must not touch a device"); };
}

Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  return Error(ExitCode::kOk, "", "", "(no error)");
}

TEST(ChooseLaunch, NoLauncherAndOneGpuIsOneRankWithoutCountingGpus) {
  const LaunchChoice c = choose_launch({}, 1, /*uses_gpus=*/true, false, must_not_count());
  EXPECT_EQ(c.model, "single");
  ASSERT_EQ(c.ranks.size(), 1u);
  EXPECT_EQ(c.ranks[0].world_size, 1);
}

TEST(ChooseLaunch, GpusMakesThreadRanksUpToTheLocalGpus) {
  const LaunchChoice four = choose_launch({}, 0, true, false, gpus(4));
  EXPECT_EQ(four.model, "threads");
  ASSERT_EQ(four.ranks.size(), 4u);
  EXPECT_EQ(four.ranks[3].device, 3);
  EXPECT_EQ(choose_launch({}, 2, true, false, gpus(4)).ranks.size(), 2u);
  const Error more = error_of([] { choose_launch({}, 3, true, false, gpus(2)); });
  EXPECT_EQ(more.code(), ExitCode::kBadInput);
  EXPECT_EQ(more.field(), "--gpus");
  EXPECT_NE(std::string(more.what()).find("3 requested, 2 on this node"), std::string::npos) << more.what();
  EXPECT_EQ(error_of([] { choose_launch({}, 2, true, false, no_gpu()); }).code(), ExitCode::kNoGpu);
  EXPECT_EQ(error_of([] { choose_launch({}, -1, true, false, gpus(2)); }).field(), "--gpus");
}

TEST(ChooseLaunch, ADryRunOrTheSimulatorTouchesNoDevice) {
  const LaunchChoice threads = choose_launch({}, 3, false, false, must_not_count());
  EXPECT_EQ(threads.ranks.size(), 3u);
  const LaunchChoice mpi = choose_launch(kMpiTwo, 1, false, true, must_not_count());
  EXPECT_EQ(mpi.model, "mpi");
  EXPECT_EQ(mpi.ranks[0].rank, 1);
  EXPECT_EQ(choose_launch({}, 0, false, false, must_not_count()).ranks.size(), 1u) << "all GPUs of none: one rank";
}

TEST(ChooseLaunch, LauncherRanksNeedAnMpiBuild) {
  const Error e = error_of([] { choose_launch(kMpiTwo, 1, false, false, gpus(2)); });
  EXPECT_EQ(e.code(), ExitCode::kBadInput);
  EXPECT_NE(std::string(e.what()).find("-DXS_WITH_MPI=ON"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("rank 1 of 2"), std::string::npos) << e.what();
  // One launcher rank (mpirun -np 1) runs as one process even without MPI.
  const Env one = {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"},
                   {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}};
  EXPECT_EQ(choose_launch(one, 1, true, false, gpus(1)).model, "single");
}

TEST(ChooseLaunch, UnderALauncherEachProcessDrivesOneGpu) {
  const Error g = error_of([] { choose_launch(kMpiTwo, 2, true, true, gpus(2)); });
  EXPECT_EQ(g.field(), "--gpus");
  EXPECT_NE(std::string(g.what()).find("under mpirun each process drives one GPU"), std::string::npos) << g.what();
  // More ranks on this node than GPUs (rank_layout's check, wired here).
  const Error more = error_of([] { choose_launch(kMpiTwo, 1, true, true, gpus(1)); });
  EXPECT_EQ(more.code(), ExitCode::kBadInput);
  EXPECT_NE(std::string(more.what()).find("more ranks on this node than GPUs"), std::string::npos) << more.what();
  EXPECT_EQ(choose_launch(kMpiTwo, 1, true, true, gpus(2)).ranks[0].device, 1);
}

TEST(CheckWorldMatchesP, SeveralRanksMustBeP) {
  EXPECT_NO_THROW(check_world_matches_p(1, 8, "--P"));  // one GPU emulates P ranks
  EXPECT_NO_THROW(check_world_matches_p(8, 8, "--P"));
  const Error e = error_of([] { check_world_matches_p(2, 8, "--P"); });
  EXPECT_EQ(e.code(), ExitCode::kBadInput);
  EXPECT_EQ(std::string(e.what()), "--P: P=8 but the run has 2 ranks: with several ranks P is the number of ranks "
                                   "(mpirun -np P, or --gpus P); with one rank P ranks are emulated on one GPU");
}

}  // namespace
}  // namespace xs::bench
