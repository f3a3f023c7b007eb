// tests/cli: a command's outputs are written all or none (report/output_set.hpp). An output whose folder looks
// writable but takes no file (as root, a file in /sys) is exit 2 naming it before anything runs, --dry-run too:
// before issue 31 --out (or --junit) was already in place when the later --csv (or --md) failed, a half-written set,
// and then (until its leftovers were closed) the sweep was measured before the write failed. A set that fails at
// the write itself is written none: output_names_test.cpp's ACsvAnotherCommandWroteMeanwhileIsNotReplaced.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

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

// The refusal of an output in /sys, before anything runs: the folder is probed (a temporary file created and
// removed), so the path that every other check accepts is named with the flag, and nothing is written or measured.
std::vector<std::string> unwritable(const std::string& flag) {
  return {kUnwritable + ": " + flag + " cannot be written: folder /sys takes no new file"};
}

TEST(OutputSet, GateRefusesACsvThatCannotBeWrittenBeforeWritingItsJunit) {
  if (!have_unwritable_path()) GTEST_SKIP() << "needs root and /sys";
  Scratch s;
  for (const char* f : {"baseline.json", "candidate_regressed.json", "gate.json"})
    std::filesystem::copy_file(kGateData + f, s.path(f));
  expect_refused(s, "xstage-gate", "--baseline baseline.json --candidate candidate_regressed.json --config gate.json "
                                   "--junit j.xml --csv " + kUnwritable, 2, unwritable("--csv"));
}

// Before issue 31's leftovers were closed the sweep was measured first and the write failed after it; the dry run
// accepted the path (exit 0).
TEST(OutputSet, CalibrateAndBenchRefuseACsvThatCannotBeWrittenBeforeMeasuring) {
  if (!have_unwritable_path()) GTEST_SKIP() << "needs root and /sys";
  Scratch s;
  write_file(s.path("sweep.json"), R"({"target": "host", "defaults": {"repetitions": 3},
    "blocks": [{"name": "a", "suite": "periodic", "K": "1", "B": "16KiB", "G": "0"}]})");
  for (const std::string dry : {" --dry-run", ""}) {
    expect_refused(s, "xstage-calibrate", "--backend sim --config sweep.json --no-fit --no-progress --out cal.json "
                                          "--csv " + kUnwritable + dry, 2, unwritable("--csv"));
    expect_refused(s, "xstage-bench", "remote_store.periodic --backend sim --K 1 --B 16KiB --G 0 --no-progress --out "
                                      "r.json --csv " + kUnwritable + dry, 2, unwritable("--csv"));
    expect_refused(s, "xstage-bench", "remote_store.periodic --backend sim --K 1 --B 16KiB --G 0 --no-progress --out "
                                      "/sys/xs-sub/r.json" + dry, 2,
                   {"/sys/xs-sub/r.json: --out cannot be written: folder /sys takes no new folder"});
  }
}

TEST(OutputSet, MoeScoreRefusesAMarkdownThatCannotBeWritten) {
  if (!have_unwritable_path()) GTEST_SKIP() << "needs root and /sys";
  Scratch s;
  expect_refused(s, "xstage-predict", "moe-score --results " + kMoe + " --model " + kMoeCal + " --out score.json --md " +
                                          kUnwritable, 2, unwritable("--md"));
}

}  // namespace
}  // namespace xs::test
