// tests/cli: the interference term end to end on CPU (issue 28 items 2-3): xstage-calibrate --backend sim
// --only loaded plants a term (--sim-alpha), the calibration file gains extra.interference, and
// xstage-predict interference reads it back. Planted present, planted absent, and a planted term that breaks
// the fitted form; older files; the committed H100 refit; bad input (exit 2, nothing on stdout).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tool_run.hpp"

namespace {

using nlohmann::json;
using xs::test::Scratch;

const std::string kSourceDir = std::string(XS_TEST_DATA_DIR) + "/../..";

json block_of(const Scratch& s, const std::string& file) {
  return json::parse(xs::test::read_file(s.path(file))).at("extra").at("interference");
}

json parameter(const json& block, const std::string& name) {
  for (const auto& p : block.at("parameters"))
    if (p.at("name") == name) return p;
  ADD_FAILURE() << "no parameter " << name;
  return json::object();
}

// The paced (open-loop) loaded blocks: with the epilogue blocks in the file, extra.interference is eq. I2's.
const std::string kPacedBlocks = "loaded_k132,loaded_k66,loaded_k33,loaded_hbm_k132,loaded_rows_k132,"
                                 "loaded_stream_k132,loaded_b2KiB_k132,loaded_b64KiB_k132";

json calibrate_sim(const Scratch& s, const std::string& alpha) {
  // --bursts 20000: the burst cap above what the mainloop uses, so no full-path point is censored (at the
  // default 4096 the simulator's K_SM 33 unpaced CTAs reach the cap, as the H100's did).
  const auto r = s.run("xstage-calibrate", "--backend sim --only " + kPacedBlocks + " --no-progress --bootstrap 300 --bursts 20000 "
                                               "--sim-alpha " + alpha + " --out cal.json");
  EXPECT_EQ(r.rc, 0) << r.err;
  return block_of(s, "cal.json");
}

json predict_json(const Scratch& s, const std::string& args) {
  const auto r = s.run("xstage-predict", "interference --calibration cal.json --json " + args);
  EXPECT_EQ(r.rc, 0) << r.err;
  return json::parse(r.out);
}

// The simulator plants s = 1 + alpha q/Q with the same tile time at every K: on a full path (q = Q) that is a
// wait W = alpha T0 independent of K, so the fit must give alpha_at_kref ~ alpha and gamma ~ 0.
TEST(InterferenceSim, RecoversAPlantedTerm) {
  Scratch s;
  const json block = calibrate_sim(s, "1");
  ASSERT_EQ(block.at("status"), "identified") << block.dump();
  const json alpha = parameter(block, "alpha_at_kref");
  EXPECT_LE(alpha.at("lo").get<double>(), 1.0);
  EXPECT_GE(alpha.at("hi").get<double>(), 1.0);
  EXPECT_NEAR(alpha.at("value").get<double>(), 1.0, 0.1);
  const json gamma = parameter(block, "k_exponent");
  EXPECT_LE(gamma.at("lo").get<double>(), 0.0);
  EXPECT_GE(gamma.at("hi").get<double>(), 0.0);
  const json p = predict_json(s, "--K 132 --rate inf --tile-time 3us");
  EXPECT_NEAR(p.at("slowdown").at("mid").get<double>(), 2.0, 0.2);
  EXPECT_LE(p.at("slowdown").at("lo").get<double>(), 2.0);
  EXPECT_GE(p.at("slowdown").at("hi").get<double>(), 2.0);
  // Below the knee the planted occupancy is small: the free slowdown.
  EXPECT_LT(predict_json(s, "--K 132 --rate 100GB/s").at("slowdown").at("mid").get<double>(), 1.1);
  // Held-out validation is in the block, apart from the in-sample residuals.
  const json& v = block.at("validation");
  EXPECT_GT(v.at("held_out").at("in_scope_by_regime").at("full").at("num_predicted").get<int>(), 0);
  EXPECT_LT(v.at("held_out").at("in_scope_by_regime").at("full").at("median_abs_rel_err").get<double>(), 0.05);
  EXPECT_TRUE(v.at("in_sample").contains("note"));
}

// Planted absent: the wait's interval contains 0 and a full load's bracket contains 1.
TEST(InterferenceSim, PlantedAbsentGivesNoWait) {
  Scratch s;
  const json block = calibrate_sim(s, "0");
  ASSERT_EQ(block.at("status"), "identified") << block.dump();
  const json wait = parameter(block, "wait_s_at_kref");
  EXPECT_LE(wait.at("lo").get<double>(), 0.0);
  EXPECT_GE(wait.at("hi").get<double>(), 0.0);
  EXPECT_FALSE(parameter(block, "k_exponent").at("constrained").get<bool>());
  const json p = predict_json(s, "--K 132 --rate inf");
  EXPECT_LE(p.at("slowdown").at("lo").get<double>(), 1.0);
  EXPECT_GE(p.at("slowdown").at("hi").get<double>(), 1.0);
  EXPECT_LT(p.at("slowdown").at("hi").get<double>(), 1.1);
}

// A planted term that breaks the fitted form: with alpha = 5 the simulator's occupancy term slows the mainloop
// below R too, growing with the offered rate. The fitter says "not identified" and why; predict prints that.
TEST(InterferenceSim, PlantedTermThatBreaksTheFormIsNotIdentified) {
  Scratch s;
  const json block = calibrate_sim(s, "5");
  EXPECT_EQ(block.at("status"), "not_identified");
  EXPECT_TRUE(xs::test::contains(block.at("why").get<std::string>(), "grows with the offered rate")) << block.dump();
  const auto r = s.run("xstage-predict", "interference --calibration cal.json --K 132 --rate inf");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(xs::test::contains(r.out, "interference not identified")) << r.out;
}

TEST(InterferenceCli, OlderFileSaysNotCalibrated) {
  Scratch s;
  const std::string old = std::string(XS_TEST_DATA_DIR) + "/model/calibration_ok.json";
  const auto r = s.run("xstage-predict", "interference --calibration " + old + " --K 132 --rate 60GB/s");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(xs::test::contains(r.out, "interference not calibrated")) << r.out;
  const auto j = s.run("xstage-predict", "interference --calibration " + old + " --K 132 --rate 60GB/s --json");
  EXPECT_EQ(json::parse(j.out).at("status"), "not_calibrated");
}

// The committed H100 loaded calibration refits into a block (a new file, the input untouched). Its full-path
// points reached the burst cap, so the term is "not identified" and says why; the lower bound stays visible.
TEST(InterferenceCli, RefitOfTheH100LoadedFileGivesTheBlock) {
  Scratch s;
  const std::string in = kSourceDir + "/results/h100/interference-3a97dd2/calibration-loaded-host.json";
  const std::string before = xs::test::read_file(in);
  const auto r = s.run("xstage-calibrate", "--refit " + in + " --bootstrap 200 --out refit.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(xs::test::read_file(in), before);
  const json block = block_of(s, "refit.json");
  EXPECT_EQ(block.at("status"), "not_identified") << block.dump();
  EXPECT_TRUE(xs::test::contains(block.at("why").get<std::string>(), "burst cap")) << block.at("why");
  const json wait = parameter(block, "wait_s_at_kref");
  EXPECT_FALSE(wait.at("constrained").get<bool>());
  EXPECT_GT(wait.at("value").get<double>(), 50e-6);  // the lower bound: 97 us at K_ref 93 with 1000 resamples
  const auto p = s.run("xstage-predict", "interference --calibration refit.json --K 132 --rate 100GB/s");
  ASSERT_EQ(p.rc, 0) << p.err;
  EXPECT_TRUE(xs::test::contains(p.out, "interference not identified")) << p.out;
  EXPECT_TRUE(xs::test::contains(p.out, "burst cap")) << p.out;
}

TEST(InterferenceCli, BadInputIsExit2) {
  Scratch s;
  const std::string old = std::string(XS_TEST_DATA_DIR) + "/model/calibration_ok.json";
  const std::string base = "interference --calibration " + old;
  xs::test::expect_refused(s, "xstage-predict", base + " --K 0 --rate 60GB/s", 2, {"--K"});
  // An FA result file is not a calibration: refused, not answered "not calibrated" with exit 0.
  const std::string fa = std::string(XS_TEST_DATA_DIR) + "/../../results/h200/fa_a2a/3238301-bars/results/fa-a2a-host.json";
  xs::test::expect_refused(s, "xstage-predict", "interference --calibration " + fa + " --K 132 --rate 60GB/s", 2,
                           {"application points only"});
  // 2^32 + 132 once wrapped to K 132 and answered for it.
  xs::test::expect_refused(s, "xstage-predict", base + " --K 4294967428 --rate 60GB/s", 2, {"--K", "4294967428", "[1, 65536]"});
  xs::test::expect_refused(s, "xstage-predict", base + " --K 132 --rate 60GB/s --k-blocks 4294967304", 2, {"--k-blocks"});
  xs::test::expect_refused(s, "xstage-predict", base + " --K 132 --rate fast", 2, {"--rate"});
  xs::test::expect_refused(s, "xstage-predict", base + " --K 132 --rate 60GB/s --working-set dram", 2,
                           {"--working-set", "l2 or hbm"});
  xs::test::expect_refused(s, "xstage-predict", base + " --K 132 --rate 60GB/s --full-fraction 2", 2, {"--full-fraction"});
  xs::test::expect_refused(s, "xstage-predict", base + " --K 132 --rate 60GB/s --outstanding 1MiB", 2, {"--Q"});
  xs::test::expect_refused(s, "xstage-predict", "interference --calibration missing.json --K 132 --rate 60GB/s", 2,
                           {"missing.json"});
  xs::test::expect_refused(s, "xstage-predict", "interference --K 132 --rate 60GB/s", 2, {"--calibration"});
  // A tile time of 1e-300 s once gave a slowdown of 1e294, "inside" the calibration; 1e300 s gave 1.0.
  xs::test::expect_refused(s, "xstage-predict", base + " --K 132 --rate 60GB/s --tile-time 1e-300s", 2,
                           {"--tile-time", "[1ns, 10s]"});
  xs::test::expect_refused(s, "xstage-predict", base + " --K 132 --rate 60GB/s --tile-time 1e300s", 2,
                           {"--tile-time", "[1ns, 10s]"});
}

}  // namespace

namespace {

// The epilogue (closed-loop) blocks on the simulator: the file's extra.interference is eq. I2's block, with its
// held-out validation, and xstage-predict interference answers for it (or says why not).
TEST(InterferenceSimEpilogue, CalibrationGivesTheEpilogueTermAndPredictReadsIt) {
  Scratch s;
  const auto r = s.run("xstage-calibrate", "--backend sim --only loaded_epilogue_k132,loaded_epilogue_k66,"
                                               "loaded_epilogue_k33,loaded_epilogue_k132_large,loaded_epilogue_k66_large,"
                                               "loaded_epilogue_k33_large --reps 3 --no-progress --bootstrap 60 --out cal.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const json block = block_of(s, "cal.json");
  EXPECT_EQ(block.at("form"), "epilogue_per_byte") << block.dump();
  EXPECT_TRUE(block.contains("validation"));
  EXPECT_TRUE(block.at("validation").contains("held_out_k"));
  EXPECT_GE(block.at("fit").at("points").size(), 12u);
  const auto p = s.run("xstage-predict", "interference --calibration cal.json --json --K 132 --B 8KiB --tile-time 3us");
  ASSERT_EQ(p.rc, 0) << p.err;
  const json out = json::parse(p.out);
  EXPECT_EQ(out.at("form"), "epilogue_per_byte");
  if (out.at("status") == "identified") {
    EXPECT_GE(out.at("slowdown").at("mid").get<double>(), 1.0);
    // Flags the epilogue form does not use are said, on stderr and as `ignored`, and change nothing.
    const auto q = s.run("xstage-predict", "interference --calibration cal.json --json --K 132 --B 8KiB --tile-time 3us "
                                           "--rate 40GB/s --R 10GB/s --k-blocks 7");
    ASSERT_EQ(q.rc, 0) << q.err;
    const json with = json::parse(q.out);
    EXPECT_EQ(with.at("ignored"), json::array({"--rate", "--R", "--k-blocks"})) << q.out;
    EXPECT_NE(q.err.find("not used by this calibration's term"), std::string::npos) << q.err;
    EXPECT_EQ(with.at("slowdown"), out.at("slowdown"));
    EXPECT_FALSE(out.contains("ignored"));
    // The law's regressor B / T0 has a calibrated range: far outside it the answer says it extrapolates.
    EXPECT_EQ(out.at("outside_calibration"), "") << p.out;
    const auto far = s.run("xstage-predict", "interference --calibration cal.json --json --K 132 --B 8KiB --tile-time 2ns");
    ASSERT_EQ(far.rc, 0) << far.err;
    EXPECT_NE(json::parse(far.out).at("outside_calibration").get<std::string>().find("B / T0"), std::string::npos)
        << far.out;
  } else {
    EXPECT_FALSE(out.at("why").get<std::string>().empty());
  }
}

}  // namespace
