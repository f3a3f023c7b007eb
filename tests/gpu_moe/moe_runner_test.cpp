// xstage GPU moe tests: one megamoe point end to end through the runner on small shapes, bf16 and fp8 W8A8,
// local and host targets: every variant verified against the fp32 reference (intermediates and destinations
// poisoned before each, in a rotated order), bitwise identical to the first, timed and instrumented; the
// expert-wave widths swept with the fastest as the baseline; a planted ordering bug in the variant verified
// after a correct one must fail.
#include <gtest/gtest.h>

#include <memory>

#include "../gpu_common/sm90_environment.hpp"
#include "xs/common/error.hpp"
#include "xs/moe/run/moe_runner.hpp"
#include "xs/backends/cuda/device_buffer.hpp"

namespace xs::moe {
namespace {

[[maybe_unused]] auto* const kEnv = ::testing::AddGlobalTestEnvironment(new xs::test::Sm90Environment);

MoePointSpec small_spec(const std::string& precision, const std::string& target) {
  MoePointSpec s;
  s.shape = MoeShape{"small", "small", "test", 512, 256, 32, 4, true};
  s.precision = precision;
  s.routing = "skewed";
  s.tokens_per_rank = 256;
  s.num_ranks = 8;
  s.num_ctas = 16;
  s.target = target;
  s.repetitions = 2;
  s.warmup_rounds = 1;
  s.launches_per_graph = 1;
  return s;
}

class MoeRunner : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(MoeRunner, EveryVariantVerifiedTimedAndInstrumented) {
  const auto [precision, target] = GetParam();
  const MoePointResult r = run_moe_point(small_spec(precision, target));
  ASSERT_EQ(r.status, "ok") << r.reason;
  ASSERT_EQ(r.variants.size(), moe_variant_names().size());  // one expert-wave width
  for (const auto& v : r.variants) {
    SCOPED_TRACE(v.name);
    EXPECT_TRUE(v.verified) << v.verification_detail << " wrong " << v.wrong_elements << " unwritten "
                            << v.unwritten_slots << " unexpected " << v.unexpected_slots << " bitwise "
                            << v.bitwise_differences;
    EXPECT_EQ(v.time.samples.size(), 2u);
    EXPECT_GT(v.time.median, 0.0);
    EXPECT_GE(v.verify_position, 0);
    const bool instrumented = v.mode != "unfused_overlapped" && v.phases == "all";
    EXPECT_EQ(v.tiles.num_tiles > 0, instrumented);
  }
  EXPECT_TRUE(r.verified);
  EXPECT_GT(r.received_pairs, 0u);
  EXPECT_GT(r.reference_rms, 0.0);
  EXPECT_GT(r.phase_l1_tflops, 0.0);
  EXPECT_GT(r.phase_l2_tflops, 0.0);
  EXPECT_GT(r.speedup_interleaved_vs_unfused_overlapped.median, 0.0);
  EXPECT_EQ(r.best_wave_variant, "expert_wave");
}

INSTANTIATE_TEST_SUITE_P(Small, MoeRunner,
                         ::testing::Values(std::make_pair("bf16", "local"), std::make_pair("bf16", "host"),
                                           std::make_pair("fp8", "local"), std::make_pair("fp8", "host")));

TEST(MoeRunnerSubset, OnlyTheNamedVariantsRunInTheirOrder) {
  MoePointSpec s = small_spec("bf16", "host");
  s.variants = {"interleaved", "expert_wave"};
  const MoePointResult r = run_moe_point(s);
  ASSERT_EQ(r.status, "ok") << r.reason;
  ASSERT_EQ(r.variants.size(), 2u);
  EXPECT_EQ(r.variants[0].name, "interleaved");
  EXPECT_EQ(r.variants[1].name, "expert_wave");
  for (const auto& v : r.variants) EXPECT_TRUE(v.verified) << v.name << ": " << v.verification_detail;
  EXPECT_GT(r.speedup_interleaved_vs_wave.median, 0.0);          // both present: the ratio exists
  EXPECT_TRUE(r.speedup_interleaved_vs_serial_then_copy.samples.empty());  // not run: no ratio
  EXPECT_EQ(r.verification_order, (std::vector<std::string>{"interleaved", "expert_wave"}));
  s.verify_rotation = 1;  // the next point starts its verification at the other variant
  const MoePointResult rotated = run_moe_point(s);
  EXPECT_EQ(rotated.verification_order, (std::vector<std::string>{"expert_wave", "interleaved"}));
  for (const auto& v : rotated.variants) EXPECT_TRUE(v.verified) << v.name << ": " << v.verification_detail;
}

TEST(MoeRunnerWidths, ExpertWaveWidthsAreVariantsAndTheFastestIsTheBaseline) {
  MoePointSpec s = small_spec("bf16", "local");
  s.variants = {"expert_wave", "interleaved"};
  s.experts_per_wave = {1, 2, 4, 8};  // 4 local experts: 8 runs as 4 (one wave), dropped as a duplicate
  const MoePointResult r = run_moe_point(s);
  ASSERT_EQ(r.status, "ok") << r.reason;
  EXPECT_EQ(r.experts_per_wave, (std::vector<int>{1, 2, 4}));
  ASSERT_EQ(r.variants.size(), 4u);
  double best = 0;
  for (const auto& v : r.variants) {
    EXPECT_TRUE(v.verified) << v.name << ": " << v.verification_detail;
    if (v.family == "expert_wave" && (best == 0 || v.time.median < best)) best = v.time.median;
  }
  ASSERT_FALSE(r.best_wave_variant.empty());
  for (const auto& v : r.variants)
    if (v.name == r.best_wave_variant) EXPECT_EQ(v.time.median, best);
  EXPECT_EQ(r.speedup_interleaved_vs_wave_width.size(), 3u);
  EXPECT_GT(r.speedup_interleaved_vs_wave.median, 0.0);
}

// The issue-29 scenario: a correct variant verified first, then one with a planted ordering bug (Linear-2
// tiles skip their dependency wait). With intermediates poisoned before each variant's verified launch the
// faulty one reads NaN act rows and must fail, while the correct one passes and the point is "failed".
TEST(MoeRunnerOrderingBug, FaultyVariantVerifiedAfterACorrectOneFails) {
  for (const char* precision : {"bf16", "fp8"}) {
    SCOPED_TRACE(precision);
    MoePointSpec s = small_spec(precision, "local");
    s.variants = {"expert_wave", "interleaved"};
    s.lead_rows = 1;
    s.instrument = false;
    s.fault_skip_l2_wait_variant = "interleaved";
    const MoePointResult r = run_moe_point(s);
    ASSERT_EQ(r.variants.size(), 2u);
    EXPECT_EQ(r.verification_order.front(), "expert_wave");
    EXPECT_TRUE(r.variants[0].verified) << r.variants[0].verification_detail;
    EXPECT_FALSE(r.variants[1].verified) << "the planted ordering bug passed: " << r.variants[1].verification_detail;
    EXPECT_EQ(r.status, "failed");
    EXPECT_FALSE(r.verified);
  }
}

// The Combine-across-ranks path (moe_point.hpp MoeExchange) with one rank over a plain device buffer: the
// rank's window takes every row, the rows it sent are checked where they landed, every slot of its window
// must be written, and a barrier runs around each verification run and before every timed replay.
TEST(MoeRunnerExchange, OneRankOverADeviceBufferVerifiesAndMeetsAtEveryReplay) {
  MoePointSpec s = small_spec("bf16", "nccl:0");
  s.num_ranks = 1;
  s.variants = {"expert_wave", "interleaved"};
  runtime::DeviceBuffer window(std::size_t{2} * s.tokens_per_rank * s.shape.top_k * s.shape.hidden);
  int barriers = 0;
  auto ex = std::make_shared<MoeExchange>();
  ex->world_rank = 0;
  ex->peer_windows = {window.get()};
  ex->own_window = window.get();
  ex->window_bytes = window.bytes();
  ex->barrier = [&barriers] { ++barriers; };
  s.exchange = ex;
  const MoePointResult r = run_moe_point(s);
  ASSERT_EQ(r.status, "ok") << r.reason;
  ASSERT_EQ(r.variants.size(), 2u);
  for (const auto& v : r.variants) EXPECT_TRUE(v.verified) << v.name << ": " << v.verification_detail;
  EXPECT_TRUE(r.verified);
  // 4 per verification run (2 variants), then one per replay: (1 warm-up + 2 timed) rounds x 2 variants.
  EXPECT_EQ(barriers, 4 * 2 + 3 * 2);
  // The copy pipelines are not built across ranks.
  s.variants = {"expert_wave", "serial_then_copy"};
  try {
    (void)run_moe_point(s);
    FAIL() << "accepted the unfused variant across ranks";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
  }
}

TEST(MoeRunnerInput, UnknownVariantIsRejected) {
  MoePointSpec s = small_spec("bf16", "local");
  s.variants = {"interleaved", "wave"};
  try {
    (void)run_moe_point(s);
    FAIL() << "accepted an unknown variant";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
  }
}

TEST(MoeRunnerInput, Fp8AtTileWidth256IsRejected) {
  MoePointSpec s = small_spec("fp8", "local");
  s.block_n = 256;
  try {
    (void)run_moe_point(s);
    FAIL() << "accepted fp8 at b_n = 256";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
  }
}

}  // namespace
}  // namespace xs::moe
