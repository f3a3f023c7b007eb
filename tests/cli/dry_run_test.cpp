// xstage cli tests: --dry-run refuses what the run refuses before measuring, with the same exit code and message
// (issue 31: it used to exit 0 for a bad --model, an --out that is a device or a folder, --resume without a
// journal, an unreadable journal, and for an unfittable calibration sweep, which the run refuses). Neither
// writes anything.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tool_run.hpp"

namespace xs::test {
namespace {

const std::string kBench = "remote_store.periodic --backend sim --K 1,2 --B 16KiB --G 0 --no-progress";

// The dry run and the run of `args` are both refused with exit 2 and `needle`, and leave the folder as it was.
void expect_both_refused(const Scratch& s, const std::string& tool, const std::string& args, const std::string& needle) {
  expect_refused(s, tool, args + " --dry-run", 2, {needle});
  expect_refused(s, tool, args, 2, {needle});
}

TEST(DryRun, RefusesWhatTheBenchRunRefuses) {
  Scratch s;
  std::filesystem::create_directory(s.path("folder"));
  write_file(s.path("bad.json.journal.jsonl"), "{\"x\": 1}\n");
  expect_both_refused(s, "xstage-bench", kBench + " --model nosuch.json --out r.json", "nosuch.json: cannot open");
  expect_both_refused(s, "xstage-bench", kBench + " --out /dev/null", "/dev/null: --out is a character device");
  expect_both_refused(s, "xstage-bench", kBench + " --out folder", "--out is a folder");
  expect_both_refused(s, "xstage-bench", kBench + " --out new.json --resume", "no journal 'new.json.journal.jsonl'");
  expect_both_refused(s, "xstage-bench", kBench + " --out bad.json", "bad.json.journal.jsonl:1");
  // A run that starts: the dry run too, and it writes nothing.
  const auto before = snapshot(s.dir());
  const ToolRun dry = s.run("xstage-bench", kBench + " --out good.json --dry-run");
  EXPECT_EQ(dry.rc, 0) << dry.err;
  EXPECT_EQ(snapshot(s.dir()), before);
  EXPECT_EQ(s.run("xstage-bench", kBench + " --out good.json").rc, 0);
  // A finished run's journal is started over by the next run, so the dry run accepts it; --resume too.
  EXPECT_EQ(s.run("xstage-bench", kBench + " --out good.json --dry-run").rc, 0);
  EXPECT_EQ(s.run("xstage-bench", kBench + " --out good.json --resume --dry-run").rc, 0);
}

TEST(DryRun, RefusesWhatTheCalibrationRunRefuses) {
  Scratch s;
  std::filesystem::create_directory(s.path("folder"));
  // An unfittable sweep: the dry run used to print "a real run would stop" and exit 0.
  expect_both_refused(s, "xstage-calibrate", "--backend sim --no-progress --only isolated --out c.json",
                      "this sweep cannot be fitted");
  expect_both_refused(s, "xstage-calibrate", "--backend sim --no-progress --out folder", "--out is a folder");
  expect_both_refused(s, "xstage-calibrate", "--backend sim --no-progress --out c.json --resume",
                      "no journal 'c.json.journal.jsonl'");
}

TEST(DryRun, ApplicationSuitesCheckTheirOutputs) {
  Scratch s;
  for (const std::string suite : {"fa_a2a --M 8192 --heads 4", "megamoe"}) {
    expect_refused(s, "xstage-bench", suite + " --out /dev/null --dry-run", 2, {"/dev/null: --out is a character device"});
    expect_refused(s, "xstage-bench", suite + " --out r.json --resume --dry-run", 2, {"no journal 'r.json.journal.jsonl'"});
  }
}

}  // namespace
}  // namespace xs::test
