// tests/cli: a command's outputs are written all or none (report/output_set.hpp). An output that passes the checks
// but cannot be written (as root, a file in /sys: the folder looks writable, sysfs takes no new file) is exit 2
// naming it, and the outputs before it in the set are not written either: before issue 31 --out (or --junit) was
// already in place when the later --csv (or --md) failed, a half-written set.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tool_run.hpp"

namespace xs::test {
namespace {

const std::string kRoot = std::string(XS_TEST_DATA_DIR) + "/../..";
const std::string kGateData = std::string(XS_TEST_DATA_DIR) + "/gate/";
const std::string kMoe = kRoot + "/results/h200/megamoe/matrix/megamoe-bf16-6976.json";
const std::string kMoeCal = kRoot + "/results/h200/megamoe/calibration-moe-pattern.json";
const std::string kUnwritable = "/sys/xs-output-set-test.csv";

// Root and a sysfs /sys: the one unwritable path that every pre-write check accepts.
bool have_unwritable_path() {
  return ::geteuid() == 0 && std::filesystem::is_directory("/sys/kernel") && !std::filesystem::exists(kUnwritable);
}

void expect_none_written(const ToolRun& r, const std::string& tool, const std::string& flag, const Scratch& s,
                         const std::string& first_output) {
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_TRUE(contains(r.err, tool + ": error: " + flag + ": " + kUnwritable)) << r.err;
  EXPECT_TRUE(contains(r.err, "none of the outputs was written")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(s.path(first_output))) << first_output << " was written: a half-written set";
  for (const auto& e : std::filesystem::directory_iterator(s.dir()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

TEST(OutputSet, GateJunitIsNotWrittenWhenItsCsvCannotBe) {
  if (!have_unwritable_path()) GTEST_SKIP() << "needs root and /sys";
  Scratch s;
  for (const char* f : {"baseline.json", "candidate_regressed.json", "gate.json"})
    std::filesystem::copy_file(kGateData + f, s.path(f));
  const auto before = snapshot(s.dir());
  const ToolRun r = s.run("xstage-gate", "--baseline baseline.json --candidate candidate_regressed.json --config "
                                         "gate.json --junit j.xml --csv " + kUnwritable);
  expect_none_written(r, "xstage-gate", "--csv", s, "j.xml");
  EXPECT_EQ(r.out, "") << "a verdict was printed although the outputs were refused";
  EXPECT_EQ(snapshot(s.dir()), before);
}

TEST(OutputSet, CalibrateAndBenchOutIsNotWrittenWhenTheirCsvCannotBe) {
  if (!have_unwritable_path()) GTEST_SKIP() << "needs root and /sys";
  Scratch s;
  write_file(s.path("sweep.json"), R"({"target": "host", "defaults": {"repetitions": 3},
    "blocks": [{"name": "a", "suite": "periodic", "K": "1", "B": "16KiB", "G": "0"}]})");
  const ToolRun cal = s.run("xstage-calibrate", "--backend sim --config sweep.json --no-fit --no-progress --out "
                                               "cal.json --csv " + kUnwritable);
  expect_none_written(cal, "xstage-calibrate", "--csv", s, "cal.json");
  // Nothing measured is lost, and the message says where it is (a hostile review of 2026-12-07: it said only that
  // nothing was written).
  EXPECT_TRUE(contains(cal.err, "measured points are kept in cal.json.journal.jsonl")) << cal.err;
  EXPECT_TRUE(std::filesystem::exists(s.path("cal.json.journal.jsonl")));
  const ToolRun bench = s.run("xstage-bench", "remote_store.periodic --backend sim --K 1 --B 16KiB --G 0 --no-progress "
                                             "--out r.json --csv " + kUnwritable);
  expect_none_written(bench, "xstage-bench", "--csv", s, "r.json");
  EXPECT_TRUE(contains(bench.err, "measured points are kept in r.json.journal.jsonl")) << bench.err;
}

TEST(OutputSet, MoeScoreOutIsNotWrittenWhenItsMarkdownCannotBe) {
  if (!have_unwritable_path()) GTEST_SKIP() << "needs root and /sys";
  Scratch s;
  const ToolRun r = s.run("xstage-predict", "moe-score --results " + kMoe + " --model " + kMoeCal +
                                                " --out score.json --md " + kUnwritable);
  expect_none_written(r, "xstage-predict", "--md", s, "score.json");
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace xs::test
