// xstage GPU tests (host-only checks that live with the runtime): the launch aggregation follows its
// definitions on a hand-made timeline, and the verifier catches a wrong word anywhere it looks.
#if defined(XS_HAVE_CUDA)  // CPU-only builds compile only the "not built" check (gpu_environment_test)
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "xs/common/error.hpp"
#include "xs/backends/gpu/burst_timeline.hpp"
#include "xs/backends/gpu/verification.hpp"

namespace xs {
namespace {

namespace rs = kernels::remote_store;

// K = 2 producers, N = 4 bursts at 1 GHz (1 cycle = 1 ns).
runtime::LaunchTimeline make_timeline() {
  runtime::LaunchTimeline t;
  t.num_bursts = 4;
  t.num_producers = 2;
  const std::uint64_t start[4][2] = {{1000, 5000}, {2000, 6100}, {3100, 7000}, {4000, 8200}};
  const std::uint64_t issue[4][2] = {{100, 300}, {200, 150}, {400, 100}, {250, 260}};
  for (int b = 0; b < 4; ++b)
    for (int p = 0; p < 2; ++p) {
      rs::BurstRecord r;
      r.start_cycles = start[b][p];
      r.issue_end_cycles = start[b][p] + issue[b][p];
      r.fence_end_cycles = r.issue_end_cycles + 50 * (p + 1);
      t.records.push_back(r);
    }
  for (int p = 0; p < 2; ++p) {
    rs::ProducerClock c;
    c.first_cycles = 10;
    c.last_cycles = 10 + 1'000'000;
    c.first_ns = 100;
    c.last_ns = 100 + 1'000'000;
    c.barrier_arrival_ns = 50;
    c.start_time_ns = p == 0 ? 60 : 40;  // producer 1 arrived after the start time
    t.clocks.push_back(c);
  }
  return t;
}

TEST(LaunchAggregation, FollowsTheDefinitionsOverSteadyStateBursts) {
  const auto s = runtime::aggregate_launch(make_timeline(), /*first_steady_burst=*/1, /*completion=*/true);
  EXPECT_DOUBLE_EQ(s.sm_clock_hz, 1e9);
  // Start times relative to each producer's burst 0: p0 0,1000,2100,3000; p1 0,1100,2000,3200.
  // Window [max_p rel(1,p), min_p rel(3,p)] = [1100, 3000]: starts of (b=2,p0), (b=1,p1), (b=2,p1).
  // T_iss = mean(400, 150, 100); T_period = mean(900, 900, 1200) = 1000.
  EXPECT_NEAR(s.issue_time_s, 650e-9 / 3, 1e-18);
  EXPECT_DOUBLE_EQ(s.period_s, 1000e-9);
  // Slowest producer per burst 1..3: 200, 400, 260 -> median 260.
  EXPECT_DOUBLE_EQ(s.issue_time_max_s, 260e-9);
  // T_done(b) = max_p (issue + 50(p+1)): 250, 450, 360 -> 360.
  EXPECT_DOUBLE_EQ(s.completion_s, 360e-9);
  EXPECT_EQ(s.num_late_producers, 1u);
}

TEST(LaunchAggregation, PeriodEqualsIssuePlusGapPerPairUnderUnevenService) {
  // Producer 0 is served twice as fast as producer 1; each pair obeys period = d + G (G = 100).
  runtime::LaunchTimeline t = make_timeline();
  t.num_bursts = 6;
  t.records.clear();
  const std::uint64_t d[2] = {200, 400};
  for (int b = 0; b < 6; ++b)
    for (int p = 0; p < 2; ++p) {
      rs::BurstRecord r;
      r.start_cycles = 1000 + static_cast<std::uint64_t>(b) * (d[p] + 100);
      r.issue_end_cycles = r.start_cycles + d[p];
      t.records.push_back(r);
    }
  const auto s = runtime::aggregate_launch(t, 1, false);
  EXPECT_NEAR(s.period_s - s.issue_time_s, 100e-9, 1e-15);
  EXPECT_DOUBLE_EQ(s.issue_time_max_s, 400e-9);
}

TEST(LaunchAggregation, IsolatedBurstIsTheMeanProducerAndTheSlowestOne) {
  runtime::LaunchTimeline t = make_timeline();
  t.num_bursts = 1;
  t.records.resize(2);
  const auto s = runtime::aggregate_launch(t, 0, false);
  EXPECT_DOUBLE_EQ(s.issue_time_s, 200e-9);      // mean_p d(0,p) of spans 100, 300 (meta.definitions)
  EXPECT_DOUBLE_EQ(s.issue_time_max_s, 300e-9);  // max_p d(0,p): the aggregate burst
  EXPECT_TRUE(std::isnan(s.period_s));
}

TEST(LaunchAggregation, RejectsRecordsTheKernelDidNotWrite) {
  auto t = make_timeline();
  t.records[5] = rs::BurstRecord{};  // burst 2, producer 1 left zero
  EXPECT_THROW(runtime::aggregate_launch(t, 0, false), Error);
}

// A buffer written exactly as the kernel claims, by the same layout functions on the host.
std::vector<std::uint32_t> make_buffer(const runtime::RingClaim& claim) {
  std::vector<std::uint32_t> words(claim.buffer_bytes() / 4, rs::kPoisonWord);
  for (std::uint64_t b = 0; b < claim.num_bursts_written; ++b)
    for (std::uint32_t p = 0; p < claim.layout.num_producers; ++p) {
      const std::uint64_t first = (claim.guard_bytes + claim.layout.slice_offset_bytes(b, p)) / 4;
      for (std::uint64_t w = 0; w < claim.layout.bytes_per_producer / 4; ++w)
        words[first + w] = rs::pattern_seed(b, p) ^ static_cast<std::uint32_t>(w);
    }
  return words;
}

// The scattered ring written as the kernel claims: each producer-burst's rows at their permuted slots.
std::vector<std::uint32_t> make_scattered_buffer(const runtime::RingClaim& claim) {
  const auto& l = claim.layout;
  std::vector<std::uint32_t> words(claim.buffer_bytes() / 4, rs::kPoisonWord);
  for (std::uint64_t b = 0; b < claim.num_bursts_written; ++b)
    for (std::uint32_t p = 0; p < l.num_producers; ++p)
      for (std::uint64_t r = 0; r < l.rows_per_producer(); ++r) {
        const std::uint64_t first = (claim.guard_bytes + l.row_offset_bytes(b, p, r)) / 4;
        for (std::uint64_t w = 0; w < 64; ++w)
          words[first + w] = rs::pattern_seed(b, p) ^ static_cast<std::uint32_t>(r * 64 + w);
      }
  return words;
}

TEST(RingVerification, ScatteredRowsAcceptTheClaimAndCatchAMisplacedRow) {
  runtime::RingClaim claim;
  claim.layout.bytes_per_producer = 3 * 256;
  claim.layout.num_producers = 2;  // 6 rows per burst
  claim.layout.row_bits = 5;       // 32 rows
  claim.layout.row_seed = 3;
  claim.guard_bytes = 64;
  claim.num_bursts_written = 7;    // 42 rows: the ring wrapped once
  auto words = make_scattered_buffer(claim);
  EXPECT_EQ(runtime::verify_ring(words.data(), claim).wrong, 0u);
  EXPECT_EQ(runtime::verify_ring(words.data(), claim).bytes_checked, claim.buffer_bytes());

  // Rows written contiguously (the permutation ignored) are caught.
  auto contiguous = words;
  for (std::uint32_t w = 0; w < 64; ++w) std::swap(contiguous[16 + w], contiguous[16 + 64 + w]);
  EXPECT_EQ(runtime::verify_ring(contiguous.data(), claim).wrong, 128u);

  claim.num_bursts_written = 2;  // 12 of 32 rows written; the rest must still be poisoned
  auto partial = make_scattered_buffer(claim);
  EXPECT_EQ(runtime::verify_ring(partial.data(), claim).wrong, 0u);
  const std::uint64_t unwritten = claim.layout.row_permutation()(20);
  partial[(claim.guard_bytes + unwritten * 256) / 4 + 5] = 0;
  EXPECT_EQ(runtime::verify_ring(partial.data(), claim).wrong, 1u);
}

TEST(RingVerification, AcceptsTheClaimAndCountsEveryWrongWord) {
  runtime::RingClaim claim;
  claim.layout.bytes_per_producer = 256;
  claim.layout.num_producers = 3;
  claim.layout.num_slots = 4;
  claim.guard_bytes = 64;
  claim.num_bursts_written = 6;  // slots 0,1 rewritten by bursts 4,5; slots 2,3 by 2,3
  auto words = make_buffer(claim);
  EXPECT_EQ(runtime::verify_ring(words.data(), claim).wrong, 0u);
  EXPECT_EQ(runtime::verify_ring(words.data(), claim).bytes_checked, claim.buffer_bytes());

  auto stale = words;  // slot 0 still holding burst 0 instead of burst 4
  for (std::uint32_t w = 0; w < 64; ++w) stale[claim.guard_bytes / 4 + w] = rs::pattern_seed(0, 0) ^ w;
  EXPECT_EQ(runtime::verify_ring(stale.data(), claim).wrong, 64u);

  auto out_of_bounds = words;  // a store past the ring's end
  out_of_bounds[words.size() - 1] = 0;
  EXPECT_EQ(runtime::verify_ring(out_of_bounds.data(), claim).wrong, 1u);

  claim.num_bursts_written = 3;  // slot 3 never written: must still be poisoned
  auto partial = make_buffer(claim);
  EXPECT_EQ(runtime::verify_ring(partial.data(), claim).wrong, 0u);
  partial[(claim.guard_bytes + 3 * claim.layout.volume_bytes()) / 4] = 7;
  EXPECT_EQ(runtime::verify_ring(partial.data(), claim).wrong, 1u);
}

}  // namespace
}  // namespace xs

#endif  // XS_HAVE_CUDA
