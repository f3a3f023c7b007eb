// tests/cli: the fa_a2a suite checks every point's flags before anything runs, also in a dry run and without
// a GPU: a negative --device, a --P that does not divide M or exceeds 16, an M off the 128 grid and a head
// dim that is not built are exit 2 naming the flag, with no file written; --device and --head-dim 64
// reach the points.
#include <gtest/gtest.h>

#include <string>

#include "tool_run.hpp"

namespace {

using namespace xs::test;
const std::string kTool = "xstage-bench";

TEST(FaSuiteFlags, RefusesBadPointFlagsNamingTheFlag) {
  Scratch s;
  expect_refused(s, kTool, "fa_a2a --M 8192 --device -1 --dry-run", 2, {"--device", "-1"});
  expect_refused(s, kTool, "fa_a2a --M 8192 --P 3 --dry-run", 2, {"--P", "divide M = 8192"});
  expect_refused(s, kTool, "fa_a2a --M 8192 --P 32 --dry-run", 2, {"--P", "1..16"});
  expect_refused(s, kTool, "fa_a2a --M 8200 --dry-run", 2, {"--M", "multiple of 128"});
  expect_refused(s, kTool, "fa_a2a --M 8192 --head-dim 96 --dry-run", 2, {"--head-dim", "64 or 128"});
  // The same checks before a run, so a GPU-less machine still says exit 2, not 77, and writes nothing.
  expect_refused(s, kTool, "fa_a2a --M 8192 --device -2 --no-progress --out f.json", 2, {"--device"});
  expect_refused(s, kTool, "fa_a2a --M 8192 --P 5 --no-progress --out f.json", 2, {"--P"});
}

// From the hostile review of 2026-12-07: a bad --target exited 77 and a million-point sweep was accepted.
TEST(FaSuiteFlags, RefusesABadTargetAndASweepOverTheCap) {
  Scratch s;
  expect_refused(s, "xstage-bench", "fa_a2a --target bogus --dry-run", 2, {"--target", "'bogus' is not a target"});
  expect_refused(s, "xstage-bench", "fa_a2a --M 128:1048576:+128 --heads 1:64:+1 --dry-run", 2,
                 {"--M", "1048576 points", "cap of 100000"});
}

TEST(FaSuiteFlags, DryRunShowsTheSendingDevice) {
  Scratch s;
  const ToolRun r = s.run(kTool, "fa_a2a --M 8192 --target peer:1 --device 3 --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "fa_a2a M=8192 heads=8 P=8 target=peer:1 device=3 d=128")) << r.out;
}

TEST(FaSuiteFlags, HeadDim64IsAccepted) {
  Scratch s;
  const ToolRun r = s.run(kTool, "fa_a2a --M 8192 --head-dim 64 --target local --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "target=local device=0 d=64")) << r.out;
}

}  // namespace
