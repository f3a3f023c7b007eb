// xstage sim tests: the record and Backend contract of the simulator: completion, seeded determinism,
// noise, input errors naming the field, and the "sim" backend's description and targets.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "xs/common/error.hpp"
#include "xs/backends/sim/simulator.hpp"
#include "sim_test_points.hpp"

namespace xs::sim {
namespace {

using namespace test_points;
constexpr std::uint64_t kKiB = 1024;

TEST(SimContract, PlantedHelpersMatchTheHeaderDefinition) {
  SimParams params;
  params.issue_overhead_s = 0.16e-6;
  EXPECT_DOUBLE_EQ(issue_rate_per_producer_bps(params), 32768.0 / 0.6e-6);
  EXPECT_DOUBLE_EQ(backpressure_free_issue_time_s(params, kRefBytesPerProducer), params.tiss0_ref_s);
  EXPECT_DOUBLE_EQ(backpressure_free_issue_time_s(params, 64 * kKiB), tiss0_s(params, 64 * kKiB));
  params.capacity_per_producer_bytes = 1000;
  EXPECT_DOUBLE_EQ(capacity_for(params, 7), 7000);
  EXPECT_DOUBLE_EQ(capacity_for(params, 100000), params.capacity_bytes);
}

TEST(SimContract, CompletionIsRecordedOnlyWhenAskedAndNeverPrecedesIssue) {
  SimParams params;
  params.completion_latency_s = 2e-6;
  params.noise = 0.03;
  for (PointSpec spec : {periodic(132, 32 * kKiB, 0), periodic(33, 16 * kKiB, 10e-6), isolated(132, 256 * kKiB)}) {
    EXPECT_FALSE(simulate_point(params, spec).completion_s.has_value());
    spec.completion = true;
    const PointRecord r = simulate_point(params, spec);
    ASSERT_TRUE(r.completion_s.has_value());
    ASSERT_EQ(r.completion_s->samples.size(), r.issue_time_s.samples.size());
    for (std::size_t i = 0; i < r.issue_time_s.samples.size(); ++i)
      EXPECT_GE(r.completion_s->samples[i], r.issue_time_s.samples[i] + params.completion_latency_s);
  }
}

TEST(SimContract, IsolatedCompletionIsDrainHorizonPlusLatency) {
  // K r > R: the drain runs at R from the first store, so the last byte is visible at V/R + T_lat.
  SimParams params;
  params.completion_latency_s = 2e-6;
  PointSpec spec = isolated(132, 16 * kKiB);
  spec.completion = true;
  const PointRecord r = simulate_point(params, spec);
  EXPECT_NEAR(rel_err(r.completion_s->median, drain_horizon_s(params, spec) + 2e-6), 0.0, 0.01);
  EXPECT_LT(r.issue_time_s.median, 0.2 * r.completion_s->median);  // issue ends long before visibility
}

TEST(SimContract, SameSeedGivesIdenticalRecordsOtherSeedDiffers) {
  SimParams params;
  params.noise = 0.05;
  PointSpec spec = periodic(33, 32 * kKiB, 1e-6);
  spec.completion = true;
  const PointRecord a = simulate_point(params, spec);
  const PointRecord b = simulate_point(params, spec);
  EXPECT_EQ(a.issue_time_s.samples, b.issue_time_s.samples);
  EXPECT_EQ(a.period_s.samples, b.period_s.samples);
  EXPECT_EQ(a.completion_s->samples, b.completion_s->samples);
  params.seed = 2;
  const PointRecord c = simulate_point(params, spec);
  EXPECT_NE(a.issue_time_s.samples, c.issue_time_s.samples);
  EXPECT_NE(a.period_s.samples, c.period_s.samples);
  // Repetitions differ from each other: noise is drawn per repetition, not once per point.
  EXPECT_LT(a.issue_time_s.min, a.issue_time_s.max);
}

TEST(SimContract, NoiseJittersTheDrainRatePerRepetition) {
  // Drain-limited, so each repetition's period is V / R_rep with R_rep = R exp(0.05 Z).
  SimParams params;
  params.noise = 0.05;
  PointSpec spec = periodic(132, 32 * kKiB, 0);
  spec.repetitions = 9;
  const PointRecord r = simulate_point(params, spec);
  EXPECT_GT((r.period_s.max - r.period_s.min) / r.period_s.median, 0.05);
  EXPECT_NEAR(rel_err(r.period_s.median, drain_horizon_s(params, spec)), 0.0, 0.05);
}

TEST(SimContract, IssueTimeIsTheProducerMeanAndTheSpanTheSlowest) {
  // T_iss = mean over producer-bursts: per-producer jitter leaves it near T_iss^0 at any K, while the
  // slowest producer's span (issue_time_max_s) grows with K (the max of K lognormals).
  SimParams params;
  params.noise = 0.05;
  PointSpec spec = periodic(1, 32 * kKiB, 40e-6);
  EXPECT_NEAR(rel_err(simulate_point(params, spec).issue_time_s.median, params.tiss0_ref_s), 0.0, 0.03);
  spec.num_producers = 132;
  const PointRecord r = simulate_point(params, spec);
  EXPECT_NEAR(rel_err(r.issue_time_s.median, params.tiss0_ref_s), 0.0, 0.03);
  ASSERT_TRUE(r.issue_time_max_s.has_value());
  const double ratio = r.issue_time_max_s->median / params.tiss0_ref_s;
  EXPECT_GT(ratio, 1.05);
  EXPECT_LT(ratio, 1.3);
}

TEST(SimContract, WithoutNoiseTheSeedDoesNotMatter) {
  SimParams params;
  const PointSpec spec = periodic(66, 32 * kKiB, 2e-6);
  const PointRecord a = simulate_point(params, spec);
  params.seed = 99;
  EXPECT_EQ(a.issue_time_s.samples, simulate_point(params, spec).issue_time_s.samples);
  EXPECT_EQ(a.issue_time_s.min, a.issue_time_s.max);
}

TEST(SimContract, RecordCarriesIdVerificationAndNoClock) {
  const SimParams params;
  PointSpec spec = periodic(8, 4 * kKiB, 0);
  spec.num_bursts = 12;
  spec.warmup_bursts = 2;
  spec.repetitions = 3;
  const PointRecord r = simulate_point(params, spec);
  EXPECT_EQ(r.id, "remote_store.periodic.sim");
  EXPECT_FALSE(r.skipped);
  EXPECT_EQ(r.issue_time_s.samples.size(), 3u);
  EXPECT_EQ(r.period_s.samples.size(), 3u);
  EXPECT_TRUE(r.verification.checked);
  EXPECT_EQ(r.verification.bytes_checked, 8u * 4 * kKiB * 12);
  EXPECT_EQ(r.verification.wrong, 0u);
  EXPECT_EQ(r.sm_clock_hz, 0.0);
  EXPECT_FALSE(r.prediction.has_value());
}

void expect_input_error(const std::function<void()>& call, const std::string& field) {
  try {
    call();
    ADD_FAILURE() << "no error for field " << field;
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
  }
}

TEST(SimContract, BadSpecThrowsNamingTheField) {
  const SimParams params;
  const std::vector<std::pair<std::function<void(PointSpec&)>, std::string>> cases = {
      {[](PointSpec& s) { s.num_producers = 0; }, "K"},
      {[](PointSpec& s) { s.bytes_per_producer = 0; }, "B"},
      {[](PointSpec& s) { s.bytes_per_producer = 1000; }, "B"},  // not a multiple of 16
      {[](PointSpec& s) { s.store_width_bytes = 12; }, "store_width_bytes"},
      {[](PointSpec& s) { s.num_bursts = 8; }, "num_bursts"},    // == warmup_bursts
      {[](PointSpec& s) { s.warmup_bursts = -1; }, "warmup_bursts"},
      {[](PointSpec& s) { s.repetitions = 0; }, "repetitions"},
      {[](PointSpec& s) { s.gap_s = -1e-6; }, "G"},
  };
  for (const auto& [mutate, field] : cases) {
    PointSpec spec = periodic(4, 4 * kKiB, 0);
    mutate(spec);
    expect_input_error([&] { simulate_point(params, spec); }, field);
  }
  PointSpec narrow = periodic(4, 1000, 0);  // 1000 is a multiple of 4 and 8, so valid at those widths
  narrow.store_width_bytes = 8;
  EXPECT_NO_THROW(simulate_point(params, narrow));
}

TEST(SimContract, BadParamsThrowNamingTheField) {
  SimParams bad_rate;
  bad_rate.drain_rate_bps = 0;
  expect_input_error([&] { make_sim_backend(bad_rate); }, "sim.drain_rate_bps");
  SimParams bad_overhead;
  bad_overhead.issue_overhead_s = 1e-6;  // exceeds T_iss^0 at 32 KiB
  expect_input_error([&] { simulate_point(bad_overhead, periodic(1, 4096, 0)); }, "sim.tiss0_ref_s");
  SimParams bad_request;
  bad_request.request_bytes = 0;
  expect_input_error([&] { simulate_point(bad_request, periodic(1, 4096, 0)); }, "sim.request_bytes");
}

TEST(SimBackendTest, DescribesPlantedPathAndAcceptsItsTargets) {
  SimParams params;
  params.noise = 0.01;
  params.seed = 7;
  const auto backend = make_sim_backend(params);
  EXPECT_EQ(backend->name(), "sim");
  const nlohmann::json d = backend->describe();
  EXPECT_EQ(d.at("backend"), "sim");
  EXPECT_TRUE(d.at("devices").is_array() && d.at("devices").empty());
  const auto& planted = d.at("planted");
  EXPECT_EQ(planted.at("R_Bps").get<double>(), params.drain_rate_bps);
  EXPECT_EQ(planted.at("Q_bytes").get<double>(), params.capacity_bytes);
  EXPECT_EQ(planted.at("tiss0_ref_s").get<double>(), params.tiss0_ref_s);
  EXPECT_EQ(planted.at("noise").get<double>(), 0.01);
  EXPECT_EQ(planted.at("seed").get<std::uint64_t>(), 7u);
  for (const char* key : {"issue_overhead_s", "completion_latency_s", "request_bytes"})
    EXPECT_TRUE(planted.contains(key)) << key;

  PointSpec spec = periodic(4, 4 * kKiB, 0);
  for (const char* target : {"sim", "host", "local"}) {
    spec.target = target;
    EXPECT_FALSE(backend->unavailable_reason(spec).has_value()) << target;
  }
  spec.target = "peer:1";
  ASSERT_TRUE(backend->unavailable_reason(spec).has_value());
  EXPECT_EQ(*backend->unavailable_reason(spec), "target peer:1 does not exist in the simulator (use sim, host or local)");
  expect_input_error([&] { backend->run(spec); }, "target");
  EXPECT_FALSE(backend->reference_bandwidth_bps("host").has_value());
}

TEST(SimBackendTest, RunMatchesSimulatePointAndLocalIsUnlimited) {
  const SimParams params;
  const auto backend = make_sim_backend(params);
  PointSpec spec = periodic(132, 512 * kKiB, 0);
  spec.target = "host";
  const PointRecord remote = backend->run(spec);
  EXPECT_EQ(remote.id, "remote_store.periodic.host");
  EXPECT_EQ(remote.issue_time_s.samples, simulate_point(params, spec).issue_time_s.samples);
  spec.target = "local";
  const PointRecord local = backend->run(spec);
  EXPECT_NEAR(rel_err(local.issue_time_s.median, tiss0_s(params, 512 * kKiB)), 0.0, 1e-6);
  EXPECT_GT(remote.issue_time_s.median, 5 * local.issue_time_s.median);
}

}  // namespace
}  // namespace xs::sim
