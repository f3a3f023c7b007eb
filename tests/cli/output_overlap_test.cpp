// tests/cli: no output overwrites an input or another output (issue 31, item 6). Every tool refuses, with exit 2
// and a message naming both options, an output that is one of its inputs or another output, by path, through a
// symlink or a hard link, before anything runs; the folder is left exactly as it was. A symlinked output is
// written through (the link stays a link) and "-" / /dev/stdout stream the file without replacing anything.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tool_run.hpp"

namespace xs::test {
namespace {

const std::string kGateData = std::string(XS_TEST_DATA_DIR) + "/gate/";
const std::string kModel = std::string(XS_TEST_DATA_DIR) + "/model/calibration_ok.json";

// A scratch folder holding the gate's three inputs as b.json, c.json and g.json.
void copy_gate_inputs(const Scratch& s) {
  std::filesystem::copy_file(kGateData + "baseline.json", s.path("b.json"));
  std::filesystem::copy_file(kGateData + "candidate_regressed.json", s.path("c.json"));
  std::filesystem::copy_file(kGateData + "gate.json", s.path("g.json"));
}

const std::string kGateArgs = "--baseline b.json --candidate c.json --config g.json";
const std::string kBenchArgs = "remote_store.periodic --backend sim --K 1,2 --B 16KiB --G 0 --no-progress";

TEST(OutputOverlap, GateOutputsOntoItsInputsAreRefused) {
  Scratch s;
  copy_gate_inputs(s);
  ASSERT_EQ(::link(s.path("c.json").c_str(), s.path("hard.json").c_str()), 0);
  std::filesystem::create_symlink(s.path("g.json"), s.path("soft.json"));
  expect_refused(s, "xstage-gate", kGateArgs + " --junit c.json", 2,
                 {"--junit: 'c.json' is the same file as --candidate", "give another path"});
  expect_refused(s, "xstage-gate", kGateArgs + " --junit g.json", 2, {"--junit", "--config"});
  expect_refused(s, "xstage-gate", kGateArgs + " --csv b.json", 2, {"--csv", "--baseline"});
  expect_refused(s, "xstage-gate", kGateArgs + " --junit hard.json", 2, {"--junit", "--candidate 'c.json'"});
  expect_refused(s, "xstage-gate", kGateArgs + " --csv soft.json", 2, {"--csv", "--config 'g.json'"});
  expect_refused(s, "xstage-gate", kGateArgs + " --junit x.xml --csv ./x.xml", 2,
                 {"--csv", "same file as --junit", "another output"});
}

TEST(OutputOverlap, BenchOutputsOntoItsModelAreRefused) {
  Scratch s;
  std::filesystem::copy_file(kModel, s.path("m.json"));
  expect_refused(s, "xstage-bench", kBenchArgs + " --model m.json --out m.json", 2, {"--out", "same file as --model"});
  expect_refused(s, "xstage-bench", kBenchArgs + " --model m.json --out r.json --csv m.json", 2,
                 {"--csv", "--model"});
  expect_refused(s, "xstage-bench", kBenchArgs + " --out r.json --csv r.json", 2, {"--csv", "--out", "another output"});
  expect_refused(s, "xstage-bench", kBenchArgs + " --out r.json --csv r.json.journal.jsonl", 2,
                 {"--csv", "the journal"});
  // The default --out (out/bench-<suite>-<target>.json) is checked too.
  std::filesystem::create_directory(s.path("out"));
  std::filesystem::copy_file(kModel, s.path("out/bench-remote_store.periodic-host.json"));
  expect_refused(s, "xstage-bench", kBenchArgs + " --model out/bench-remote_store.periodic-host.json", 2,
                 {"--out", "same file as --model"});
}

TEST(OutputOverlap, CalibrateOutputsOntoItsInputsAreRefused) {
  Scratch s;
  const ToolRun dump = s.run("xstage-calibrate", "--dump-config");
  ASSERT_EQ(dump.rc, 0) << dump.err;
  write_file(s.path("cfg.json"), dump.out);
  std::filesystem::copy_file(kModel, s.path("cal.json"));
  const std::string sim = "--backend sim --no-progress ";
  expect_refused(s, "xstage-calibrate", sim + "--out c.json --csv c.json", 2, {"--csv", "--out"});
  expect_refused(s, "xstage-calibrate", sim + "--config cfg.json --out cfg.json", 2, {"--out", "--config"});
  expect_refused(s, "xstage-calibrate", sim + "--out c.json --csv c.json.journal.jsonl", 2, {"--csv", "the journal"});
  expect_refused(s, "xstage-calibrate", sim + "--dry-run --config cfg.json --out cfg.json", 2, {"--out", "--config"});
  expect_refused(s, "xstage-calibrate", "--refit cal.json --csv cal.json", 2, {"--csv", "--refit"});
  expect_refused(s, "xstage-calibrate", "--refit cal.json --out cal.json", 2, {"--out", "--refit"});
  expect_refused(s, "xstage-calibrate", "--refit cal.json", 2, {"--out", "never overwritten"});
  // Folders are not created before a refusal.
  expect_refused(s, "xstage-calibrate", "--refit cal.json --out new/dir/x.json --csv cal.json", 2, {"--csv"});
  EXPECT_FALSE(std::filesystem::exists(s.path("new")));
}

TEST(OutputOverlap, SymlinkedOutputIsWrittenThroughAndStaysALink) {
  Scratch s;
  copy_gate_inputs(s);
  write_file(s.path("target.csv"), "old");
  std::filesystem::create_symlink("target.csv", s.path("link.csv"));
  const ToolRun r = s.run("xstage-gate", kGateArgs + " --csv link.csv");
  EXPECT_EQ(r.rc, 1) << r.err;  // the regressed candidate fails the gate; the files are written all the same
  EXPECT_TRUE(std::filesystem::is_symlink(s.path("link.csv")));
  EXPECT_TRUE(contains(read_file(s.path("target.csv")), "verdict,metric,instance")) << read_file(s.path("target.csv"));
}

TEST(OutputOverlap, StreamsAreWrittenDirectlyNeverRenamedOver) {
  Scratch s;
  copy_gate_inputs(s);
  struct stat before {};
  ASSERT_EQ(::lstat("/dev/stdout", &before), 0);
  for (const std::string stream : {"-", "/dev/stdout"}) {
    SCOPED_TRACE(stream);
    const auto folder = snapshot(s.dir());
    const ToolRun r = s.run("xstage-gate", kGateArgs + " --junit " + stream);
    EXPECT_EQ(r.rc, 1) << r.err;
    EXPECT_EQ(r.out.rfind("<?xml", 0), 0u) << "stdout holds the JUnit file alone:\n" << r.out;
    EXPECT_TRUE(contains(r.err, "FAIL: ")) << "the table goes to stderr:\n" << r.err;
    EXPECT_EQ(snapshot(s.dir()), folder);
  }
  struct stat after {};
  ASSERT_EQ(::lstat("/dev/stdout", &after), 0);
  EXPECT_EQ(S_ISLNK(after.st_mode), S_ISLNK(before.st_mode)) << "/dev/stdout was replaced";
  EXPECT_EQ(after.st_ino, before.st_ino);
  expect_refused(s, "xstage-gate", kGateArgs + " --junit - --json", 2, {"--junit", "stdout", "--json"});

  // xstage-bench: the CSV alone on stdout, its table on stderr; --out must be a file (its journal goes beside it).
  const ToolRun bench = s.run("xstage-bench", kBenchArgs + " --out r.json --csv -");
  ASSERT_EQ(bench.rc, 0) << bench.err;
  EXPECT_EQ(bench.out.rfind("id,suite,K,", 0), 0u) << bench.out;
  EXPECT_TRUE(contains(bench.err, "wrote r.json")) << bench.err;
  expect_refused(s, "xstage-bench", kBenchArgs + " --out -", 2, {"--out", "is the standard output, not a file"});
  expect_refused(s, "xstage-bench", kBenchArgs + " --out /dev/stdout", 2, {"is the standard output"});
}

TEST(OutputOverlap, EmptyOutputPathIsRefusedNotDefaulted) {
  Scratch s;
  copy_gate_inputs(s);
  const auto before = snapshot(s.dir());
  RunOptions in_dir;
  in_dir.cwd = s.dir();
  for (const auto& [tool, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"xstage-bench", {"remote_store.periodic", "--backend", "sim", "--K", "1", "--out", ""}},
           {"xstage-calibrate", {"--backend", "sim", "--out", ""}},
           {"xstage-gate", {"--baseline", "b.json", "--candidate", "c.json", "--config", "g.json", "--junit", ""}},
           {"xstage-predict", {"fa-result", "x.json", "--model", "m.json", "--out", ""}}}) {
    SCOPED_TRACE(tool);
    expect_refusal(run_tool(tool, args, in_dir), tool, 2, {"an empty path"});
    EXPECT_EQ(snapshot(s.dir()), before);
  }
}

}  // namespace
}  // namespace xs::test
