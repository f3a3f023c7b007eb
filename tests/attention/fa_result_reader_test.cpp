// Tests for attention/fa_result_reader: a point written the way xstage-bench fa_a2a writes it reads back into
// a spec and result that the prediction judges exactly as the original; a point without a needed key is
// refused naming it; the committed small-K H200 run re-judges against its calibration.
#include "xs/attention/io/fa_result_reader.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "xs/attention/point/fa_app_point.hpp"
#include "xs/attention/judge/fa_judgement.hpp"
#include "xs/attention/io/fa_report.hpp"
#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"
#include "xs/report/app_point.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/result_file.hpp"

namespace xs::attention {
namespace {

using nlohmann::json;

// One quantity over `rounds` rounds, within +-spread of `median_s`.
Summary timed(std::mt19937& rng, double median_s, double spread, int rounds) {
  std::uniform_real_distribution<double> u(1 - spread, 1 + spread);
  std::vector<double> samples;
  for (int i = 0; i < rounds; ++i) samples.push_back(median_s * u(rng));
  return summarize(samples);
}

Summary paired(const Summary& a, const Summary& b) {  // same-round a - b
  std::vector<double> d;
  for (std::size_t i = 0; i < a.samples.size(); ++i) d.push_back(a.samples[i] - b.samples[i]);
  return summarize(d);
}

// A host point like the committed M = 8K one (every field the prediction reads nonzero); `sender_side`
// false: measured at the remote-visible completion boundary only.
FaA2aPointResult measured(int rounds, bool sender_side) {
  std::mt19937 rng(13);
  FaA2aPointResult r;
  r.num_ctas = 132;
  r.num_tiles = 512;
  r.volume_bytes = 8.0 * 8192 * 128 * 2;
  r.remote_bytes = r.volume_bytes;
  r.destinations = "host: every rank slice in pinned host memory";
  r.t_fa = timed(rng, 447e-6, 0.01, rounds);
  r.t_a2a = timed(rng, 320e-6, 0.01, rounds);
  r.t_a2a_bulk = timed(rng, 305e-6, 0.01, rounds);
  r.t_serial = timed(rng, 789e-6, 0.01, rounds);
  r.t_fused = timed(rng, 589e-6, 0.02, rounds);
  r.t_cc = timed(rng, 636e-6, 0.01, rounds);
  r.e_res_paired = paired(r.t_fused, r.t_fa);
  r.e_cc_paired = paired(r.t_cc, r.t_fa);
  if (sender_side) {
    r.sender_fa = timed(rng, 458e-6, 0.02, rounds);
    r.sender_fused = timed(rng, 597e-6, 0.02, rounds);
    r.sender_serial = timed(rng, 780e-6, 0.02, rounds);
    r.sender_cc = timed(rng, 642e-6, 0.02, rounds);
    r.e_res_sender_paired = paired(r.sender_fused, r.sender_fa);
    r.e_cc_sender_paired = paired(r.sender_cc, r.sender_fa);
    // The clock-normalized rounds and the rounds' sigmas in cycles (what the prediction's sigmas come from).
    r.e_res_sender_cycles_paired = paired(r.sender_fused, r.sender_fa);
    r.sender_fa_cycles = timed(rng, 457e-6, 0.01, rounds);
    r.clock_fa_hz = timed(rng, 1.726e9, 0.01, rounds);
    r.clock_fused_hz = timed(rng, 1.731e9, 0.01, rounds);
    r.sigma_rounds_fa_cycles = timed(rng, 2755, 0.02, rounds);
    r.sigma_rounds_fused_cycles = timed(rng, 3590, 0.03, rounds);
    r.critical_qloop_paired = timed(rng, 120e-6, 0.05, rounds);  // the critical path's parts (summaries only)
    r.critical_epilogue_paired = timed(rng, 6e-6, 0.2, rounds);
    r.critical_other_paired = timed(rng, 2e-6, 0.5, rounds);
  }
  r.fa_tflops = 614.5;
  r.sm_clock_hz = 1.72e9;
  r.sm_clock_fa_hz = 1.85e9;
  r.sigma_s_per_kv_tile = 2.058e-6;
  r.sigma_fa_s_per_kv_tile = 1.508e-6;
  r.qloop_fused = timed(rng, 131.7e-6, 0.15, 9);
  r.store_span_fused = timed(rng, 0.66e-6, 0.2, 9);
  r.store_span_cc = timed(rng, 0.50e-6, 0.2, 9);
  r.fence_span_cc = timed(rng, 32e-6, 0.5, 9);
  r.fa_only_layout = "ulysses";
  r.store_phase_spread_median_s = 85.5e-6;
  r.peak_concurrent_storers = 27;
  r.mean_concurrent_storers = 4.15;
  r.verified = true;
  r.seed = 42;
  return r;
}

FaA2aPointSpec host_spec() {
  FaA2aPointSpec s;
  s.seq_len = 8192;
  s.target = "host";
  s.knobs.schedule = "pingpong";
  s.knobs.tile_scheduler = "static";  // fa_canonical_spec leaves it out: the reader's default
  return s;
}

// R and T_iss^0 of the host path, Q(132) not identified: the bracketed capacity bound is exercised too.
model::FaCalibration host_platform() {
  return model::fa_calibration_from_model(json::parse(R"({"R_Bps": 52.6e9,
      "tiss0": [{"K": 16, "V_bytes": 524288, "s": 1.5e-6}, {"K": 132, "V_bytes": 4325376, "s": 28.8e-6}],
      "Q": [{"K": 16, "bytes": 1.4e6, "bound": "fit"}, {"K": 132, "bytes": null, "bound": "not_identified"}]})"), "host test model");
}

// The points[] entry xstage-bench fa_a2a writes (fa_bench.cpp): fa_app_point over fa_point_json, to_json.
json written_point(const FaA2aPointSpec& spec, const FaA2aPointResult& r, const model::FaCalibration& platform) {
  return report::to_json(fa_app_point(spec, r, fa_point_json(spec, r, &platform, "host")));
}

json judged(const FaA2aPointSpec& spec, const FaA2aPointResult& r, const model::FaCalibration& platform) {
  json j = json::object();
  judge::add_judgement_json(judge::judge_point(spec, r, platform), j);
  return j;
}

TEST(FaResultReader, ReadBackPointIsJudgedExactlyAsTheMeasuredOne) {
  const auto platform = host_platform();
  const FaA2aPointSpec spec = host_spec();
  // 10 rounds at each boundary; 2 rounds (samples kept but too few: no band, so the samples must come back).
  for (const auto& [rounds, sender_side, band_measured] :
       {std::tuple{10, true, true}, std::tuple{10, false, true}, std::tuple{2, true, false}}) {
    SCOPED_TRACE(testing::Message() << rounds << " rounds, sender side " << sender_side);
    const FaA2aPointResult r = measured(rounds, sender_side);
    const json point = written_point(spec, r, platform);
    const FaA2aPointResult back = fa_point_result_from_json(point);
    const json original = judged(spec, r, platform);
    ASSERT_TRUE(original.contains("prediction"));
    EXPECT_EQ(original["judgement"]["measured"]["measured"], band_measured);
    EXPECT_EQ(original["judgement"]["measured"]["boundary"], sender_side ? "sender_side" : "remote_visible_completion");
    EXPECT_EQ(original["prediction"]["inputs"]["compute_only"]["sigma_source"],
              sender_side ? "fa_only_rounds" : "fa_only_launch");
    const json again = judged(fa_point_spec_from_json(point), back, platform);
    EXPECT_EQ(again["prediction"], original["prediction"]);
    EXPECT_EQ(again["judgement"], original["judgement"]);
    EXPECT_EQ(again["agreement"], original["agreement"]);
    EXPECT_EQ(back.e_res_sender_paired.samples, r.e_res_sender_paired.samples);
    EXPECT_EQ(back.t_serial.samples, r.t_serial.samples);
    EXPECT_EQ(back.critical_qloop_paired.median, r.critical_qloop_paired.median);  // summaries only
    if (sender_side) EXPECT_EQ(back.e_res_sender_cycles_paired.p10, r.e_res_sender_cycles_paired.p10);
    EXPECT_EQ(back.critical_epilogue_paired.p90, r.critical_epilogue_paired.p90);
    EXPECT_EQ(back.critical_other_paired.p10, r.critical_other_paired.p10);
  }
}

TEST(FaResultReader, SpecRoundTripsWithTheOmittedDefaults) {
  const FaA2aPointSpec spec = host_spec();
  const FaA2aPointSpec back = fa_point_spec_from_json(written_point(spec, measured(3, true), host_platform()));
  EXPECT_EQ(back.seq_len, spec.seq_len);
  EXPECT_EQ(back.num_heads, spec.num_heads);
  EXPECT_EQ(back.head_dim, spec.head_dim);
  EXPECT_EQ(back.num_ranks, spec.num_ranks);
  EXPECT_EQ(back.target, "host");
  EXPECT_EQ(back.knobs.schedule, "pingpong");
  EXPECT_EQ(back.knobs.tile_scheduler, "static");
  EXPECT_EQ(back.knobs.store_cache, "default");
  FaA2aPointSpec streaming = spec;
  streaming.knobs.store_cache = "streaming";
  EXPECT_EQ(fa_point_spec_from_json(written_point(streaming, measured(3, true), host_platform())).knobs.store_cache,
            "streaming");
  EXPECT_EQ(back.knobs.kv_cluster, 1);
  FaA2aPointSpec clustered = spec;
  clustered.knobs.schedule = "baseline";
  clustered.knobs.kv_cluster = 2;
  EXPECT_EQ(fa_point_spec_from_json(written_point(clustered, measured(3, true), host_platform())).knobs.kv_cluster, 2);
  // The split tail: written when on and read back; a point without the key (every earlier point) reads as
  // whole tiles.
  FaA2aPointSpec split = clustered;
  split.knobs.tail_splits = 2;
  json with_split = written_point(split, measured(3, true), host_platform());
  EXPECT_EQ(fa_point_spec_from_json(with_split).knobs.tail_splits, 2);
  EXPECT_FALSE(written_point(clustered, measured(3, true), host_platform())["axes"].contains("fa_tail_splits"));
  with_split["axes"].erase("fa_tail_splits");
  EXPECT_EQ(fa_point_spec_from_json(with_split).knobs.tail_splits, 1);
  EXPECT_EQ(back.repetitions, spec.repetitions);
  EXPECT_EQ(back.launches_per_graph, spec.launches_per_graph);
}

// The input_error a read of `point` throws: its field (the JSON path) and message.
Error refusal(const json& point, bool spec) {
  try {
    if (spec)
      fa_point_spec_from_json(point);
    else
      fa_point_result_from_json(point);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "not refused: " << point.dump().substr(0, 200);
  return input_error("", "");
}

TEST(FaResultReader, APointWithoutANeededKeyIsRefusedNamingIt) {
  const json point = written_point(host_spec(), measured(5, true), host_platform());
  json no_sigma = point;
  no_sigma["extra"]["measured"].erase("sigma_fa_s_per_kv_tile");
  Error e = refusal(no_sigma, false);
  EXPECT_EQ(e.field(), "extra.measured.sigma_fa_s_per_kv_tile");
  EXPECT_EQ(std::string(e.what()).rfind("extra.measured.sigma_fa_s_per_kv_tile: missing", 0), 0u) << e.what();
  EXPECT_EQ(e.code(), ExitCode::kBadInput);
  json no_samples = point;
  no_samples["paired"]["fused_minus_fa_sender_side"].erase("samples");
  EXPECT_EQ(refusal(no_samples, false).field(), "paired.fused_minus_fa_sender_side.samples");
  json text_median = point;
  text_median["extra"]["measured"]["sender_side"]["E_res_paired_s"]["median"] = "136us";
  e = refusal(text_median, false);
  EXPECT_EQ(e.field(), "extra.measured.sender_side.E_res_paired_s.median");
  EXPECT_NE(std::string(e.what()).find("expected a number"), std::string::npos) << e.what();
  json no_m = point;
  no_m["axes"].erase("M");
  EXPECT_EQ(refusal(no_m, true).field(), "axes.M");
  json other_suite = point;
  other_suite["suite"] = "megamoe";
  EXPECT_EQ(refusal(other_suite, true).field(), "suite");
  EXPECT_EQ(refusal(other_suite, false).field(), "suite");
}

TEST(FaResultReader, TheCommittedSmallKRunReJudgesAgainstItsCalibration) {
  const std::string dir = std::string(XS_TEST_DATA_DIR) + "/../../results/h200/archive/2026-12-02-1bb3bca/fa_a2a-small-k/";
  const json file = report::read_json_file(dir + "fa-a2a-host-small-k.json");
  const std::string cal = dir + "calibration-host-small-k.json";
  const auto platform = model::load_fa_calibration(report::read_text_file(cal), cal);
  int num_judged = 0;
  for (const json& point : file.at("points")) {
    if (point.value("suite", "") != kFaSuiteId) continue;
    SCOPED_TRACE(point["axes"].dump());
    ASSERT_EQ(point["status"], "ok");
    const json again = judged(fa_point_spec_from_json(point), fa_point_result_from_json(point), platform);
    ASSERT_TRUE(again.contains("prediction"));
    EXPECT_TRUE(again["agreement"].is_string());
    // The rule changed since the run (issue 27): every judged point carries a frozen prediction with its inputs,
    // and an outcome of the three allowed, or none where not measured.
    EXPECT_TRUE(again["prediction"].contains("inputs"));
    const json result = again["judgement"]["model"]["result"];
    EXPECT_TRUE(result == "agrees" || result == "disagrees" || result == "not decided") << result;
    ++num_judged;
  }
  EXPECT_EQ(num_judged, 5);
}

}  // namespace
}  // namespace xs::attention
