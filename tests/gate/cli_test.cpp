// xstage gate tests: the xstage-gate binary's exit codes (0 pass, 1 regression, 2 bad input), its JUnit
// file and --json output.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "report/file_io.hpp"
#include "report/json_read.hpp"
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

TEST_F(GateCli, UnwritableJUnitIsBadInput) {
  EXPECT_EQ(gate(files("baseline.json", "baseline.json", "gate.json") + " --junit " + (scratch_ / "no/dir.xml").string()), 2);
}

}  // namespace
