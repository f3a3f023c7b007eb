// xstage-gate on the committed H200 calibrations (results/h200): both runs are refitted in-process with the
// current fitter (so the held-out validation keys exist whatever the files hold), then run 2 is gated
// against run 1. Every plant is relative to the files' own values, so the tests hold for whichever pair of
// runs is committed. A Q(K) the H200 fit does not identify is gated on its bound; the +20% plant on an
// identified Q runs on two simulator calibrations (different seeds), where Q is identified.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "xs/bench/calibration.hpp"
#include "xs/gate/compare.hpp"
#include "xs/report/result_file.hpp"

namespace xs {
namespace {

const std::string kRoot = std::string(XS_TEST_DATA_DIR) + "/../..";

nlohmann::json refitted(const std::string& path) {
  report::ResultFile file = report::read_result_file(path);
  bench::analyse_calibration(file, std::nullopt);
  return report::to_json(file);
}
const nlohmann::json& run1() {
  static const nlohmann::json j = refitted(kRoot + "/results/h200/calibration/calibration-host.json");
  return j;
}
const nlohmann::json& run2() {
  static const nlohmann::json j = refitted(kRoot + "/results/h200/gate/calibration-host-run2.json");
  return j;
}
gate::GateConfig config(const std::string& name) { return gate::read_gate_config(kRoot + "/configs/gate/" + name); }

// The metrics of the failing rows.
std::set<std::string> failing(const gate::GateReport& report) {
  std::set<std::string> out;
  for (const auto& row : report.rows)
    if (gate::is_failure(row.status)) out.insert(row.metric + " " + row.instance);
  return out;
}

TEST(GateOnH200Results, ModelLevelGatePassesRunToRun) {
  const gate::GateReport r = gate::compare(run1(), run2(), config("calibration-model.json"));
  EXPECT_TRUE(r.passed()) << "failing: " << ::testing::PrintToString(failing(r));
  EXPECT_EQ(r.count(gate::Status::kMissing), 0u);
  EXPECT_GT(r.count(gate::Status::kSame), 10u);
}

TEST(GateOnH200Results, PlantedDrainRateChangeIsCaught) {
  nlohmann::json cand = run2();
  cand["model"]["R_Bps"] = 1.2 * cand["model"]["R_Bps"].get<double>();
  const gate::GateReport r = gate::compare(run1(), cand, config("calibration-model.json"));
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(failing(r), (std::set<std::string>{"model.R_Bps "}));
}

// Each Q(K) row: an identified one fails at +20%; an unidentified one is compared on its bound only, so
// +20% of its diagnostic value passes, and losing a "fit" bound fails whatever the value.
TEST(GateOnH200Results, CapacityIsGatedOnItsBoundAndIdentifiedValue) {
  const gate::GateConfig c = config("calibration-model.json");
  const auto& base_rows = run1()["model"]["Q"];
  ASSERT_FALSE(base_rows.empty());
  for (std::size_t i = 0; i < run2()["model"]["Q"].size(); ++i) {
    nlohmann::json cand = run2();
    nlohmann::json& row = cand["model"]["Q"][i];
    const int k = row["K"].get<int>();
    const nlohmann::json* base = nullptr;
    for (const auto& b : base_rows)
      if (b["K"] == row["K"]) base = &b;
    if (!base) continue;
    const bool both_fit = base->value("bound", "fit") == "fit" && row.value("bound", "fit") == "fit";
    if (!row["bytes"].is_number()) continue;
    row["bytes"] = 1.2 * row["bytes"].get<double>();
    gate::GateReport r = gate::compare(run1(), cand, c);
    EXPECT_EQ(r.passed(), !both_fit) << "K=" << k << " failing: " << ::testing::PrintToString(failing(r));
    if (base->value("bound", "fit") == "fit") {
      row["bytes"] = row["bytes"].get<double>() / 1.2;
      row["bound"] = "not_identified";
      r = gate::compare(run1(), cand, c);
      EXPECT_FALSE(r.passed()) << "K=" << k;
    }
  }
}

// T_iss^0 rows moved <= 1.03% between back-to-back runs (see the config's description): a +20% change of
// one row is caught, and so is a doubled one.
TEST(GateOnH200Results, PlantedTiss0ChangeIsCaught) {
  const gate::GateConfig c = config("calibration-model.json");
  for (double factor : {1.2, 2.0}) {
    nlohmann::json cand = run2();
    nlohmann::json& row = cand["model"]["tiss0"].back();
    row["s"] = factor * row["s"].get<double>();
    const gate::GateReport r = gate::compare(run1(), cand, c);
    EXPECT_FALSE(r.passed()) << "factor " << factor;
    const std::set<std::string> f = failing(r);
    ASSERT_EQ(f.size(), 1u) << "factor " << factor;
    EXPECT_EQ(f.begin()->rfind("model.tiss0[*].s", 0), 0u) << *f.begin();
  }
}

TEST(GateOnH200Results, HeldOutValidationRegressionIsCaught) {
  nlohmann::json cand = run2();
  auto& plateau = cand["validation"]["held_out"]["regimes"]["plateau"];
  plateau["issue_median_rel_err"] = plateau["issue_median_rel_err"].get<double>() + 0.02;  // twice the tolerance
  EXPECT_FALSE(gate::compare(run1(), cand, config("calibration-model.json")).passed());
  cand = run2();
  auto& unpredicted = cand["validation"]["held_out"]["regimes"]["plateau"]["num_unpredicted"];
  unpredicted = unpredicted.get<int>() + 1;
  EXPECT_FALSE(gate::compare(run1(), cand, config("calibration-model.json")).passed());
}

// The per-point gate passes run to run (changes the repetitions do not support are NOISE) and fails when
// every point's issue time and period, repetitions included, are 15% slower.
TEST(GateOnH200Results, PerPointGatePassesRunToRunAndCatchesASlowdown) {
  const gate::GateConfig c = config("calibration.json");
  gate::GateReport r = gate::compare(run1(), run2(), c);
  EXPECT_TRUE(r.passed()) << "failing: " << ::testing::PrintToString(failing(r));
  nlohmann::json cand = run2();
  for (auto& point : cand["points"]) {
    for (const char* key : {"issue_time_s", "period_s"}) {
      if (!point.contains(key) || !point[key].is_object()) continue;
      for (auto& [name, value] : point[key].items()) {
        if (value.is_number()) value = 1.15 * value.get<double>();
        if (name == "samples")
          for (auto& s : value)
            if (s.is_number()) s = 1.15 * s.get<double>();
      }
    }
  }
  r = gate::compare(run1(), cand, c);
  EXPECT_FALSE(r.passed());
  std::size_t slower = 0;
  for (const auto& row : r.rows)
    if (row.status == gate::Status::kWorse && row.metric.rfind("points[*].", 0) == 0) ++slower;
  EXPECT_GT(slower, 100u);  // most points, not a stray knee point
}

TEST(GateOnH200Results, ConfigsUseOnlyTheHeldOutValidationKeys) {
  for (const char* name : {"calibration-model.json", "calibration.json"})
    for (const auto& m : config(name).metrics)
      if (m.name.rfind("validation.", 0) == 0) {
        EXPECT_EQ(m.name.rfind("validation.held_out.", 0), 0u) << name << ": " << m.name;
      }
}

// Two simulator calibrations (seeds 1 and 2) where Q(K) is identified: the model gate passes run to run
// and catches +20% of one identified Q relative to the reference run.
class GateOnSimCalibration : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string exe = std::string(XS_BIN_DIR) + "/xstage-calibrate";
    if (!std::filesystem::exists(exe)) return;
    dir_ = std::filesystem::temp_directory_path() / ("xs_gate_sim_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    for (int seed : {1, 2}) {
      const std::string out = (dir_ / ("sim" + std::to_string(seed) + ".json")).string();
      const std::string cmd = exe + " --backend sim --no-progress --seed " + std::to_string(seed) + " --out " + out +
                              " > /dev/null 2>&1";
      if (std::system(cmd.c_str()) != 0) return;
      (seed == 1 ? sim1_ : sim2_) = report::to_json(report::read_result_file(out));
    }
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void SetUp() override {
    if (sim1_.is_null() || sim2_.is_null()) GTEST_SKIP() << "xstage-calibrate not built or the sim run failed";
  }
  static inline std::filesystem::path dir_;
  static inline nlohmann::json sim1_, sim2_;
};

TEST_F(GateOnSimCalibration, ModelGatePassesAndCatchesAnIdentifiedCapacityChange) {
  const gate::GateConfig c = config("calibration-model.json");
  EXPECT_TRUE(gate::compare(sim1_, sim2_, c).passed());
  std::size_t planted = 0;
  for (std::size_t i = 0; i < sim2_["model"]["Q"].size(); ++i) {
    const auto& base = sim1_["model"]["Q"][i];
    nlohmann::json cand = sim2_;
    auto& row = cand["model"]["Q"][i];
    if (base["K"] != row["K"] || base.value("bound", "") != "fit" || row.value("bound", "") != "fit") continue;
    row["bytes"] = 1.2 * base["bytes"].get<double>();  // +20% against the reference run
    const gate::GateReport r = gate::compare(sim1_, cand, c);
    EXPECT_EQ(failing(r), (std::set<std::string>{"model.Q[*].bytes K=" + std::to_string(row["K"].get<int>())}));
    ++planted;
  }
  EXPECT_GE(planted, 2u) << "the simulator no longer identifies Q(K): the plant tests nothing";
}

}  // namespace
}  // namespace xs
