// tests/cli: fa_a2a and megamoe on several ranks (--gpus N, ranks as threads) without a GPU: a dry run expands
// on rank 0 with the rank's own GPU, and the refusals every rank makes alike are exit 2 once, naming the flag:
// P other than the number of ranks, --device with several ranks, a peer/nccl target on several ranks. Nothing
// is written.
#include <gtest/gtest.h>

#include <string>

#include "tool_run.hpp"

namespace {

using namespace xs::test;
const std::string kTool = "xstage-bench";

int occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Exit 2 with every needle in the one error; stdout holds at most xstage-bench's launch line (printed before
// the suite's dry run), no point.
void expect_refused_once(const std::string& args, const std::vector<std::string>& needles) {
  SCOPED_TRACE(args);
  Scratch s;
  const ToolRun r = s.run(kTool, args);
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_EQ(occurrences(r.err, kTool + ": error:"), 1) << r.err;
  for (const auto& n : needles) EXPECT_TRUE(contains(r.err, n)) << "missing '" << n << "' in: " << r.err;
  EXPECT_TRUE(r.out.empty() || r.out.rfind("launch: ", 0) == 0) << r.out;
  EXPECT_FALSE(contains(r.out, "points")) << r.out;
  EXPECT_TRUE(snapshot(s.dir()).empty());
}

TEST(RankSuites, DryRunsOnTwoRanksExpandWithThePerRankDevice) {
  Scratch s;
  const ToolRun fa = s.run(kTool, "fa_a2a --dry-run --gpus 2 --P 2 --M 8192,16384 --target local,host");
  ASSERT_EQ(fa.rc, 0) << fa.err;
  EXPECT_EQ(occurrences(fa.out, "launch: all-gpus-one-process, 2 ranks\n"), 1) << fa.out;
  EXPECT_TRUE(contains(fa.out, "fa_a2a M=16384 heads=8 P=2 target=host device=per-rank d=128")) << fa.out;
  EXPECT_EQ(occurrences(fa.out, "4 points\n"), 1) << fa.out;
  const ToolRun moe = s.run(kTool, "megamoe --dry-run --gpus 2 --P 2 --target host,local");
  ASSERT_EQ(moe.rc, 0) << moe.err;
  EXPECT_TRUE(contains(moe.out, "P=2 K_SM=66 b_n=256 D=auto target=local")) << moe.out;
  EXPECT_EQ(occurrences(moe.out, "2 points\n"), 1) << moe.out;
  EXPECT_TRUE(snapshot(s.dir()).empty());
}

TEST(RankSuites, PMustBeTheNumberOfRanks) {
  expect_refused_once("fa_a2a --dry-run --gpus 2 --M 8192 --target host",
                      {"--P", "P=8 but the run has 2 ranks"});
  expect_refused_once("megamoe --dry-run --gpus 2 --target host", {"--P", "P=8 but the run has 2 ranks"});
}

TEST(RankSuites, DeviceIsRefusedOnSeveralRanks) {
  expect_refused_once("fa_a2a --dry-run --gpus 2 --P 2 --device 1 --M 8192 --target host",
                      {"--device", "with 2 ranks each rank drives its own GPU", "drop --device"});
  expect_refused_once("megamoe --dry-run --gpus 2 --P 2 --device 1 --target host", {"--device", "drop --device"});
}

TEST(RankSuites, PeerTargetsAreRefusedOnSeveralRanksNcclIsTheExchange) {
  expect_refused_once("fa_a2a --dry-run --gpus 2 --P 2 --M 8192 --target host,peer:1",
                      {"--target", "peer:1 on 2 ranks: fa_a2a would store through peer access", "docs/multi-gpu.md"});
  expect_refused_once("megamoe --dry-run --gpus 2 --P 2 --target peer:1",
                      {"--target", "peer:1 on 2 ranks: megamoe"});
  // megamoe's nccl:N is the Combine across the ranks' windows: the fused variants only.
  expect_refused_once("megamoe --dry-run --gpus 2 --P 2 --target nccl:0",
                      {"--variants", "unfused variant is not built across ranks"});
  {
    Scratch s;
    const ToolRun two = s.run(kTool, "megamoe --dry-run --gpus 2 --P 2 --target nccl:0 --variants expert_wave,interleaved");
    ASSERT_EQ(two.rc, 0) << two.err;
  }
  // fa_a2a's nccl:N is the real All-to-All across the ranks' windows (fa_runner.hpp FaExchange): accepted.
  {
    Scratch s;
    const ToolRun two = s.run(kTool, "fa_a2a --dry-run --gpus 2 --P 2 --M 8192 --target host,nccl:0");
    ASSERT_EQ(two.rc, 0) << two.err;
    EXPECT_TRUE(contains(two.out, "target=nccl:0 device=per-rank")) << two.out;
  }
  // One rank keeps peer and nccl targets (they emulate the ranks from one sender).
  Scratch s;
  const ToolRun one = s.run(kTool, "fa_a2a --dry-run --P 2 --M 8192 --target peer:1,nccl:0");
  ASSERT_EQ(one.rc, 0) << one.err;
  EXPECT_TRUE(contains(one.out, "target=peer:1 device=0")) << one.out;
}

TEST(RankSuites, UlyssesChecksNameTheFlagInADryRun) {
  // P must divide M (each rank holds M/P rows): the same refusal with one rank and on P ranks.
  expect_refused_once("fa_a2a --dry-run --P 3 --M 8192 --target host", {"--P", "divide M = 8192"});
  expect_refused_once("fa_a2a --dry-run --gpus 3 --P 3 --M 8192 --target host", {"--P", "divide M = 8192"});
}

}  // namespace
