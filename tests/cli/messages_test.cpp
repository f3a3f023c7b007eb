// tests/cli: what a new user reads (issue 31, item 6): an unknown flag is named as such, a typo in --target is
// bad input (2) before any GPU is looked for, a machine without a usable GPU says so (77), a passing gate prints
// its summary rather than every row, a finished run says why it keeps its journal, and fa-result warns when a
// calibration of another backend judges the data; every line on stderr carries the tool's name.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tool_run.hpp"

namespace xs::test {
namespace {

const std::string kGateData = std::string(XS_TEST_DATA_DIR) + "/gate/";

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(Messages, AnUnknownFlagIsNamedBeforeAMissingSubcommand) {
  Scratch s;
  expect_refused(s, "xstage-predict", "--bogus", 2, {"unknown argument --bogus"});
  expect_refused(s, "xstage-predict", "burst --bogus", 2, {"--bogus"});
}

TEST(Messages, ATargetTypoIsBadInputBeforeAnyGpuIsLookedFor) {
  Scratch s;
  // The default backend is the GPU: without the form check this machine would answer 77 (no GPU).
  expect_refused(s, "xstage-bench", "remote_store.periodic --target bogus --K 1 --out r.json", 2,
                 {"'bogus' is not a target", "peer:N"});
  expect_refused(s, "xstage-bench", "remote_store.periodic --target peer:x --K 1 --out r.json", 2, {"peer:x"});
  expect_refused(s, "xstage-calibrate", "--target bogus --out c.json", 2, {"'bogus' is not a target"});
}

TEST(Messages, NoUsableGpuIsSaidPlainly) {
  Scratch s;
  const auto before = snapshot(s.dir());
  const ToolRun r = s.run("xstage-bench", "remote_store.periodic --K 1 --B 16KiB --G 0 --no-progress --out r.json");
  if (r.rc == 0) GTEST_SKIP() << "this machine has a usable GPU";
  EXPECT_EQ(r.rc, 77) << r.err;
  // The CUDA build asks the driver; a build without nvcc has no GPU backend at all.
  EXPECT_TRUE(contains(r.err, "no usable GPU") || contains(r.err, "GPU backend not built")) << r.err;
  EXPECT_FALSE(contains(r.err, "error: CUDA driver version is insufficient")) << r.err;
  EXPECT_TRUE(contains(r.err, "--backend sim")) << r.err;
  EXPECT_EQ(snapshot(s.dir()), before);
}

TEST(Messages, APassingGatePrintsItsSummaryNotEveryRow) {
  Scratch s;
  const std::string files = "--baseline " + kGateData + "baseline.json --candidate " + kGateData +
                            "candidate_better.json --config " + kGateData + "gate.json";
  const ToolRun pass = s.run("xstage-gate", files);
  ASSERT_EQ(pass.rc, 0) << pass.err;
  EXPECT_TRUE(contains(pass.out, "PASS (")) << pass.out;
  EXPECT_TRUE(contains(pass.out, "--all prints every row")) << pass.out;
  EXPECT_FALSE(contains(pass.out, "\nSAME ")) << pass.out;
  const ToolRun all = s.run("xstage-gate", files + " --all");
  ASSERT_EQ(all.rc, 0) << all.err;
  EXPECT_TRUE(contains(all.out, "\nSAME ")) << all.out;
  EXPECT_LE(count_lines(pass.out), 3u) << pass.out;
  EXPECT_LT(count_lines(pass.out), count_lines(all.out));
  // A failing gate shows its failing rows.
  const ToolRun fail = s.run("xstage-gate", "--baseline " + kGateData + "baseline.json --candidate " + kGateData +
                                                "candidate_regressed.json --config " + kGateData + "gate.json");
  EXPECT_EQ(fail.rc, 1);
  EXPECT_TRUE(contains(fail.out, "\nWORSE    model.R_Bps")) << fail.out;
}

TEST(Messages, AFinishedRunSaysWhyItKeepsItsJournal) {
  Scratch s;
  const ToolRun r = s.run("xstage-bench", "remote_store.periodic --backend sim --K 1,2 --B 16KiB --G 0 --no-progress "
                                          "--out r.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(s.path("r.json.journal.jsonl")));
  EXPECT_TRUE(contains(r.err, "kept the journal r.json.journal.jsonl: --resume rebuilds this result")) << r.err;
}

// Every line a tool prints on stderr starts with its own name, also what library code prints (resuming, starting
// over, a kept journal): never a generic "xstage:" (issue 31).
void expect_every_line_named(const ToolRun& r, const std::string& tool) {
  std::size_t start = 0, num_lines = 0;
  while (start < r.err.size()) {
    std::size_t end = r.err.find('\n', start);
    if (end == std::string::npos) end = r.err.size();
    const std::string line = r.err.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    ++num_lines;
    EXPECT_EQ(line.rfind(tool + ": ", 0), 0u) << "a line not named " << tool << ": " << line;
  }
  EXPECT_GT(num_lines, 0u) << "nothing on stderr to check";
}

TEST(Messages, LibraryLinesCarryTheToolsName) {
  Scratch s;
  const std::string bench = "remote_store.periodic --backend sim --K 1,2 --B 16KiB --G 0 --no-progress --out r.json";
  ASSERT_EQ(s.run("xstage-bench", bench).rc, 0);
  const ToolRun again = s.run("xstage-bench", bench);  // starts its finished journal over
  ASSERT_EQ(again.rc, 0) << again.err;
  EXPECT_TRUE(contains(again.err, "xstage-bench: starting over: ")) << again.err;
  expect_every_line_named(again, "xstage-bench");
  std::filesystem::remove(s.path("r.json"));
  const ToolRun resumed = s.run("xstage-bench", bench + " --resume");
  ASSERT_EQ(resumed.rc, 0) << resumed.err;
  EXPECT_TRUE(contains(resumed.err, "xstage-bench: resuming 2/2 points")) << resumed.err;
  expect_every_line_named(resumed, "xstage-bench");

  const std::string cal = "--backend sim --no-progress --config " + std::string(XS_TEST_DATA_DIR) +
                          "/../../configs/calibrate/quick.json --out c.json";
  ASSERT_EQ(s.run("xstage-calibrate", cal).rc, 0);
  const ToolRun cal_again = s.run("xstage-calibrate", cal);
  ASSERT_EQ(cal_again.rc, 0) << cal_again.err;
  EXPECT_TRUE(contains(cal_again.err, "xstage-calibrate: starting over: ")) << cal_again.err;
  expect_every_line_named(cal_again, "xstage-calibrate");
  std::filesystem::remove(s.path("c.json"));
  const ToolRun cal_resumed = s.run("xstage-calibrate", cal + " --resume");
  ASSERT_EQ(cal_resumed.rc, 0) << cal_resumed.err;
  EXPECT_TRUE(contains(cal_resumed.err, "xstage-calibrate: resuming ")) << cal_resumed.err;
  expect_every_line_named(cal_resumed, "xstage-calibrate");
}

// CLI11's refusals: the pointer to --help carries the tool's name too (it was "Run with --help ..." alone).
TEST(Messages, ParseErrorsCarryTheToolsNameOnEveryLine) {
  Scratch s;
  for (const std::string tool : {"xstage-gate", "xstage-predict", "xstage-calibrate"}) {
    const ToolRun r = s.run(tool, "--bogus");
    EXPECT_EQ(r.rc, 2) << r.err;
    expect_every_line_named(r, tool);
    EXPECT_TRUE(contains(r.err, tool + ": run with --help for more information")) << r.err;
  }
}

// nan and inf are refused as values that are not finite, with the accepted form (was "cannot read number 'nan'").
TEST(Messages, NanAndInfAreRefusedNamingTheAcceptedForm) {
  Scratch s;
  const std::string platform = " --R 717GB/s --tiss0 0.76us --Q 4.25MiB";
  expect_refused(s, "xstage-predict", "burst --K 132 --B nan --G 2us" + platform, 2,
                 {"--B: 'nan' is not a finite number; expected a finite number with B, KB, KiB", "(e.g. 32KiB)"});
  expect_refused(s, "xstage-predict", "burst --K 132 --B 32KiB --G inf" + platform, 2,
                 {"--G: 'inf' is not a finite number; expected a finite number with ns, us, ms or s"});
  expect_refused(s, "xstage-predict", "burst --K 132 --B 32KiB --G 2us --R nanGB/s --tiss0 0.76us --Q 4.25MiB", 2,
                 {"--R: 'nanGB/s' is not a finite number", "(e.g. 717GB/s)"});
  expect_refused(s, "xstage-predict", "moe --shape dsv4_flash --tensor-tflops INF" + platform, 2,
                 {"--tensor-tflops: 'INF' is not a finite number; expected a finite decimal number without a unit"});
  expect_refused(s, "xstage-predict", "burst --K x --B 32KiB --G 2us" + platform, 2,
                 {"--K: cannot read integer 'x'; expected a whole number (e.g. 8)"});
}

// xstage-bench's remote-store sweep is built from its flags: a refused value names the flag, not the JSON field of
// the sweep config the flags fill ("config.blocks[0] (block cli).repetitions").
TEST(Messages, BenchSweepRefusalsNameTheFlagTyped) {
  Scratch s;
  const std::string bench = "remote_store.periodic --backend sim --dry-run ";
  expect_refused(s, "xstage-bench", bench + "--reps 0", 2, {"xstage-bench: error: --reps: 0 must be in [1, 100000]"});
  expect_refused(s, "xstage-bench", bench + "--K 0", 2, {"xstage-bench: error: --K: K=0 must be in [1, 65536]"});
  for (const std::string flag : {"--reps 0", "--K 0", "--bursts 0"}) {
    const ToolRun r = s.run("xstage-bench", bench + flag);
    EXPECT_FALSE(contains(r.err, "config.blocks")) << r.err;
  }
}

// A value CLI11 checks (a range, a set) is refused in one line naming the flag and the accepted values, as every other
// flag's (issue 31: "--block-n: Value 100 not in range 128 to 256", "0.000000 to 1.000000", then a second line).
TEST(Messages, CheckedValuesAreRefusedInOneLineNamingTheAcceptedValues) {
  Scratch s;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"xstage-bench megamoe --dry-run --block-n 100",
       "xstage-bench: error: --block-n: '100' is not a tile width; accepted: auto, 128 or 256\n"},
      {"xstage-bench remote_store.periodic --dry-run --gpus 5000",
       "xstage-bench: error: --gpus: '5000' is not accepted; expected an integer in [0, 4096]\n"},
      {"xstage-bench remote_store.periodic --dry-run --gpus x",
       "xstage-bench: error: --gpus: 'x' is not accepted; expected an integer in [0, 4096]\n"},
      {"xstage-bench remote_store.periodic --dry-run --backend sim --sim-noise 2",
       "xstage-bench: error: --sim-noise: '2' is not accepted; expected a number in [0, 1]\n"},
      {"xstage-bench remote_store.periodic --dry-run --backend foo",
       "xstage-bench: error: --backend: 'foo' is not accepted; expected one of: gpu, sim\n"},
      {"xstage-calibrate --backend sim --dry-run --bootstrap -1",
       "xstage-calibrate: error: --bootstrap: '-1' is not accepted; expected an integer in [0, 100000]\n"},
      {"xstage-calibrate --backend sim --dry-run --producer block",
       "xstage-calibrate: error: --producer: 'block' is not accepted; expected one of: cta, warp\n"}};
  for (const auto& [command, message] : cases) {
    const std::string tool = command.substr(0, command.find(' '));
    SCOPED_TRACE(command);
    const auto before = snapshot(s.dir());
    const ToolRun r = s.run(tool, command.substr(tool.size() + 1));
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, message);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(snapshot(s.dir()), before);
  }
}

TEST(Messages, TrivialBoundsAreNotPrintedAsValuesAndFaResultWarnsAboutAnotherBackend) {
  const std::string dir = std::string(XS_TEST_DATA_DIR) + "/../../results/h200/archive/2026-12-02-1bb3bca/fa_a2a-small-k/";
  Scratch s;
  // A simulator calibration of target host: the path's planted numbers, not the H200's. Its K=16 isolated
  // bursts find no knee, and the lower bound left (1 B) says nothing.
  const ToolRun cal = s.run("xstage-calibrate", "--backend sim --no-progress --out sim-cal.json");
  ASSERT_EQ(cal.rc, 0) << cal.err;
  EXPECT_FALSE(contains(cal.out, "Q >= 1 B")) << cal.out;
  EXPECT_TRUE(contains(cal.out, "K=16    Q not bounded by this sweep")) << cal.out;
  const ToolRun burst = s.run("xstage-predict", "burst --model sim-cal.json --K 16 --B 32KiB --G 0");
  expect_refusal(burst, "xstage-predict", 2, {"--Q", "Q(K=16) is not bounded by this calibration"});
  const ToolRun fa = s.run("xstage-predict", "fa --model sim-cal.json --K 16 --b-m 128 --b-n 128 --d 128 "
                                             "--elem-bytes 2 --sigma 0.79us");
  ASSERT_EQ(fa.rc, 0) << fa.err;
  EXPECT_TRUE(contains(fa.out, "capacity_bound         not decided")) << fa.out;
  EXPECT_TRUE(contains(fa.out, "capacity_bound_reason  Q(K=16) is not bounded")) << fa.out;
  const ToolRun r = s.run("xstage-predict", "fa-result " + dir + "fa-a2a-host-small-k.json --model sim-cal.json "
                                            "--out new.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "WARNING")) << r.err;
  EXPECT_TRUE(contains(r.err, "measured on backend gpu but the calibration sim-cal.json on backend sim")) << r.err;
}

}  // namespace
}  // namespace xs::test
