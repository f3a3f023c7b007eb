// tests/cli: --fa-schedule of the fa_a2a suite: an unknown schedule is exit 2 naming the flag (dry run and
// run alike, no file written), a built one reaches the points (dry run), the baseline's line names no schedule.
// --fa-tile-scheduler likewise: unknown names refused naming the flag, the chosen one on every dry-run line.
// --fa-heads-per-band: 1 by default (not shown), auto and a divisor of --heads shown, anything else refused naming the flag.
#include <gtest/gtest.h>

#include <string>

#include "tool_run.hpp"

namespace {

using namespace xs::test;
const std::string kTool = "xstage-bench";

TEST(FaScheduleFlag, RefusesAnUnknownScheduleNamingTheFlag) {
  Scratch s;
  expect_refused(s, kTool, "fa_a2a --M 8192 --fa-schedule overlap --dry-run", 2, {"--fa-schedule", "overlap"});
  expect_refused(s, kTool, "fa_a2a --M 8192 --fa-schedule overlap --no-progress --out f.json", 2, {"--fa-schedule"});
}

TEST(FaScheduleFlag, DryRunShowsANonBaselineSchedule) {
  Scratch s;
  const ToolRun r = s.run(kTool, "fa_a2a --M 8192 --target local --fa-schedule pingpong_full --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "target=local device=0 d=128 schedule=pingpong_full")) << r.out;
  const ToolRun b = s.run(kTool, "fa_a2a --M 8192 --target local --fa-schedule baseline --dry-run");
  ASSERT_EQ(b.rc, 0) << b.err;
  EXPECT_TRUE(contains(b.out, "target=local device=0 d=128 tiles=dynamic\n")) << b.out;
}

TEST(FaScheduleFlag, TileSchedulerIsCheckedAndShown) {
  Scratch s;
  expect_refused(s, kTool, "fa_a2a --M 8192 --fa-tile-scheduler greedy --dry-run", 2, {"--fa-tile-scheduler", "greedy"});
  expect_refused(s, kTool, "fa_a2a --M 8192 --fa-tile-scheduler greedy --no-progress --out f.json", 2,
                 {"--fa-tile-scheduler"});
  const ToolRun r = s.run(kTool, "fa_a2a --M 8192 --target local --fa-tile-scheduler static --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "d=128 tiles=static\n")) << r.out;
}

TEST(FaScheduleFlag, HeadsPerBandIsCheckedAndShown) {
  Scratch s;
  expect_refused(s, kTool, "fa_a2a --M 8192 --heads 8 --fa-heads-per-band 3 --dry-run", 2, {"--fa-heads-per-band", "3"});
  expect_refused(s, kTool, "fa_a2a --M 8192 --heads 8 --fa-heads-per-band 3 --no-progress --out f.json", 2,
                 {"--fa-heads-per-band"});
  const ToolRun r = s.run(kTool, "fa_a2a --M 8192 --heads 8 --target local --fa-heads-per-band 2 --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "tiles=dynamic heads_per_band=2\n")) << r.out;
  const ToolRun a = s.run(kTool, "fa_a2a --M 8192 --heads 8 --target local --fa-heads-per-band 0 --dry-run");
  ASSERT_EQ(a.rc, 0) << a.err;
  EXPECT_TRUE(contains(a.out, "tiles=dynamic heads_per_band=auto\n")) << a.out;
}

TEST(FaScheduleFlag, TailSplitsAreCheckedAndShown) {
  Scratch s;
  expect_refused(s, kTool, "fa_a2a --M 8192 --fa-tail-splits 0 --dry-run", 2, {"--fa-tail-splits"});
  expect_refused(s, kTool, "fa_a2a --M 8192 --fa-tail-splits 9 --dry-run", 2, {"--fa-tail-splits"});
  expect_refused(s, kTool, "fa_a2a --M 8192 --fa-tail-splits 2 --fa-schedule pingpong --dry-run", 2,
                 {"--fa-tail-splits", "baseline"});
  const ToolRun r = s.run(kTool, "fa_a2a --M 8192 --heads 8 --target local --fa-tail-splits 2 --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "tiles=dynamic tail_splits=2\n")) << r.out;
  const ToolRun w = s.run(kTool, "fa_a2a --M 8192 --heads 8 --target local --dry-run");
  ASSERT_EQ(w.rc, 0) << w.err;
  EXPECT_FALSE(contains(w.out, "tail_splits")) << w.out;
}

}  // namespace
