// Tests for attention/fa_app_point: an fa_a2a point in the common application-point form carries every
// round of each variant and the paired residuals, and converts back to exactly the fa_point_json object
// (extra.fa_a2a, the table, scripts/plot_fa_a2a.py), also after a trip through the journal's JSON.
#include "xs/attention/point/fa_app_point.hpp"

#include <gtest/gtest.h>

#include "xs/attention/io/fa_report.hpp"
#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"

namespace xs::attention {
namespace {

Summary rounds(std::vector<double> s) { return summarize(std::move(s)); }

FaA2aPointResult measured() {
  FaA2aPointResult r;
  r.num_ctas = 132;
  r.num_tiles = 512;
  r.t_fa = rounds({85e-6, 86e-6, 84e-6});
  r.t_a2a = rounds({50e-6, 51e-6, 49e-6});
  r.t_a2a_bulk = rounds({40e-6, 41e-6, 39e-6});
  r.t_serial = rounds({140e-6, 141e-6, 139e-6});
  r.t_fused = rounds({99e-6, 98e-6, 100e-6});
  r.t_cc = rounds({110e-6, 111e-6, 109e-6});
  r.t_fa_heads_major = rounds({86e-6, 87e-6, 85e-6});
  r.fa_only_layout = "ulysses";
  r.e_res_paired = rounds({14e-6, 12e-6, 16e-6});
  r.e_cc_paired = rounds({25e-6, 25e-6, 25e-6});
  r.verified = true;
  r.rel_error = 2e-3;
  r.seed = 42;
  return r;
}

FaA2aPointSpec spec() {
  FaA2aPointSpec s;
  s.seq_len = 8192;
  s.target = "host";
  s.repetitions = 3;
  return s;
}

TEST(FaAppPoint, CarriesEveryRoundAndThePairedResiduals) {
  const FaA2aPointResult r = measured();
  const report::AppPoint p = fa_app_point(spec(), r, fa_point_json(spec(), r, nullptr, ""));
  EXPECT_EQ(p.id, "fa_a2a.host");
  EXPECT_EQ(p.axes["M"], 8192);
  EXPECT_EQ(p.axes["verify"], true);
  ASSERT_EQ(p.variants.size(), 7u);
  EXPECT_EQ(p.variants.at("fa_heads_major").samples, r.t_fa_heads_major.samples);
  EXPECT_EQ(p.extra["fa_only_layout"], "ulysses");
  EXPECT_EQ(p.variants.at("completion_coupled").samples, r.t_cc.samples);
  EXPECT_DOUBLE_EQ(p.paired.at("fused_minus_fa").median, 14e-6);
  EXPECT_TRUE(p.verification.checked);
  EXPECT_TRUE(p.verification.passed);
  EXPECT_EQ(p.verification.values["seed"], 42);
  EXPECT_FALSE(p.verification.values.contains("verified"));
}

TEST(FaAppPoint, RecordsBothBoundariesAndTheBurstAlignment) {
  FaA2aPointResult r = measured();
  const report::AppPoint without = fa_app_point(spec(), r, fa_point_json(spec(), r, nullptr, ""));
  EXPECT_EQ(without.variants.count("fused_sender_side"), 0u) << "not measured: no sender-side variant";
  EXPECT_FALSE(without.extra.contains("burst_alignment"));
  r.sender_fa = rounds({80e-6, 81e-6, 79e-6});
  r.sender_fused = rounds({82e-6, 84e-6, 83e-6});
  r.sender_cc = rounds({95e-6, 96e-6, 94e-6});
  r.sender_serial = rounds({130e-6, 131e-6, 129e-6});
  r.e_res_sender_paired = rounds({2e-6, 3e-6, 4e-6});
  r.e_cc_sender_paired = rounds({15e-6, 15e-6, 15e-6});
  r.store_phase_spread_median_s = 3.5e-6;
  r.peak_concurrent_storers = 40;
  r.mean_concurrent_storers = 12.5;
  const report::AppPoint p = fa_app_point(spec(), r, fa_point_json(spec(), r, nullptr, ""));
  EXPECT_EQ(p.variants.at("fused").samples, r.t_fused.samples) << "the remote-visible boundary unchanged";
  EXPECT_EQ(p.variants.at("fa_sender_side").samples, r.sender_fa.samples);
  EXPECT_EQ(p.variants.at("fused_sender_side").samples, r.sender_fused.samples);
  EXPECT_EQ(p.variants.at("completion_coupled_sender_side").samples, r.sender_cc.samples);
  EXPECT_EQ(p.variants.at("serial_sender_side").samples, r.sender_serial.samples);
  EXPECT_DOUBLE_EQ(p.paired.at("fused_minus_fa_sender_side").median, 3e-6);
  EXPECT_DOUBLE_EQ(p.paired.at("completion_coupled_minus_fa_sender_side").median, 15e-6);
  EXPECT_DOUBLE_EQ(p.paired.at("fused_minus_fa").median, 14e-6);
  EXPECT_DOUBLE_EQ(p.extra["burst_alignment"]["store_phase_spread_median_s"].get<double>(), 3.5e-6);
  EXPECT_DOUBLE_EQ(p.extra["burst_alignment"]["peak_concurrent_storers"].get<double>(), 40);
  EXPECT_DOUBLE_EQ(p.extra["burst_alignment"]["mean_concurrent_storers"].get<double>(), 12.5);
  EXPECT_TRUE(p.extra["boundaries"].contains("sender_side"));
  // Through the journal's JSON and back: both boundaries survive.
  const report::AppPoint back = report::app_point_from_json(report::to_json(p), "line");
  EXPECT_EQ(back.variants.at("fused_sender_side").samples, r.sender_fused.samples);
  EXPECT_EQ(back.extra["burst_alignment"], p.extra["burst_alignment"]);
}

// The message names the flag (Error::field) so the CLI's exit-2 line points at it.
std::string refused_field(const FaA2aPointSpec& s) {
  try {
    validate_fa_point_spec(s);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.field();
  }
  return "";
}

TEST(FaAppPoint, ValidatesEveryFlagOfAPointNamingIt) {
  EXPECT_EQ(refused_field(spec()), "");
  auto with = [](auto change) {
    FaA2aPointSpec s = spec();
    change(s);
    return refused_field(s);
  };
  EXPECT_EQ(with([](auto& s) { s.seq_len = 8192 + 64; }), "--M");
  EXPECT_EQ(with([](auto& s) { s.seq_len = 0; }), "--M");
  EXPECT_EQ(with([](auto& s) { s.num_heads = 0; }), "--heads");
  EXPECT_EQ(with([](auto& s) { s.num_heads = 1 << 20; }), "--heads");  // heads * M >= 2^31
  EXPECT_EQ(with([](auto& s) { s.head_dim = 96; }), "--head-dim");
  EXPECT_EQ(with([](auto& s) { s.num_ranks = 3; }), "--P");            // does not divide 8192
  EXPECT_EQ(with([](auto& s) { s.num_ranks = 32; }), "--P");           // above 16
  EXPECT_EQ(with([](auto& s) { s.num_ranks = 0; }), "--P");
  EXPECT_EQ(with([](auto& s) { s.device = -1; }), "--device");
  EXPECT_EQ(with([](auto& s) { s.launches_per_graph = 0; }), "--launches-per-graph");
  EXPECT_EQ(with([](auto& s) { s.repetitions = 0; }), "--reps");
  EXPECT_EQ(with([](auto& s) { s.num_ctas = -1; }), "--ctas");
  EXPECT_EQ(with([](auto& s) { s.num_ranks = 16; }), "") << "16 ranks divide 8192";
  EXPECT_EQ(with([](auto& s) { s.head_dim = 64; }), "") << "head dim 64 is built";
}

TEST(FaAppPoint, TheDeviceIsPartOfThePointsKeyButNotOfTheLegacySpec) {
  FaA2aPointSpec a = spec(), b = spec();
  b.device = 3;
  EXPECT_NE(fa_canonical_spec(a), fa_canonical_spec(b)) << "a resumed run must not reuse another GPU's point";
  const FaA2aPointResult r = measured();
  const report::AppPoint p = fa_app_point(b, r, fa_point_json(b, r, nullptr, ""));
  EXPECT_EQ(p.axes["device"], 3);
  EXPECT_FALSE(fa_legacy_json(p)["spec"].contains("device"));
}

TEST(FaAppPoint, ConvertsBackToTheFaPointObjectAfterTheJournal) {
  for (const char* status : {"ok", "skipped", "failed"}) {
    FaA2aPointResult r = measured();
    r.status = status;
    if (r.status != "ok") r.reason = "unavailable: one GPU";
    if (r.status == "failed") r.verified = false;
    const nlohmann::json legacy = fa_point_json(spec(), r, nullptr, "local");  // adds a prediction_note
    const report::AppPoint p = fa_app_point(spec(), r, legacy);
    const report::AppPoint back = report::app_point_from_json(report::to_json(p), "line");
    EXPECT_EQ(fa_legacy_json(back), legacy) << status;
    EXPECT_EQ(report::failed_verification(back), r.status == "failed") << status;
  }
}

}  // namespace
}  // namespace xs::attention
