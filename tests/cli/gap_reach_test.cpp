// tests/cli: xstage-calibrate refuses, before measuring or writing anything, a gap sweep that cannot reach
// the T_iss^0 plateau (issue 27 item 4): exit 2, the (K,B) and the gap it needs on stderr, the folder
// unchanged (no journal, no output). The same sweep with the gap range extended runs.
#include <gtest/gtest.h>

#include <string>

#include "tool_run.hpp"

namespace {

using namespace xs::test;
const std::string kTool = "xstage-calibrate";

// issue 27's host-small-k K = 132 gap sweep (to 9.6 us) on a host-like path: V = 132 x 16 KiB = 2.16 MB,
// V/R = 41.6 us at 52 GB/s, so the plateau needs G >= 1.5 x 41.6 = 62.4 us.
std::string sweep(const std::string& gap_range) {
  return R"({"target": "host", "defaults": {"repetitions": 2, "num_bursts": 12, "warmup_bursts": 3},
    "blocks": [{"name": "zero_gap", "suite": "periodic", "K": "66,132", "B": "16KiB,32KiB", "G": "0"},
               {"name": "gap_sweep", "suite": "periodic", "K": "132", "B": "16KiB", "G": ")" + gap_range + R"("},
               {"name": "isolated", "suite": "isolated", "K": "132", "B": "1KiB:64KiB:x2", "G": "0"}]})";
}

TEST(GapReach, ASweepThatStopsShortIsRefusedBeforeAnythingIsWritten) {
  Scratch s;
  write_file(s.path("short.json"), sweep("0:9600ns:+400ns"));
  expect_refused(s, kTool, "--backend sim --sim-R 52GB/s --sim-noise 0 --no-progress --config short.json --out out/c.json", 2,
                 {"cannot reach the T_iss^0 plateau", "K=132 B=16384", "largest G 9.6 us", "needs G >= 62.39", "--sim-R",
                  "nothing was measured or written"});
}

TEST(GapReach, TheSameSweepReachingPastVOverRRuns) {
  Scratch s;
  write_file(s.path("long.json"), sweep("0:96us:+8us"));
  const ToolRun r = s.run(kTool, "--backend sim --sim-R 52GB/s --sim-noise 0 --no-progress --bootstrap 50 "
                                 "--config long.json --out c.json");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_FALSE(contains(r.err, "cannot reach")) << r.err;
}

TEST(GapReach, NoFitSkipsTheCheck) {  // --no-fit measures points only; nothing is fitted, nothing to refuse
  Scratch s;
  write_file(s.path("short.json"), sweep("0:9600ns:+400ns"));
  const ToolRun r = s.run(kTool, "--backend sim --sim-R 52GB/s --sim-noise 0 --no-progress --no-fit --config short.json "
                                 "--out c.json");
  EXPECT_EQ(r.rc, 0) << r.err;
}

}  // namespace
