// Tests for bench/rank_layout: each launcher's environment, each validation error and its message, the
// all-GPUs-one-process layout and the Ulysses partition check.
#include "xs/bench/rank_layout.hpp"

#include <gtest/gtest.h>

#include "xs/common/error.hpp"

namespace xs::bench {
namespace {

using Env = std::map<std::string, std::string>;

// Runs `fn`, expects an xs::Error with `code`, the field `field` and a message containing `part`.
template <typename Fn>
void expect_error(Fn fn, ExitCode code, const std::string& field, const std::string& part) {
  try {
    fn();
    FAIL() << "no error; expected " << field << ": " << part;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

Env ompi(const std::string& rank, const std::string& size, const std::string& local_rank,
         const std::string& local_size) {
  return {{"OMPI_COMM_WORLD_RANK", rank}, {"OMPI_COMM_WORLD_SIZE", size},
          {"OMPI_COMM_WORLD_LOCAL_RANK", local_rank}, {"OMPI_COMM_WORLD_LOCAL_SIZE", local_size}};
}

TEST(RankLayout, NoLauncherIsOneProcessOnDeviceZero) {
  const RankContext c = rank_context_from_env({{"PATH", "/usr/bin"}}, 8);
  EXPECT_EQ(c.rank, 0);
  EXPECT_EQ(c.world_size, 1);
  EXPECT_EQ(c.local_rank, 0);
  EXPECT_EQ(c.local_size, 1);
  EXPECT_EQ(c.device, 0);
  EXPECT_EQ(c.launcher, "single");
}

TEST(RankLayout, OpenMpiTwoNodesOfFour) {
  const RankContext c = rank_context_from_env(ompi("6", "8", "2", "4"), 4);
  EXPECT_EQ(c.rank, 6);
  EXPECT_EQ(c.world_size, 8);
  EXPECT_EQ(c.local_rank, 2);
  EXPECT_EQ(c.local_size, 4);
  EXPECT_EQ(c.device, 2);
  EXPECT_EQ(c.launcher, "mpi");
}

TEST(RankLayout, OpenMpiWinsOverSlurmUnderSrun) {
  Env env = ompi("1", "2", "1", "2");
  env.insert({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"SLURM_LOCALID", "0"}});
  const RankContext c = rank_context_from_env(env, 2);
  EXPECT_EQ(c.rank, 1);
  EXPECT_EQ(c.launcher, "mpi");
}

TEST(RankLayout, PmiWithLocalIds) {
  const Env env = {{"PMI_RANK", "3"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}};
  const RankContext c = rank_context_from_env(env, 2);
  EXPECT_EQ(c.rank, 3);
  EXPECT_EQ(c.world_size, 4);
  EXPECT_EQ(c.local_rank, 1);
  EXPECT_EQ(c.local_size, 2);
  EXPECT_EQ(c.device, 1);
  EXPECT_EQ(c.launcher, "mpi");
}

TEST(RankLayout, PmiOneRankNeedsNoLocalIds) {
  const RankContext c = rank_context_from_env({{"PMI_RANK", "0"}, {"PMI_SIZE", "1"}}, 1);
  EXPECT_EQ(c.world_size, 1);
  EXPECT_EQ(c.local_size, 1);
  EXPECT_EQ(c.device, 0);
}

TEST(RankLayout, PmiSeveralRanksWithoutLocalIdIsRefused) {
  expect_error([] { rank_context_from_env({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}, 2); }, ExitCode::kBadInput,
               "MPI_LOCALRANKID", "not set, but PMI_RANK is");
}

TEST(RankLayout, SlurmWithNtasksPerNode) {
  const Env env = {{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "5"},
                   {"SLURM_NTASKS_PER_NODE", "8"}};
  const RankContext c = rank_context_from_env(env, 8);
  EXPECT_EQ(c.rank, 5);
  EXPECT_EQ(c.world_size, 16);
  EXPECT_EQ(c.local_rank, 5);
  EXPECT_EQ(c.local_size, 8);
  EXPECT_EQ(c.device, 5);
  EXPECT_EQ(c.launcher, "slurm");
}

TEST(RankLayout, SlurmUniformStepTaskList) {
  const Env env = {{"SLURM_PROCID", "9"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "1"},
                   {"SLURM_STEP_TASKS_PER_NODE", "8(x2)"}};
  const RankContext c = rank_context_from_env(env, 8);
  EXPECT_EQ(c.local_size, 8);
  EXPECT_EQ(c.device, 1);
}

TEST(RankLayout, SlurmUnevenTaskListIsRefused) {
  const Env env = {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "3"}, {"SLURM_LOCALID", "0"},
                   {"SLURM_TASKS_PER_NODE", "2,1"}};
  expect_error([&] { rank_context_from_env(env, 8); }, ExitCode::kBadInput, "SLURM_TASKS_PER_NODE",
               "--ntasks-per-node");
}

TEST(RankLayout, SlurmWithoutTasksPerNodeIsRefused) {
  const Env env = {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "0"}};
  expect_error([&] { rank_context_from_env(env, 8); }, ExitCode::kBadInput, "SLURM_NTASKS_PER_NODE", "not set");
}

TEST(RankLayout, NonIntegerIsRefusedNamingTheVariable) {
  expect_error([] { rank_context_from_env(ompi("0", "two", "0", "1"), 8); }, ExitCode::kBadInput,
               "OMPI_COMM_WORLD_SIZE", "\"two\" is not a non-negative integer");
  expect_error([] { rank_context_from_env(ompi("-1", "2", "0", "1"), 8); }, ExitCode::kBadInput,
               "OMPI_COMM_WORLD_RANK", "not a non-negative integer");
  expect_error([] { rank_context_from_env(ompi("1x", "2", "0", "1"), 8); }, ExitCode::kBadInput,
               "OMPI_COMM_WORLD_RANK", "not a non-negative integer");
  expect_error([] { rank_context_from_env(ompi("0", "2", "", "1"), 8); }, ExitCode::kBadInput,
               "OMPI_COMM_WORLD_LOCAL_RANK", "not a non-negative integer");
}

TEST(RankLayout, RankNotBelowSizeIsRefused) {
  expect_error([] { rank_context_from_env(ompi("2", "2", "0", "1"), 8); }, ExitCode::kBadInput,
               "OMPI_COMM_WORLD_RANK", "rank 2 is not below the world size 2");
  expect_error([] { rank_context_from_env(ompi("0", "0", "0", "1"), 8); }, ExitCode::kBadInput,
               "OMPI_COMM_WORLD_SIZE", "at least 1");
}

TEST(RankLayout, InconsistentSizesAreRefused) {
  expect_error([] { rank_context_from_env(ompi("0", "2", "0", "4"), 8); }, ExitCode::kBadInput,
               "OMPI_COMM_WORLD_LOCAL_SIZE", "inconsistent sizes: 4 ranks on this node but 2 in the run");
  expect_error([] { rank_context_from_env(ompi("3", "4", "2", "2"), 8); }, ExitCode::kBadInput,
               "OMPI_COMM_WORLD_LOCAL_RANK", "inconsistent sizes: local rank 2 is not below the local size 2");
}

TEST(RankLayout, MoreRanksThanGpusIsRefusedOnEveryRank) {
  expect_error([] { rank_context_from_env(ompi("3", "4", "3", "4"), 2); }, ExitCode::kBadInput,
               "OMPI_COMM_WORLD_LOCAL_RANK", "more ranks on this node than GPUs: local rank 3, 2 GPUs");
  // Local rank 0 has a GPU, but its node peers do not: it fails too rather than wait for them at bootstrap.
  expect_error([] { rank_context_from_env(ompi("0", "4", "0", "4"), 2); }, ExitCode::kBadInput,
               "OMPI_COMM_WORLD_LOCAL_SIZE", "more ranks on this node than GPUs: 4 ranks on this node, 2 GPUs");
}

TEST(RankLayout, NoGpuIsExit77) {
  expect_error([] { rank_context_from_env({}, 0); }, ExitCode::kNoGpu, "", "no GPU");
  expect_error([] { all_gpus_one_process(0, 0); }, ExitCode::kNoGpu, "", "no GPU");
}

TEST(RankLayout, AllGpusOneProcessLaysOutOneRankPerDevice) {
  const auto all = all_gpus_one_process(4, 0);
  ASSERT_EQ(all.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const auto& c = all[static_cast<std::size_t>(i)];
    EXPECT_EQ(c.rank, i);
    EXPECT_EQ(c.world_size, 4);
    EXPECT_EQ(c.local_rank, i);
    EXPECT_EQ(c.local_size, 4);
    EXPECT_EQ(c.device, i);
    EXPECT_EQ(c.launcher, "all-gpus-one-process");
  }
  const auto two = all_gpus_one_process(4, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].world_size, 2);
  EXPECT_EQ(two[1].device, 1);
}

TEST(RankLayout, AllGpusOneProcessRefusesMoreThanPresent) {
  expect_error([] { all_gpus_one_process(2, 3); }, ExitCode::kBadInput, "--gpus", "3 requested, 2 on this node");
  expect_error([] { all_gpus_one_process(2, -1); }, ExitCode::kBadInput, "--gpus", "0 (all) to 2");
}

TEST(RankLayout, UlyssesPartitionAcceptsDivisors) {
  EXPECT_NO_THROW(validate_ulysses_partition(32, 8, 4096));
  EXPECT_NO_THROW(validate_ulysses_partition(24, 1, 7));
}

TEST(RankLayout, UlyssesPartitionNamesWhatPDoesNotDivide) {
  expect_error([] { validate_ulysses_partition(24, 5, 4000); }, ExitCode::kBadInput, "heads",
               "P=5 ranks do not divide the 24 heads");
  expect_error([] { validate_ulysses_partition(24, 5, 4000); }, ExitCode::kBadInput, "heads",
               "1,2,3,4,6,8,12,24");
  expect_error([] { validate_ulysses_partition(24, 8, 4100); }, ExitCode::kBadInput, "M",
               "P=8 ranks do not divide the sequence length M=4100");
  expect_error([] { validate_ulysses_partition(24, 0, 4096); }, ExitCode::kBadInput, "P", "at least 1");
}

}  // namespace
}  // namespace xs::bench
