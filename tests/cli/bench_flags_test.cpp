// tests/cli: xstage-bench's user-facing behaviour: --csv/--md tables carrying p10/p90, the prediction
// and its relative error; --dry-run without a GPU; plain refusals (fa_a2a has no simulator, a missing GPU
// points at --backend sim, --md with --json); none of them creates a file.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tool_run.hpp"

namespace {

using namespace xs::test;
const std::string kTool = "xstage-bench";
const std::string kModel = std::string(XS_TEST_DATA_DIR) + "/model/calibration_ok.json";
const std::string kSmall = "remote_store.periodic --backend sim --K 8 --B 16KiB --G 0,1us --reps 2 --no-progress";

TEST(BenchFlags, CsvAndMarkdownCarryQuantilesPredictionAndError) {
  Scratch s;
  const ToolRun r = s.run(kTool, kSmall + " --model " + kModel + " --out b.json --csv b.csv --md");
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string csv = read_file(s.path("b.csv"));
  std::istringstream lines(csv);
  std::string header, row;
  std::getline(lines, header);
  EXPECT_EQ(header, "id,suite,K,B_bytes,G_s,T_iss_median_s,T_iss_p10_s,T_iss_p90_s,T_iss_pred_s,T_iss_rel_err,"
                    "T_period_median_s,T_period_p10_s,T_period_p90_s,T_period_pred_s,T_period_rel_err,"
                    "clock_flagged,verification");
  int rows = 0;
  while (std::getline(lines, row)) {
    ++rows;
    EXPECT_EQ(row.rfind("remote_store.periodic.host,periodic,8,16384,", 0), 0u) << row;
    EXPECT_FALSE(contains(row, ",,")) << "with --model every column is filled: " << row;
    EXPECT_TRUE(contains(row, ",no,ok")) << row;
  }
  EXPECT_EQ(rows, 2);
  EXPECT_TRUE(contains(r.out, "| id | suite | K | B_bytes |")) << r.out;
  EXPECT_TRUE(contains(r.out, "| --- |")) << r.out;
}

TEST(BenchFlags, WithoutModelThePredictionColumnsAreEmpty) {
  Scratch s;
  const ToolRun r = s.run(kTool, kSmall + " --out b.json --csv b.csv");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream lines(read_file(s.path("b.csv")));
  std::string row;
  std::getline(lines, row);
  std::getline(lines, row);
  EXPECT_TRUE(contains(row, ",,")) << row;
}

TEST(BenchFlags, DryRunNeedsNoGpu) {
  Scratch s;
  const ToolRun r = s.run(kTool, "remote_store.periodic --K 8 --B 16KiB --dry-run");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "1 points")) << r.out;
  EXPECT_TRUE(snapshot(s.dir()).empty());
}

TEST(BenchFlags, PlainRefusals) {
  Scratch s;
  expect_refused(s, kTool, "fa_a2a --backend sim --out f.json", 2, {"fa_a2a has no simulator"});
  expect_refused(s, kTool, kSmall + " --out b.json --md --json", 2, {"--md", "--json"});
  // A list flag with a value twice measured each point twice into a file every reader refuses (duplicate points):
  // refused by name before anything runs, the dry run included (hostile-CLI review of 2026-12-08).
  expect_refused(s, kTool, "fa_a2a --target local,local --dry-run", 2, {"--target", "'local' is given twice"});
  expect_refused(s, kTool, "fa_a2a --M 8192,8192 --dry-run", 2, {"--M", "8192 twice"});
  expect_refused(s, kTool, "fa_a2a --heads 8,4,8 --dry-run", 2, {"--heads", "8 twice"});
  expect_refused(s, kTool, "megamoe --ksm 66,66 --dry-run", 2, {"--ksm", "66 twice"});
  expect_refused(s, kTool, "megamoe --target host,host --dry-run", 2, {"--target", "'host' is given twice"});
  // --json with --dry-run printed the text listing (hostile-CLI review): refused, naming what each does.
  expect_refused(s, kTool, kSmall + " --out b.json --dry-run --json", 2, {"--json", "--dry-run", "text listing"});
  write_file(s.path("plain"), "a file, not a folder\n");
  expect_refused(s, kTool, kSmall + " --out b.json --csv plain/t.csv", 2, {"--csv", "not a folder"});
  std::filesystem::remove(s.path("plain"));
  expect_refused(s, kTool, "remote_store.isolated --backend sim --K 8 --B 16KiB --reps 200000 --out b.json", 2,
                 {"--reps: 200000 must be in [1, 100000]"});
  // A machine without a usable GPU (or a build without CUDA): exit 77 pointing at the simulator.
  const auto before = snapshot(s.dir());
  const ToolRun r = s.run(kTool, "remote_store.periodic --K 8 --B 16KiB --no-progress --out g.json");
  if (r.rc == 77) {
    EXPECT_TRUE(contains(r.err, "xstage-bench: error:")) << r.err;
    EXPECT_TRUE(contains(r.err, "--backend sim")) << r.err;
    EXPECT_EQ(snapshot(s.dir()), before);
    EXPECT_TRUE(std::filesystem::is_empty(s.dir())) << "no empty out/ folder is left behind";
  }
}

}  // namespace
