// xstage-gate on the committed H200 calibrations (results/h200): two back-to-back runs pass the
// model-level gate and fail the per-point one, which is what their measured run-to-run spread says.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <sys/wait.h>

namespace {

int gate(const std::string& config) {
  const std::string root = std::string(XS_TEST_DATA_DIR) + "/../..";
  const std::string cmd = std::string(XS_BIN_DIR) + "/xstage-gate --baseline " + root +
                          "/results/h200/calibration/calibration-host.json --candidate " + root +
                          "/results/h200/gate/calibration-host-run2.json --config " + root + "/configs/gate/" +
                          config + " > /dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(GateOnH200Results, ModelLevelGatePassesRunToRun) { EXPECT_EQ(gate("calibration-model.json"), 0); }

TEST(GateOnH200Results, PerPointGateFlagsTheNoisyKneePoints) { EXPECT_EQ(gate("calibration.json"), 1); }

}  // namespace
