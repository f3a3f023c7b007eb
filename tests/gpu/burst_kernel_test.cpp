// xstage GPU tests: the burst kernel writes exactly what it claims (CPU reference = verify_ring over
// the whole poisoned buffer, guards included), for every store width, producer kind, address mode
// (fresh, same, scattered rows) and the local/host targets; 2-warp producers; completion and isolated records.
#if defined(XS_HAVE_CUDA)  // CPU-only builds compile only the "not built" check (gpu_environment_test)
#include <gtest/gtest.h>

#include <tuple>

#include "gpu_test_util.hpp"

namespace xs {
namespace {

using Param = std::tuple<int, ProducerKind, std::string, AddressMode>;

class BurstKernelWrites : public ::testing::TestWithParam<Param> {};

TEST_P(BurstKernelWrites, EveryClaimedWordMatchesAndNothingElseChanged) {
  const auto [width, kind, target, mode] = GetParam();
  auto backend = runtime::make_gpu_backend(0);
  PointSpec spec = test::small_spec(target);
  spec.store_width_bytes = width;
  spec.producer_kind = kind;
  spec.address_mode = mode;
  // 3 KiB + 16 B: not a multiple of threads x W, so the last loop pass is partial (scattered: 13 rows).
  spec.bytes_per_producer = mode == AddressMode::kScattered ? 13 * 256 : 3072 + 16;
  if (kind == ProducerKind::kWarp) {
    spec.threads_per_producer = 32;
    spec.num_producers = 2 * test::sm_count(*backend) + 3;  // 3 warp rows, the last one partial
  }
  ASSERT_EQ(backend->unavailable_reason(spec), std::nullopt);
  const PointRecord r = backend->run(spec);
  EXPECT_TRUE(r.verification.checked);
  EXPECT_GT(r.verification.bytes_checked, spec.volume_bytes());
  EXPECT_EQ(r.verification.wrong, 0u) << "see stderr for the first mismatching words";
  EXPECT_EQ(r.issue_time_s.samples.size(), static_cast<std::size_t>(spec.repetitions));
  EXPECT_GT(r.issue_time_s.median, 0.0);
  EXPECT_GT(r.period_s.median, r.issue_time_s.median);  // T_period = T_iss + G + bookkeeping
  EXPECT_FALSE(r.completion_s.has_value());
}

INSTANTIATE_TEST_SUITE_P(
    WidthsKindsTargetsModes, BurstKernelWrites,
    ::testing::Combine(::testing::Values(4, 8, 16), ::testing::Values(ProducerKind::kCta, ProducerKind::kWarp),
                       ::testing::Values(std::string("local"), std::string("host")),
                       ::testing::Values(AddressMode::kFresh, AddressMode::kSame, AddressMode::kScattered)),
    [](const ::testing::TestParamInfo<Param>& info) {
      return "w" + std::to_string(std::get<0>(info.param)) + "_" + producer_kind_name(std::get<1>(info.param)) + "_" +
             std::get<2>(info.param) + "_" + address_mode_name(std::get<3>(info.param));
    });

TEST(BurstKernel, FreshRingWrapsAndKeepsTheLastPass) {
  auto backend = runtime::make_gpu_backend(0);
  PointSpec spec = test::small_spec("host");
  spec.num_producers = 4;
  spec.bytes_per_producer = 16u << 20;  // V = 64 MiB: two ring slots, 15 bursts wrap 7 times
  spec.num_bursts = 5;
  spec.warmup_bursts = 1;
  const PointRecord r = backend->run(spec);
  EXPECT_EQ(r.verification.wrong, 0u);
}

TEST(BurstKernel, ScatteredRingWrapsAndKeepsTheLastPass) {
  auto backend = runtime::make_gpu_backend(0);
  PointSpec spec = test::small_spec("host");
  spec.address_mode = AddressMode::kScattered;
  spec.scatter_seed = 12345;
  spec.num_producers = 4;
  spec.bytes_per_producer = 16u << 20;  // V = 64 MiB in a ring of >= 128 MiB rows: 15 bursts wrap it 7 times
  spec.num_bursts = 5;
  spec.warmup_bursts = 1;
  const PointRecord r = backend->run(spec);
  EXPECT_EQ(r.verification.wrong, 0u);
  EXPECT_GE(r.verification.bytes_checked, 2 * spec.volume_bytes());
}

// The MegaMoE store shape end to end: 2-warp CTA producers (--threads 64) writing scattered 256-B rows,
// periodic and isolated, on every SM.
TEST(BurstKernel, TwoWarpProducersWriteScatteredRowsOnEverySm) {
  auto backend = runtime::make_gpu_backend(0);
  for (Suite suite : {Suite::kPeriodic, Suite::kIsolated}) {
    PointSpec spec = test::small_spec("host");
    spec.suite = suite;
    spec.address_mode = AddressMode::kScattered;
    spec.threads_per_producer = 64;
    spec.num_producers = test::sm_count(*backend);
    spec.bytes_per_producer = 16384;
    if (suite == Suite::kIsolated) {
      spec.num_bursts = 1;
      spec.warmup_bursts = 0;
      spec.gap_s = 0;
    }
    ASSERT_EQ(backend->unavailable_reason(spec), std::nullopt) << suite_name(suite);
    const PointRecord r = backend->run(spec);
    EXPECT_EQ(r.verification.wrong, 0u) << suite_name(suite);
    ASSERT_TRUE(r.issue_time_max_s.has_value()) << suite_name(suite);
    ASSERT_EQ(r.issue_time_max_s->samples.size(), r.issue_time_s.samples.size());
    // One aligned burst: per repetition the slowest producer's span bounds the mean span. (Periodic
    // compares a median over bursts with a window mean, which a single stall can order either way.)
    if (suite == Suite::kIsolated)
      for (std::size_t i = 0; i < r.issue_time_s.samples.size(); ++i)
        EXPECT_GE(r.issue_time_max_s->samples[i], r.issue_time_s.samples[i]);
  }
}

TEST(BurstKernel, ScatteredRowsNeedWholeRows) {
  auto backend = runtime::make_gpu_backend(0);
  PointSpec spec = test::small_spec("host");
  spec.address_mode = AddressMode::kScattered;
  spec.bytes_per_producer = 256 + 16;
  const auto reason = backend->unavailable_reason(spec);
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("multiple of 256"), std::string::npos) << *reason;
}

TEST(BurstKernel, CompletionModeRecordsTheFenceHorizonAfterIssue) {
  auto backend = runtime::make_gpu_backend(0);
  for (const char* target : {"local", "host"}) {
    PointSpec spec = test::small_spec(target);
    spec.completion = true;
    const PointRecord r = backend->run(spec);
    ASSERT_TRUE(r.completion_s.has_value()) << target;
    EXPECT_EQ(r.completion_s->samples.size(), static_cast<std::size_t>(spec.repetitions));
    // Per burst and producer fence end >= issue end, so the maxima keep that order.
    EXPECT_GE(r.completion_s->min, r.issue_time_s.min) << target;
    EXPECT_EQ(r.verification.wrong, 0u) << target;
  }
}

TEST(BurstKernel, IsolatedBurstGivesOneIssueSamplePerRepetitionAndNoPeriod) {
  auto backend = runtime::make_gpu_backend(0);
  PointSpec spec = test::small_spec("host");
  spec.suite = Suite::kIsolated;
  spec.num_bursts = 1;
  spec.warmup_bursts = 0;
  spec.gap_s = 0;
  spec.repetitions = 3;
  const PointRecord r = backend->run(spec);
  EXPECT_EQ(r.issue_time_s.samples.size(), 3u);
  EXPECT_GT(r.issue_time_s.min, 0.0);
  ASSERT_TRUE(r.issue_time_max_s.has_value());  // recorded for isolated points too
  ASSERT_EQ(r.issue_time_max_s->samples.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_GE(r.issue_time_max_s->samples[i], r.issue_time_s.samples[i]);
  EXPECT_TRUE(r.period_s.samples.empty());
  EXPECT_EQ(r.verification.wrong, 0u);
}

}  // namespace
}  // namespace xs

#endif  // XS_HAVE_CUDA
