// xstage sim tests: one definition per quantity (issue 9). The simulator records T_iss as the producer mean
// and issue_time_max_s as the slowest producer for both suites, every result file's meta carries the
// definitions, the scattered address mode is accepted, and the default calibration holds the stream-length
// block (zero-gap points at one (K, B) whose streams span 0.5 .. 8 x the L2).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "xs/bench/sweep.hpp"
#include "xs/common/error.hpp"
#include "xs/report/result_file.hpp"
#include "xs/backends/sim/simulator.hpp"
#include "sim_test_points.hpp"

namespace xs::sim {
namespace {

using namespace test_points;
constexpr std::uint64_t kKiB = 1024;

TEST(Definitions, IsolatedIssueTimeIsTheProducerMeanAndTheMaxTheSlowestProducer) {
  // Below the knee every producer issues at its own jittered rate: the mean stays at T_iss^0, the
  // slowest of 132 lognormal producers is clearly slower.
  SimParams params;
  params.noise = 0.05;
  const PointRecord r = simulate_point(params, isolated(132, 16 * kKiB));
  ASSERT_TRUE(r.issue_time_max_s.has_value());
  EXPECT_EQ(r.issue_time_max_s->samples.size(), r.issue_time_s.samples.size());
  EXPECT_NEAR(rel_err(r.issue_time_s.median, tiss0_s(params, 16 * kKiB)), 0.0, 0.03);
  EXPECT_GT(r.issue_time_max_s->median, 1.05 * r.issue_time_s.median);
  for (std::size_t i = 0; i < r.issue_time_s.samples.size(); ++i)
    EXPECT_GE(r.issue_time_max_s->samples[i], r.issue_time_s.samples[i]);
}

TEST(Definitions, WithoutNoiseMeanAndMaxAgreeAboveTheKnee) {
  // Identical producers share the drain evenly and finish together: mean = max = (V - Q)/R (eq. 7).
  const SimParams params;
  const PointSpec spec = isolated(132, 512 * kKiB);
  const PointRecord r = simulate_point(params, spec);
  ASSERT_TRUE(r.issue_time_max_s.has_value());
  EXPECT_NEAR(rel_err(r.issue_time_s.median, r.issue_time_max_s->median), 0.0, 1e-9);
  EXPECT_NEAR(rel_err(r.issue_time_max_s->median, eq7_isolated_s(params, spec, capacity_for(params, 132))), 0.0, 0.02);
}

TEST(Definitions, EveryResultFileMetaCarriesTheDefinitionsOnce) {
  const auto backend = make_sim_backend(SimParams{});
  EXPECT_FALSE(backend->describe().contains("definitions")) << "one place in code: make_meta";
  const nlohmann::json meta = report::make_meta({"xstage-calibrate"}, backend->name(), backend->describe());
  ASSERT_TRUE(meta.contains("definitions"));
  const auto& d = meta.at("definitions");
  for (const char* key : {"issue_span", "steady_state_window", "issue_time_s", "issue_time_max_s", "period_s",
                          "completion_s", "sm_clock_hz", "clock_flagged", "stream_bytes", "address_mode", "gap"}) {
    ASSERT_TRUE(d.contains(key)) << key;
    EXPECT_TRUE(d.at(key).is_string()) << key;
    EXPECT_GT(d.at(key).get<std::string>().size(), 40u) << key;
  }
  // A backend cannot override them (the tool's keys win a clash).
  nlohmann::json spoofed = backend->describe();
  spoofed["definitions"] = "something else";
  EXPECT_EQ(report::make_meta({}, "sim", spoofed).at("definitions"), d);
}

TEST(Definitions, SimulatorAcceptsScatteredRowsWithTheSameBehaviour) {
  const SimParams params;  // noise 0: the address mode cannot change anything
  PointSpec fresh = periodic(66, 16 * kKiB, 2e-6);
  PointSpec scattered = fresh;
  scattered.address_mode = AddressMode::kScattered;
  scattered.scatter_seed = 77;
  EXPECT_EQ(simulate_point(params, fresh).period_s.samples, simulate_point(params, scattered).period_s.samples);
  scattered.bytes_per_producer = 16 * kKiB + 16;  // not whole 256-B rows
  try {
    simulate_point(params, scattered);
    ADD_FAILURE() << "B not a multiple of 256 accepted in scattered mode";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "B");
    EXPECT_NE(std::string(e.what()).find("multiple of 256"), std::string::npos) << e.what();
  }
}

TEST(Definitions, ScatterSeedIsPartOfAScatteredSpecOnly) {
  PointSpec spec = periodic(8, 4 * kKiB, 0);
  EXPECT_FALSE(report::to_json(spec).contains("scatter_seed")) << "fresh keys stay as they were";
  spec.address_mode = AddressMode::kScattered;
  spec.scatter_seed = 4242;
  const nlohmann::json j = report::to_json(spec);
  EXPECT_EQ(j.at("scatter_seed"), 4242);
  EXPECT_EQ(report::spec_from_json(j, "spec").scatter_seed, 4242u);
  nlohmann::json fresh = j;
  fresh["address_mode"] = "fresh";
  EXPECT_THROW(report::spec_from_json(fresh, "spec"), Error);
}

// The stream-length block: same K, B and G = 0, streams (num_bursts x V) near 0.5, 1, 2, 4, 8 x 60 MiB.
TEST(Definitions, DefaultCalibrationSweepsStreamLengthAtOneKB) {
  constexpr double kL2Bytes = 60.0 * 1048576;
  std::map<int, double> stream_multiples;  // num_bursts -> stream / L2
  std::set<std::string> keys;
  for (const auto& p : bench::expand(bench::default_calibration("host", 55e9))) {
    EXPECT_TRUE(keys.insert(point_key(p.spec)).second) << "two points with one spec";
    if (p.block.rfind("stream_", 0) != 0) continue;
    EXPECT_EQ(p.spec.suite, Suite::kPeriodic);
    EXPECT_EQ(p.spec.num_producers, 132);
    EXPECT_EQ(p.spec.bytes_per_producer, 16 * kKiB);
    EXPECT_EQ(p.spec.gap_s, 0.0);
    stream_multiples[p.spec.num_bursts] = static_cast<double>(p.spec.num_bursts * p.spec.volume_bytes()) / kL2Bytes;
  }
  ASSERT_EQ(stream_multiples.size(), 5u);
  const double expected[] = {0.5, 1, 2, 4, 8};
  int i = 0;
  for (const auto& [bursts, multiple] : stream_multiples) EXPECT_NEAR(multiple / expected[i++], 1.0, 0.05) << bursts;
}

// What xstage-calibrate --address-mode scattered --threads 64 does to the built-in sweep (the MegaMoE shape):
// a default for every point, erased from each block's own overrides.
TEST(Definitions, DefaultCalibrationTakesTheScatteredTwoWarpShape) {
  auto config = bench::default_calibration("host", 55e9);
  config.defaults["address_mode"] = "scattered";
  config.defaults["threads_per_producer"] = 64;
  auto epilogue = [](const bench::SweepBlock& b) { return b.overrides.value("injection", std::string()) == "epilogue"; };
  for (auto& block : config.blocks) {
    ASSERT_TRUE(block.overrides.is_object()) << block.name;
    block.overrides.erase("address_mode");
    // As the CLI's --threads does (the loaded blocks set 128; the epilogue blocks keep their 256 math threads).
    if (!epilogue(block)) block.overrides.erase("threads_per_producer");
  }
  const auto points = bench::expand(config);
  ASSERT_GT(points.size(), 100u);
  for (const auto& p : points) {
    EXPECT_EQ(p.spec.address_mode, AddressMode::kScattered);
    const bool math_threads = p.spec.suite == Suite::kLoaded && p.spec.loaded.injection == Injection::kEpilogue;
    EXPECT_EQ(p.spec.threads_per_producer, math_threads ? 256 : 64) << p.block;
    EXPECT_EQ(p.spec.bytes_per_producer % kScatterRowBytes, 0u) << p.block;
  }
}

// configs/calibrate/host-default.json is what --dump-config prints at the 55 GB/s guess it names.
TEST(Definitions, CommittedHostDefaultConfigIsTheBuiltInSweep) {
  const auto file = bench::load_sweep_config(std::string(XS_TEST_DATA_DIR) + "/../../configs/calibrate/host-default.json");
  const auto built_in = bench::default_calibration("host", 55e9);
  EXPECT_EQ(bench::to_json(file), bench::to_json(built_in));
}

}  // namespace
}  // namespace xs::sim
