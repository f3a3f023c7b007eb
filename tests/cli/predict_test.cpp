// tests/cli: the xstage-predict contract scripts rely on, run against the built binary: JSON keys and
// number types, the table form, exit 2 with one message naming the field (nothing on stdout), --model.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

const std::string kBinary = std::string(XS_BIN_DIR) + "/xstage-predict";
const std::string kData = std::string(XS_TEST_DATA_DIR) + "/model/";
const std::string kPlatform = " --R 717GB/s --tiss0 0.76us --Q 4.25MiB";

struct ToolRun {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ToolRun run(const std::string& args) {
  const std::string base =
      ::testing::TempDir() + "xs_predict_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string cmd = kBinary + " " + args + " >" + base + ".out 2>" + base + ".err";
  const int status = std::system(cmd.c_str());
  ToolRun r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  return r;
}

json run_json(const std::string& args) {
  const ToolRun r = run(args + " --json");
  EXPECT_EQ(r.rc, 0) << args << "\n" << r.err;
  return json::parse(r.out);
}

void expect_numbers(const json& j, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    ASSERT_TRUE(j.contains(key)) << key << " missing in " << j.dump();
    EXPECT_TRUE(j[key].is_number()) << key << " = " << j[key].dump();
  }
}

void expect_bad_input(const std::string& args, std::initializer_list<const char*> needles) {
  const ToolRun r = run(args);
  EXPECT_EQ(r.rc, 2) << args << "\n" << r.err;
  EXPECT_TRUE(r.out.empty()) << "stdout must stay empty on bad input: " << r.out;
  for (const char* needle : needles)
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\n" << r.err;
}

TEST(Predict, BurstJsonHasContractKeys) {
  const json j = run_json("burst" + kPlatform + " --K 148 --B 32KiB --G 2us");
  expect_numbers(j, {"V_bytes", "T_iss_s", "dT_iss_s", "T_period_s", "G_star_s", "q_peak_bytes",
                     "T_iss_isolated_s", "injection_rate_Bps", "drain_horizon_s", "T_period_cc_s"});
  for (const char* key : {"rate_bound_ok", "capacity_bound_ok"}) EXPECT_TRUE(j.at(key).is_boolean()) << key;
  EXPECT_EQ(j["V_bytes"].get<double>(), 148 * 32768.0);
  EXPECT_NEAR(j["G_star_s"].get<double>(), 6.0e-6, 0.05e-6);
  EXPECT_NEAR(j["T_iss_s"].get<double>(), 6.7638e-6 - 2e-6, 1e-9);  // eq. 3 on the drain branch
  EXPECT_NEAR(j["T_period_s"].get<double>(), 6.7638e-6, 1e-9);      // max law: V/R
  EXPECT_NEAR(j["T_period_cc_s"].get<double>(), 8.7638e-6, 1e-9);   // G + V/R
  EXPECT_FALSE(j["rate_bound_ok"].get<bool>());
  EXPECT_TRUE(j["capacity_bound_ok"].get<bool>());
  EXPECT_EQ(j["action"], "reshape");
}

TEST(Predict, BurstActionFlipsAtRecoveryGap) {
  EXPECT_EQ(run_json("burst" + kPlatform + " --K 148 --B 32KiB --G 6.1us")["action"], "piggyback");
  EXPECT_EQ(run_json("burst" + kPlatform + " --K 148 --B 32KiB --G 5.9us")["action"], "reshape");
  // A burst over the capacity knee reshapes however long the gap.
  const json big = run_json("burst" + kPlatform + " --K 148 --B 34KiB --G 1ms");
  EXPECT_FALSE(big["capacity_bound_ok"].get<bool>());
  EXPECT_EQ(big["action"], "reshape");
  EXPECT_GT(big["T_iss_isolated_s"].get<double>(), 0.76e-6);
}

TEST(Predict, BurstTableShowsUnits) {
  const ToolRun r = run("burst" + kPlatform + " --K 148 --B 32KiB --G 2us");
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const char* needle : {"G_star_s", "6.004 us", "q_peak_bytes", "MiB", "GB/s", "action", "reshape"})
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle << "\n" << r.out;
  EXPECT_EQ(r.out.find('{'), std::string::npos);
}

TEST(Predict, FlashAttentionBound) {
  const std::string fa =
      "fa --R 717GB/s --tiss0 0.76us --K 148 --b-m 128 --b-n 128 --d 128 --elem-bytes 2 --sigma 0.79us";
  json j = run_json(fa);
  expect_numbers(j, {"V_bytes", "G_star_s"});
  ASSERT_TRUE(j["M_ub_tokens"].is_number_integer());
  EXPECT_EQ(j["M_ub_tokens"].get<long long>(), 1024);
  EXPECT_FALSE(j.contains("dt_s"));  // only with --M
  j = run_json(fa + " --M 512 --g-qk 1us --t-lat 1us --t-cover 0.5us --num-bursts 4");
  expect_numbers(j, {"G_qloop_s", "dt_s", "dt_prime_s", "dt_cc_s", "E_drain_s", "E_cc_s"});
  EXPECT_NEAR(j["G_qloop_s"].get<double>(), 0.79e-6 * 4, 1e-12);
  EXPECT_NEAR(j["dt_s"].get<double>(), 6.0038e-6 - 3.16e-6, 1e-9);
  EXPECT_NEAR(j["E_drain_s"].get<double>(), 4 * (j["dt_s"].get<double>() - 1e-6), 1e-12);
  EXPECT_FALSE(j["rate_bound_ok"].get<bool>());
  EXPECT_EQ(run_json(fa + " --M 8192")["dt_s"].get<double>(), 0.0);
}

TEST(Predict, StallAndHiding) {
  EXPECT_NEAR(run_json("stall --span 9.93us --cover 5.30us")["dt_s"].get<double>(), 4.63e-6, 1e-12);
  EXPECT_EQ(run_json("stall --span 3.77us --cover 9.77us")["dt_s"].get<double>(), 0.0);
  const json h = run_json("hiding --t-fused 99.4us --t-fa 85.4us --t-serial 140.9us");
  expect_numbers(h, {"H", "speedup", "E_res_s"});
  EXPECT_NEAR(h["H"].get<double>(), 0.75, 0.005);
  EXPECT_NEAR(h["speedup"].get<double>(), 1.417, 0.001);
  EXPECT_NEAR(h["E_res_s"].get<double>(), 14.0e-6, 1e-12);
}

TEST(Predict, Interleave) {
  const std::string base =
      "interleave --R 717GB/s --tiss0 0.76us --V 4MiB --G-wave 2us --t-l1 1.5us --t-l2 2us --n2 1";
  json j = run_json(base + " --n1 1 --b-n 128 --num-sms 132 --h-inter 1536");
  expect_numbers(j, {"dT_wave_s", "dT_int_s", "G_int_s", "injection_rate_Bps", "D_knee"});
  EXPECT_GT(j["dT_int_s"].get<double>(), 0.0);
  EXPECT_FALSE(j["sufficient"].get<bool>());
  EXPECT_DOUBLE_EQ(j["D_knee"].get<double>(), 128.0 * 132 / (2 * 1536));
  j = run_json(base + " --n1 3");
  EXPECT_EQ(j["dT_int_s"].get<double>(), 0.0);
  EXPECT_TRUE(j["sufficient"].get<bool>());
  EXPECT_FALSE(j.contains("D_knee"));
}

TEST(Predict, ModelFileReplacesPlatformFlags) {
  const std::string shape = " --K 148 --B 32KiB --G 2us";
  const json from_model = run_json("burst --model " + kData + "calibration_ok.json" + shape);
  const json from_flags = run_json("burst --R 717GB/s --tiss0 0.76us --Q 4456296B" + shape);
  // Same keys and values; 0.76us parses to 0.76 * 1e-6, one ulp off the file's 0.76e-6.
  ASSERT_EQ(from_model.size(), from_flags.size());
  for (const auto& [key, value] : from_model.items()) {
    if (value.is_number())
      EXPECT_NEAR(value.get<double>(), from_flags.at(key).get<double>(),
                  1e-12 * std::abs(value.get<double>()))
          << key;
    else
      EXPECT_EQ(value, from_flags.at(key)) << key;
  }
  EXPECT_FALSE(from_model["tiss0_extrapolated"].get<bool>());
  // Lookups that are not point values (issue 27 item 4): outside the measured V of K = 8, T_iss^0 is the
  // bracket [0, 400 ns] and Q(8), a lower bound, [1 MiB, 4.29 MiB]; every output that depends on them is a
  // bracket, and the design test is decided only where it is the same at every end.
  const json small = run_json("burst --model " + kData + "calibration_ok.json --K 8 --B 4KiB --G 0");
  EXPECT_FALSE(small["point_prediction"].get<bool>());
  EXPECT_TRUE(small["Q_is_lower_bound"].get<bool>());
  EXPECT_TRUE(small["tiss0_s"].is_null());
  EXPECT_EQ(small["tiss0_s_bracket"], json::array({0.0, 4e-7}));
  EXPECT_EQ(small["Q_bytes_bracket"][0], 1048576);
  EXPECT_TRUE(small["T_iss_s"].is_null());
  // At T_iss^0 = 0 the injection rate is unbounded (> R), at 400 ns it is 82 GB/s (< R): the action differs.
  EXPECT_TRUE(small["injection_rate_Bps_bracket"][1].is_null());
  EXPECT_TRUE(small["action"].is_null());
  EXPECT_TRUE(small["action_not_decided"].get<bool>());
  EXPECT_TRUE(small["capacity_bound_ok"].get<bool>());  // true at every end: decided
  // Beyond the measured K, T_iss^0 has no bracket: not decided, naming the parameter.
  const json over = run_json("burst --model " + kData + "calibration_ok.json --K 200 --B 32KiB --G 0");
  EXPECT_EQ(over["prediction"], "not decided");
  EXPECT_NE(over["not_point"].get<std::string>().find("T_iss^0(K=200"), std::string::npos);
  EXPECT_NE(over["not_point"].get<std::string>().find("no bracket"), std::string::npos);
  EXPECT_FALSE(over.contains("action"));
  // interleave reads no Q (eqs. 13-16): Q(8), a lower bound, does not make it a bracket; T_iss^0 outside the
  // measured V does.
  const json inter = run_json("interleave --model " + kData +
                              "calibration_ok.json --K 8 --V 32KiB --t-l1 2us --t-l2 1us --n1 2 --n2 1");
  EXPECT_FALSE(inter["point_prediction"].get<bool>());
  EXPECT_EQ(inter["not_point"].get<std::string>().find("Q("), std::string::npos) << inter.dump();
  EXPECT_EQ(inter["tiss0_s_bracket"], json::array({0.0, 4e-7}));
  const json inter_point = run_json("interleave --model " + kData +
                                    "calibration_ok.json --K 148 --V 4736KiB --t-l1 2us --t-l2 1us --n1 2 --n2 1");
  EXPECT_FALSE(inter_point.contains("point_prediction")) << inter_point.dump();
  EXPECT_NEAR(inter_point["tiss0_s"].get<double>(), 0.76e-6, 1e-15);
  // An explicit flag overrides the file.
  EXPECT_EQ(
      run_json("burst --model " + kData + "calibration_ok.json --R 1TB/s" + shape)["R_Bps"].get<double>(),
      1e12);
}

TEST(Predict, BadInputExitsTwoWithOneMessage) {
  expect_bad_input("burst" + kPlatform + " --K 148 --B 32KiBB --G 2us", {"--B", "KiB"});
  expect_bad_input("burst" + kPlatform + " --K 148 --B 32KiB --G 2", {"--G", "us"});
  expect_bad_input("burst --R 717GBps --tiss0 0.76us --Q 4.25MiB --K 148 --B 32KiB --G 2us", {"--R"});
  expect_bad_input("burst" + kPlatform + " --K 148 --B 0 --G 2us", {"--B", "greater than zero"});
  expect_bad_input("burst" + kPlatform + " --K 0 --B 32KiB --G 2us", {"--K", ">= 1"});
  expect_bad_input("burst" + kPlatform + " --K 148 --B 32KiB --G -1us", {"--G", "negative"});
  expect_bad_input("burst" + kPlatform + " --B 32KiB --G 2us", {"--K", "required"});
  expect_bad_input("burst --tiss0 0.76us --Q 4.25MiB --K 148 --B 32KiB --G 2us",
                   {"--R", "required", "--model"});
  expect_bad_input("hiding --t-fused 99.4us --t-fa 85.4us --t-serial 80us", {"--t-serial", "--t-fa"});
  expect_bad_input(
      "interleave --R 717GB/s --tiss0 0.76us --V 4MiB --t-l1 1us --t-l2 2us --n1 1 --n2 1 --b-n 128",
      {"--num-sms", "required"});
  expect_bad_input("fa --R 717GB/s --tiss0 0.76us --K 148 --b-m 128 --b-n 128 --d 128 --elem-bytes 2 "
                   "--sigma 0.79us --num-bursts 4",
                   {"--num-bursts", "--M"});
  expect_bad_input("interleave --model " + kData + "calibration_ok.json --V 4MiB --t-l1 1us --t-l2 2us --n1 1 --n2 1",
                   {"--K", "looked up"});
  expect_bad_input("", {"subcommand"});
  expect_bad_input("burst --bogus 1", {"--bogus"});
}

TEST(Predict, BadModelFileExitsTwo) {
  const std::string shape = " --K 148 --B 32KiB --G 2us";
  expect_bad_input("burst --model " + kData + "schema_v2.json" + shape,
                   {"schema_v2.json", "schema.version", "1.x"});
  expect_bad_input("burst --model " + kData + "malformed.json" + shape, {"malformed.json", "line 10"});
  expect_bad_input("burst --model " + kData + "model_null.json" + shape, {"model"});
  expect_bad_input("burst --model " + kData + "missing.json" + shape, {"missing.json", "cannot open"});
}

TEST(Predict, HelpExplainsEveryFlag) {
  const struct {
    const char* command;
    std::initializer_list<const char*> needles;
  } cases[] = {
      {"burst", {"--R", "--tiss0", "--Q", "--K", "--B", "--G", "--model", "--json", "GB/s", "KiB", "eq."}},
      {"fa",
       {"--b-m", "--b-n", "--d", "--elem-bytes", "--sigma", "--M", "--g-qk", "--t-lat", "--t-cover",
        "--num-bursts", "eq. 20"}},
      {"stall", {"--span", "--cover", "eq. 15"}},
      {"hiding", {"--t-fused", "--t-fa", "--t-serial", "eq. 21"}},
      {"interleave",
       {"--V", "--G-wave", "--t-l1", "--t-l2", "--n1", "--n2", "--b-n", "--num-sms", "--h-inter", "eq. 16"}},
      {"moe",
       {"--model", "--shape", "--hidden", "--intermediate", "--experts", "--top-k", "--T", "--P", "--ksm",
        "--precision", "--block-n", "--routing", "--alpha", "--gain", "--routing-seed", "--tensor-tflops",
        "--from-run", "--models-file", "--target", "--json", "recommended_schedule"}},
  };
  for (const auto& c : cases) {
    const ToolRun r = run(std::string(c.command) + " --help");
    EXPECT_EQ(r.rc, 0) << c.command;
    for (const char* needle : c.needles)
      EXPECT_NE(r.out.find(needle), std::string::npos) << c.command << " " << needle;
  }
}

}  // namespace

namespace {

TEST(Predict, ResultsBeyondTheNumberRangeAreMarkedUnboundedNeverWrapped) {
  // V/R overflows a double: null with a sibling *_unbounded: true, never a bare null.
  json j = run_json("burst --R 1e-300B/s --tiss0 1us --Q 1MiB --K 1000000000 --B 16GiB --G 0");
  for (const char* key : {"drain_horizon_s", "T_iss_s", "T_period_s", "G_star_s"}) {
    EXPECT_TRUE(j.at(key).is_null()) << key;
    EXPECT_EQ(j.at(std::string(key) + "_unbounded"), true) << key;
  }
  for (const auto& [key, value] : j.items()) {
    if (value.is_null()) {
      EXPECT_TRUE(j.contains(key + "_unbounded")) << key << " is null without explanation";
    }
  }
  // M_ub* = b_n ceil(G*/sigma) beyond int64: unbounded, not -9223372036854775808.
  const ToolRun r = run("fa --R 1e-300B/s --tiss0 1us --K 8 --b-m 128 --b-n 128 --d 128 --elem-bytes 2 --sigma 1ns --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.find("-9223372036854775808"), std::string::npos) << r.out;
  j = json::parse(r.out);
  EXPECT_TRUE(j.at("M_ub_tokens").is_null());
  EXPECT_EQ(j.at("M_ub_tokens_unbounded"), true);
  // Large but representable stays an exact integer.
  j = run_json("fa --R 1B/s --tiss0 1us --K 8 --b-m 128 --b-n 128 --d 128 --elem-bytes 2 --sigma 1ns");
  EXPECT_TRUE(j.at("M_ub_tokens").is_number_integer());
  EXPECT_GT(j.at("M_ub_tokens").get<long long>(), 0);
  EXPECT_FALSE(j.contains("M_ub_tokens_unbounded"));
}

}  // namespace

// ---- moe: the MegaMoE schedule advisor ----------------------------------------------------------------------
namespace {

const std::string kRepo = std::string(XS_TEST_DATA_DIR) + "/../../";
const std::string kMoeCalibration = kRepo + "results/h200/megamoe/calibration-moe-pattern.json";
const std::string kMoeRun = kRepo + "results/h200/megamoe/megamoe-dsv4_flash-bn128.json";

// At K_SM 132 the issued burst (132 x 32 KiB) lies past the calibration's largest V at K = 132. The model's
// lookup gives no upper end there; xstage-predict moe reads the same bracket as moe-score's frozen predictions
// (moe::calibration_inputs: [largest constrained value, last row x V / V_last]), so the two tools answer alike
// and the recommendation is not left undecided for an infinite end (before: "a bracket end is unbounded").
TEST(PredictMoe, PastTheTablesLargestVTheBracketIsMoeScoresOwn) {
  const json j =
      run_json("moe --shape dsv4_flash --block-n 128 --ksm 132 --model " + kMoeCalibration + " --tensor-tflops 600");
  const std::string not_point = j["not_point"].get<std::string>();
  EXPECT_NE(not_point.find("extrapolated past the table's largest V at K=132"), std::string::npos) << not_point;
  EXPECT_EQ(not_point.find("inf"), std::string::npos) << not_point;
  EXPECT_TRUE(j["recommendation"] == "decided" || j["recommendation"] == "not decided") << j.dump();
  EXPECT_EQ(j["recommendation_why"].get<std::string>().find("unbounded"), std::string::npos) << j.dump();
}

TEST(PredictMoe, JsonHasContractKeysAndQIsNotDecided) {
  const json j = run_json("moe --shape dsv4_flash --block-n 128 --model " + kMoeCalibration + " --tensor-tflops 600");
  // T_iss^0 at K_SM 66 sits on an unconstrained row (an upper bound): the rows are at the looked-up value, said
  // so, and the recommendation is checked at both ends of its bracket (issue 27 item 4).
  EXPECT_FALSE(j["point_prediction"].get<bool>());
  EXPECT_NE(j["not_point"].get<std::string>().find("T_iss^0: unconstrained row (model.tiss0 row K=66"),
            std::string::npos) << j["not_point"];
  EXPECT_EQ(j["recommendation"], "decided");
  expect_numbers(j, {"hidden", "intermediate", "experts", "top_k", "T", "P", "K_SM", "block_n", "R_Bps", "tiss0_s",
                     "tiss0_V_bytes", "tensor_flops_per_s", "T_L1_s", "T_L2_s", "n1_per_n2", "V_t_bytes", "V_bytes",
                     "drain_time_s", "G_wave_s", "G_star_s", "wave_injection_rate_Bps", "q_peak_bytes", "dT_wave_s",
                     "wave_span_s", "wave_stall_per_l2_tile_s", "G_int_s", "dT_int_s",
                     "interleaved_stall_per_l2_tile_s", "injection_rate_Bps", "D_knee", "emulated_rank",
                     "received_pairs", "remote_pairs", "num_waves", "remote_bytes", "compute_s", "drain_s",
                     "t_interleaved_fluid_s", "t_wave_fluid_min_s", "t_wave_fluid_max_s", "fluid_speedup_min",
                     "fluid_speedup_max", "recommended_D"});
  for (const char* key : {"tiss0_extrapolated", "wave_rate_bound_ok", "eq14_rate_bound_ok", "target_matches"})
    EXPECT_TRUE(j.at(key).is_boolean()) << key;
  for (const char* key : {"shape", "precision", "routing", "target", "calibration_target", "throughput_from",
                          "capacity_bound", "interleaving_sufficient", "recommended_schedule", "reason"})
    EXPECT_TRUE(j.at(key).is_string()) << key;
  // The calibration's Q rows are not identified: no Q number anywhere, the bound is "not decided".
  EXPECT_FALSE(j.contains("Q_bytes"));
  EXPECT_FALSE(j.contains("t_wave_fluid_s"));
  EXPECT_EQ(j["capacity_bound"], "not decided");
  EXPECT_EQ(j["calibration_target"], "host");
  // T_L2 = 2 b_m b_n I / (F / 132); T_iss^0 looked up at K_SM V_t = 66 x 32 KiB; D = max(1, ceil(2.0625)).
  EXPECT_NEAR(j["T_L2_s"].get<double>(), 2.0 * 128 * 128 * 2048 / (600e12 / 132), 1e-15);
  EXPECT_EQ(j["tiss0_V_bytes"].get<double>(), 66 * 32768.0);
  EXPECT_EQ(j["V_bytes"].get<double>(), 66 * 32768.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(j["D_knee"].get<double>(), 2.0625);
  EXPECT_EQ(j["recommended_D"], 3);
  EXPECT_EQ(j["recommended_schedule"], "interleaved");
  EXPECT_NE(j["reason"].get<std::string>().find("not decided"), std::string::npos) << j["reason"];
  // The table form shows the same report with units.
  const ToolRun table =
      run("moe --shape dsv4_flash --block-n 128 --model " + kMoeCalibration + " --tensor-tflops 600");
  ASSERT_EQ(table.rc, 0) << table.err;
  for (const char* needle : {"T_L2_s", "us", "GB/s", "MiB", "recommended_schedule", "reason"})
    EXPECT_NE(table.out.find(needle), std::string::npos) << needle;
}

TEST(PredictMoe, FromRunUsesTheMatchingPointsMeasuredMainloops) {
  const json j = run_json("moe --shape dsv4_flash --block-n 128 --model " + kMoeCalibration + " --from-run " + kMoeRun);
  const json file = json::parse(slurp(kMoeRun));
  const json& point = file["points"][0];  // host, bf16, K_SM 66, b_n 128, skewed T 6976
  const json& tiles = point["extra"]["variants"]["expert_wave"]["tiles"];
  EXPECT_NE(j["run_point"].get<std::string>().find("points[0]"), std::string::npos) << j["run_point"];
  EXPECT_EQ(j["run_differences"], "none");
  EXPECT_DOUBLE_EQ(j["T_L1_s"].get<double>(), tiles["l1_mainloop_median_s"].get<double>());
  EXPECT_NEAR(j["T_L2_s"].get<double>(), tiles["l2_mainloop_median_s"].get<double>(), 1e-15);
  EXPECT_DOUBLE_EQ(j["run_speedup"].get<double>(), point["variants"]["expert_wave"]["median"].get<double>() /
                                                       point["variants"]["interleaved"]["median"].get<double>());
  EXPECT_EQ(j["run_routing_matches"], true);  // the advisor's emulated rank is the run's
  EXPECT_EQ(j["received_pairs"], point["extra"]["received_pairs"]);
  EXPECT_FALSE(j.contains("tensor_flops_per_s"));
  // fp8 at K_SM 132 picks that point.
  const json fp8 = run_json("moe --shape dsv4_flash --model " + kMoeCalibration + " --from-run " + kMoeRun +
                            " --precision fp8 --ksm 132");
  EXPECT_NE(fp8["run_point"].get<std::string>().find("points[3]"), std::string::npos) << fp8["run_point"];
}

TEST(PredictMoe, BadInputExitsTwoNamingTheFlag) {
  const std::string platform = " --R 52GB/s --tiss0 2us";
  expect_bad_input("moe --shape nope --tensor-tflops 600" + platform, {"--shape", "nope", "dsv4_flash", "dit_moe"});
  expect_bad_input("moe --shape dsv4_flash" + platform, {"--tensor-tflops", "--from-run"});
  expect_bad_input("moe --shape dsv4_flash --tensor-tflops 600 --from-run " + kMoeRun + platform,
                   {"--from-run", "not both"});
  expect_bad_input("moe --tensor-tflops 600 --hidden 4096" + platform, {"--intermediate"});
  expect_bad_input("moe --shape dsv4_flash --hidden 4096 --tensor-tflops 600" + platform, {"--shape"});
  expect_bad_input("moe --shape dsv4_flash --tensor-tflops 600 --block-n 64" + platform, {"--block-n", "128 or 256"});
  expect_bad_input("moe --shape dsv4_flash --tensor-tflops 600 --precision fp4" + platform, {"--precision", "fp8"});
  // fp8 runs at b_n 128 only, as xstage-bench megamoe refuses it (the hostile review of 2026-12-07 night).
  expect_bad_input("moe --shape dsv4_flash --tensor-tflops 600 --precision fp8 --block-n 256" + platform,
                   {"fp8", "b_n = 128"});
  // The default b_n (256 for bf16 dsv4_flash) against a file measured at 128: the message says how to match it.
  expect_bad_input("moe --shape dsv4_flash --model " + kMoeCalibration + " --from-run " + kMoeRun,
                   {"b_n 256", "pass --block-n 128"});
  expect_bad_input("moe --shape dsv4_flash --tensor-tflops 600 --routing balanced --alpha 0.5" + platform,
                   {"--alpha"});
  expect_bad_input("moe --shape dsv4_flash --tensor-tflops 600", {"--R", "--model"});
  // No point of the run matches (b_n 256 is not in the bn128 file): the message lists what it holds.
  expect_bad_input("moe --shape dsv4_flash --block-n 256 --model " + kMoeCalibration + " --from-run " + kMoeRun,
                   {"--from-run", "points[0]", "K_SM=66"});
}

// A calibration whose R is tiny made every drain time overflow: a NaN message naming no input, or 'inf x' speedups.
// Refused, naming the input (--model and its model.R_Bps, or --R) and the accepted range.
TEST(PredictMoe, ADrainRateOutsideItsRangeIsRefusedNamingTheInput) {
  json cal = json::parse(slurp(kMoeCalibration));
  cal["model"]["R_Bps"] = 1.0;
  cal["model"]["R_ci95"] = {0.9, 1.1};
  const std::string tiny = ::testing::TempDir() + "xs_predict_tiny_r.json";
  std::ofstream(tiny) << cal.dump();
  expect_bad_input("moe --shape dsv4_flash --tensor-tflops 600 --model " + tiny,
                   {"--model: R = 1 B/s (model.R_Bps of ", "xs_predict_tiny_r.json)",
                    "outside the accepted range 1MB/s to 1000TB/s"});
  expect_bad_input("moe --shape dsv4_flash --tensor-tflops 600 --R 1B/s --tiss0 2us",
                   {"--R: R = 1 B/s is outside the accepted range 1MB/s to 1000TB/s"});
  for (const char* f : {"1e300", "1e-300"})
    expect_bad_input(std::string("moe --shape dsv4_flash --tensor-tflops ") + f + " --R 50GB/s --tiss0 2us",
                     {"--tensor-tflops: F = ", "outside the accepted range 0.001 to 1000000 TFLOP/s"});
  std::remove(tiny.c_str());
}

// Every key `moe --json` writes is in the --help key list (replay_*, D_knee_lead and the not-point keys were not).
TEST(PredictMoe, HelpListsEveryJsonKey) {
  const ToolRun help = run("moe --help");
  ASSERT_EQ(help.rc, 0);
  const std::string keys = help.out.substr(help.out.find("Keys ("));
  const std::string from_model = " --model " + kMoeCalibration;
  for (const std::string& args : {std::string(" --R 52GB/s --tiss0 2us --Q 2MiB --tensor-tflops 600"),
                                  from_model + " --tensor-tflops 600", from_model + " --from-run " + kMoeRun}) {
    const json j = run_json("moe --shape dsv4_flash --block-n 128" + args);
    const auto word_char = [&](std::size_t i) {
      return i < keys.size() && (std::isalnum(static_cast<unsigned char>(keys[i])) || keys[i] == '_');
    };
    for (const auto& [key, value] : j.items()) {
      bool listed = false;  // as a whole word
      for (std::size_t at = keys.find(key); at != std::string::npos && !listed; at = keys.find(key, at + 1))
        listed = !(at > 0 && word_char(at - 1)) && !word_char(at + key.size());
      EXPECT_TRUE(listed) << key << " is missing from moe --help's key list";
    }
  }
}

// --hidden (and 2I) must be a multiple of the tile width b_n: the help says so, and so does the refusal.
TEST(PredictMoe, HiddenNotAMultipleOfTheTileWidthIsSaidInHelpAndMessage) {
  const ToolRun help = run("moe --help");
  ASSERT_EQ(help.rc, 0);
  EXPECT_NE(help.out.find("a multiple of b_n (--block-n)"), std::string::npos) << help.out;
  expect_bad_input("moe --hidden 1000 --intermediate 2048 --experts 16 --top-k 2 --R 52GB/s --tiss0 2us "
                   "--tensor-tflops 600",
                   {"--hidden", "1000 must be a positive multiple of b_n = 128"});
}

TEST(PredictMoe, TargetOtherThanTheCalibrationsIsSaid) {
  const json j = run_json("moe --shape dsv4_flash --block-n 128 --model " + kMoeCalibration +
                          " --tensor-tflops 600 --target peer:1");
  EXPECT_EQ(j["target_matches"], false);
  EXPECT_NE(j["reason"].get<std::string>().find("calibration's path"), std::string::npos) << j["reason"];
  // By dimensions, with platform flags (no calibration file: its target is not known).
  const json dims = run_json("moe --hidden 1408 --intermediate 5632 --experts 16 --top-k 2 --R 52GB/s --tiss0 2us "
                             "--Q 2MiB --tensor-tflops 600");
  EXPECT_EQ(dims["shape"], "custom");
  EXPECT_EQ(dims["calibration_target"], "not known");
  EXPECT_FALSE(dims.contains("target_matches"));
  EXPECT_TRUE(dims["t_wave_fluid_s"].is_number());  // Q given: one fluid wave time, not a bracket
  EXPECT_EQ(dims["recommended_schedule"], "either");  // coarse experts (I = 4h): T_L2 covers V/R
}

}  // namespace
