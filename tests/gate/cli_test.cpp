// xstage gate tests: the xstage-gate binary's exit codes (0 pass, 1 regression, 2 bad input), its JUnit
// file and --json output.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "xs/report/file_io.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/result_file.hpp"
#include "xml_check.hpp"

namespace {

const std::string kData = XS_TEST_DATA_DIR "/gate/";

int gate(const std::string& args) {
  const std::string cmd = std::string(XS_BIN_DIR) + "/xstage-gate " + args + " > /dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string files(const std::string& baseline, const std::string& candidate, const std::string& config) {
  return "--baseline " + kData + baseline + " --candidate " + kData + candidate + " --config " + kData + config;
}

class GateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(std::string(XS_BIN_DIR) + "/xstage-gate")) GTEST_SKIP() << "xstage-gate not built";
    scratch_ = std::filesystem::temp_directory_path() / ("xs_gate_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(scratch_);
  }
  void TearDown() override { std::filesystem::remove_all(scratch_); }
  std::filesystem::path scratch_;
};

TEST_F(GateCli, ExitCodes) {
  EXPECT_EQ(gate(files("baseline.json", "baseline.json", "gate.json")), 0);
  EXPECT_EQ(gate(files("baseline.json", "candidate_better.json", "gate.json")), 0);
  EXPECT_EQ(gate(files("baseline.json", "candidate_regressed.json", "gate.json")), 1);
  EXPECT_EQ(gate(files("baseline.json", "candidate_truncated.json", "gate.json")), 2);
  EXPECT_EQ(gate(files("baseline.json", "no_such_file.json", "gate.json")), 2);
  EXPECT_EQ(gate(files("baseline.json", "baseline.json", "bad_direction.json")), 2);
  EXPECT_EQ(gate(files("baseline.json", "baseline.json", "bad_negative_tol.json")), 2);
  EXPECT_EQ(gate(files("baseline.json", "baseline.json", "bad_unknown_key.json")), 2);
  EXPECT_EQ(gate(files("gate.json", "baseline.json", "gate.json")), 2);  // a config is no result file
  EXPECT_EQ(gate("--baseline " + kData + "baseline.json"), 2);          // missing options
  EXPECT_EQ(gate("--help"), 0);
}

TEST_F(GateCli, WritesJUnitAndJson) {
  const std::string junit = (scratch_ / "gate.xml").string();
  const std::string out = (scratch_ / "out.json").string();
  const std::string cmd = std::string(XS_BIN_DIR) + "/xstage-gate " +
                          files("baseline.json", "candidate_regressed.json", "gate.json") + " --json --junit " +
                          junit + " > " + out;
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const std::string xml = xs::report::read_text_file(junit);
  EXPECT_EQ(xs::test::xml_problem(xml), "") << xml;
  EXPECT_NE(xml.find("<failure "), std::string::npos);
  const nlohmann::json j = xs::report::parse_json_text(xs::report::read_text_file(out), out);
  EXPECT_FALSE(j["passed"].get<bool>());
  EXPECT_GT(j["counts"]["MISSING"].get<int>(), 0);
}

// Runs xstage-gate with stdout and stderr captured into files in scratch_; returns the exit code.
struct GateRun {
  int code = -1;
  std::string out, err;
};

class GateCliOutput : public GateCli {
 protected:
  GateRun run(const std::string& args) {
    const std::string out = (scratch_ / "stdout.txt").string(), err = (scratch_ / "stderr.txt").string();
    const std::string cmd = std::string(XS_BIN_DIR) + "/xstage-gate " + args + " > " + out + " 2> " + err;
    const int status = std::system(cmd.c_str());
    GateRun r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = xs::report::read_text_file(out);
    r.err = xs::report::read_text_file(err);
    return r;
  }
};

std::size_t count_lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

TEST_F(GateCliOutput, TheTablePrintsTheFailingRowsAndTheSummaryUnlessAll) {
  const GateRun all = run(files("baseline.json", "candidate_regressed.json", "gate.json") + " --all");
  const GateRun failing = run(files("baseline.json", "candidate_regressed.json", "gate.json"));
  EXPECT_EQ(all.code, 1);
  EXPECT_EQ(failing.code, 1);
  EXPECT_LT(count_lines(failing.out), count_lines(all.out));
  EXPECT_EQ(failing.out.find("\nSAME"), std::string::npos) << failing.out;
  EXPECT_NE(failing.out.find("\nWORSE    model.R_Bps"), std::string::npos) << failing.out;
  EXPECT_NE(failing.out.find("FAIL: "), std::string::npos) << failing.out;
  const auto summary = [](const std::string& out) {  // the summary line (the default adds a hint after it)
    const std::string from = out.substr(out.rfind("FAIL: "));
    return from.substr(0, from.find('\n'));
  };
  EXPECT_EQ(summary(all.out), summary(failing.out));
  EXPECT_NE(failing.out.find("--all prints every row"), std::string::npos) << failing.out;
}

TEST_F(GateCliOutput, CsvFileAndMarkdownTable) {
  const std::string csv = (scratch_ / "gate.csv").string();
  const GateRun r = run(files("baseline.json", "candidate_regressed.json", "gate.json") + " --md --csv " + csv);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out.rfind("| verdict | metric | instance |", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("| 717 GB/s | 645 GB/s |"), std::string::npos) << r.out;
  const std::string text = xs::report::read_text_file(csv);
  EXPECT_EQ(text.rfind("verdict,metric,instance,baseline,candidate,unit,", 0), 0u) << text;
  EXPECT_NE(text.find("\nWORSE,model.R_Bps,,7.17e+11,6.45e+11,B/s,"), std::string::npos) << text;
  // --md and --json exclude each other; an unwritable --csv is bad input and prints no verdict.
  EXPECT_EQ(run(files("baseline.json", "baseline.json", "gate.json") + " --md --json").code, 2);
  xs::report::write_text_atomic((scratch_ / "no").string(), "a file where a folder would be");
  const GateRun bad = run(files("baseline.json", "candidate_regressed.json", "gate.json") + " --csv " +
                      (scratch_ / "no/dir.csv").string());
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.out, "");
  EXPECT_NE(bad.err.find("dir.csv"), std::string::npos) << bad.err;
}

TEST_F(GateCliOutput, ProvenanceMismatchWarnsButDoesNotFail) {
  const GateRun r = run(files("baseline.json", "candidate_other_device.json", "gate.json"));
  EXPECT_EQ(r.code, 0);  // same numbers: the verdict is PASS, the warning is loud but not a failure
  EXPECT_NE(r.err.find("xstage-gate: WARNING: backend differs: baseline gpu, candidate sim"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("WARNING: device name differs"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("PASS ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 WARNINGS"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("same bytes"), std::string::npos) << r.err;
  // A file against itself: no provenance warning, but a note that the PASS is by construction.
  const GateRun quiet = run(files("baseline.json", "baseline.json", "gate.json"));
  EXPECT_EQ(quiet.err.find("WARNING"), std::string::npos) << quiet.err;
  EXPECT_NE(quiet.err.find("hold the same bytes"), std::string::npos) << quiet.err;
  EXPECT_EQ(quiet.out.find("WARNING"), std::string::npos);
  const GateRun quiet_json = run(files("baseline.json", "baseline.json", "gate.json") + " --json");
  EXPECT_NE(quiet_json.out.find("\"identical_inputs\": true"), std::string::npos) << quiet_json.out;
}

TEST_F(GateCli, UnwritableJUnitIsBadInput) {
  // A missing folder is made (as for every --out); a path under a regular file cannot be written.
  xs::report::write_text_atomic((scratch_ / "file").string(), "x");
  EXPECT_EQ(gate(files("baseline.json", "baseline.json", "gate.json") + " --junit " + (scratch_ / "file/dir.xml").string()), 2);
}

}  // namespace

namespace {

// Every output path is checked before any is written: a bad --csv leaves no --junit behind, and a --junit
// in a folder that does not exist yet gets its folder once the comparison stands.
TEST_F(GateCli, OutputPathsAreCheckedBeforeAnyIsWritten) {
  const std::filesystem::path junit = scratch_ / "new" / "dir" / "j.xml";
  EXPECT_EQ(gate(files("baseline.json", "baseline.json", "gate.json") + " --junit " + junit.string() +
                 " --csv /dev/null"),
            2);
  EXPECT_FALSE(std::filesystem::exists(scratch_ / "new")) << "nothing may be created on exit 2";
  EXPECT_EQ(gate(files("baseline.json", "baseline.json", "gate.json") + " --junit " + junit.string()), 0);
  EXPECT_TRUE(std::filesystem::is_regular_file(junit));
}

}  // namespace
