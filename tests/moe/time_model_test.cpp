// xstage moe tests: the whole-kernel time model (src/xs/moe/model/time_model.hpp) on 2-CTA problems small enough to
// replay by hand (the expected numbers are worked out in the comments), the not-calibrated path, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "xs/common/error.hpp"
#include "xs/moe/model/time_model.hpp"

namespace xs::moe {
namespace {

using model::InterferenceStatus;
using model::LoadState;
using model::SlowdownBracket;

constexpr double kUs = 1e-6;
constexpr double kTile = 32768;        // one fully remote L2 tile: 128 rows x b_n 128 x 2 B
constexpr double kRate = kTile / kUs;  // R: one such tile per microsecond

// h = 128, I = 64, b_n = 128: one L1 and one L2 tile per row block; one local expert owning `num_blocks` row
// blocks; `remote_rows[b]` rows of block b go to another rank (the rest are local).
MoeProblem tiny_problem(const std::vector<int>& remote_rows) {
  MoeProblem p;
  p.num_ranks = 8;
  p.hidden = 128;
  p.intermediate = 64;
  p.emulated_rank = 0;
  p.num_local_experts = 1;
  p.num_row_blocks = static_cast<std::uint32_t>(remote_rows.size());
  p.expert_first_block = {0, p.num_row_blocks};
  p.row_block_expert.assign(p.num_row_blocks, 0);
  for (std::size_t b = 0; b < remote_rows.size(); ++b)
    for (int r = 0; r < kPoolBlockRows; ++r) {
      p.pool_arrival.push_back(static_cast<std::int32_t>(b * kPoolBlockRows + r));
      p.pool_dst_rank.push_back(r < remote_rows[b] ? 1 : 0);
      p.pool_dst_slot.push_back(0);
      p.pool_weight.push_back(1.0f);
    }
  return p;
}

SlowdownSource term_of(std::function<double(const LoadState&)> f) {
  SlowdownSource s;
  s.status = InterferenceStatus::kIdentified;
  s.label = "hand-made";
  s.slowdown = [f](const LoadState& l) {
    const double x = f(l);
    return SlowdownBracket{x, x, x};
  };
  return s;
}

TimeModelInputs inputs(double capacity = std::numeric_limits<double>::infinity()) {
  TimeModelInputs in;
  in.l1_s = 1 * kUs;
  in.l2_s = 2 * kUs;
  in.drain_rate_bps = kRate;
  in.capacity_bytes = capacity;
  return in;
}

TEST(TimeModel, RemoteBytesPerL2TileCountOnlyRowsForOtherRanks) {
  const auto b = l2_tile_remote_bytes(tiny_problem({128, 64, 0}), 128, 2);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0], 32768.0);
  EXPECT_EQ(b[1], 16384.0);
  EXPECT_EQ(b[2], 0.0);
}

// Expert-wave, 2 CTAs, 2 row blocks (32768 + 16384 remote bytes), no slowdown. CTA0: L1(0) [0,1], L2(0) [1,3];
// CTA1: L1(1) [0,1], L2(1) [1,3]. At 3 both issue: 49152 B at 32768 B/us drain by 3 + 1.5 = 4.5 us.
TEST(TimeModel, ExpertWaveTwoCtasEndsWhenTheLastByteDrains) {
  const MoeProblem p = tiny_problem({128, 64});
  const auto r = time_model(p, 128, 2, "expert_wave", 0, 1, inputs(), no_interference("none"));
  ASSERT_TRUE(r.computed);
  EXPECT_EQ(r.tiles, 4u);
  EXPECT_NEAR(r.compute_end_s, 3 * kUs, 1e-15);
  EXPECT_NEAR(r.drain_end_s, 4.5 * kUs, 1e-15);
  EXPECT_NEAR(r.kernel_s, 4.5 * kUs, 1e-15);
  EXPECT_EQ(r.remote_bytes, 49152.0);
  EXPECT_EQ(r.l2_wait_per_cta_s, 0.0);
}

// Expert-wave, 2 CTAs, 4 fully remote row blocks; s = 2 while bytes are outstanding, else 1.
// CTA0: L1(0) [0,1], L1(2) [1,2], L2(0) [2,4]; CTA1 the same with rows 1, 3. At 4 each issues 32768 B (q =
// 65536 B, outstanding: s = 2), so L2(2) and L2(3) run [4,8]. The queue is empty at 6; at 8 both issue again:
// 65536 B drain by 10. Kernel 10 us, compute end 8 us, 2 us of slowdown per CTA, mean L2 slowdown 1.5.
TEST(TimeModel, OutstandingBytesSlowTheTilesBesideThem) {
  const MoeProblem p = tiny_problem({128, 128, 128, 128});
  const auto term = term_of([](const LoadState& l) { return l.outstanding_bytes > 0 ? 2.0 : 1.0; });
  const auto r = time_model(p, 128, 2, "expert_wave", 0, 1, inputs(), term);
  ASSERT_TRUE(r.computed);
  EXPECT_NEAR(r.compute_end_s, 8 * kUs, 1e-15);
  EXPECT_NEAR(r.kernel_s, 10 * kUs, 1e-15);
  EXPECT_NEAR(r.slowdown_extra_per_cta_s, 2 * kUs, 1e-15);
  EXPECT_NEAR(r.mean_slowdown_l2, 1.5, 1e-12);
  EXPECT_NEAR(r.mean_slowdown_l1, 1.0, 1e-12);
  // The identity term on the same problem: L2(2), L2(3) run [4,6], the second issue at 6 drains by 8.
  const auto plain = time_model(p, 128, 2, "expert_wave", 0, 1, inputs(), no_interference("none"));
  EXPECT_NEAR(plain.kernel_s, 8 * kUs, 1e-15);
}

// The same problem with Q = 40000 B and no slowdown. At 4 CTA0 issues 32768 B (q = 32768); CTA1's 32768 B
// would make 65536 > Q: it waits (65536 - 40000) / R = 0.779296875 us and runs L2(3) [4.779.., 6.779..]. At 6
// CTA0 issues into an empty queue (q = 32768); at 6.779.. q = 7232 + 32768 = 40000 <= Q, no wait; empty at
// 6.779.. + 40000 / R = 8 us.
TEST(TimeModel, AnIssueThatWouldPassQWaitsForRoom) {
  const MoeProblem p = tiny_problem({128, 128, 128, 128});
  const auto r = time_model(p, 128, 2, "expert_wave", 0, 1, inputs(40000), no_interference("none"));
  ASSERT_TRUE(r.computed);
  const double wait_us = (65536.0 - 40000.0) / 32768.0;
  EXPECT_NEAR(r.capacity_wait_per_cta_s, wait_us * kUs / 2, 1e-15);
  EXPECT_NEAR(r.compute_end_s, (6 + wait_us) * kUs, 1e-15);
  EXPECT_NEAR(r.kernel_s, 8 * kUs, 1e-15);
  EXPECT_NEAR(r.peak_outstanding_bytes, 40000.0, 1e-9);
}

// Interleaved at D = 1, 2 CTAs, 4 fully remote row blocks: CTA0 runs L1(0), L2(0), L1(2), L2(2) and CTA1
// rows 1, 3 (each row's single L1 tile is its own: no dependency wait). s = 1 + offered / R. CTA0: [0,1],
// [1,3]; at 3 it issues 32768 B and stores them beside L1(2): 32768 B/us offered -> s = 2, [3,5]. CTA1
// (popped second at 3) sees both CTAs' 65536 B/us -> s = 3, [3,6]. At 5 CTA0 runs L2(2) beside CTA1's
// stores (32768 B/us, s = 2): [5,9]. At 6 CTA1 runs L2(3) with nothing offered: [6,8]. Queue: 65536 B at 3,
// empty at 5; 32768 B at 8, 32768 B at 9: empty at 10.
TEST(TimeModel, OfferedRateOfTheStoresBesideATileSetsItsSlowdown) {
  const MoeProblem p = tiny_problem({128, 128, 128, 128});
  const auto term = term_of([](const LoadState& l) { return 1.0 + l.offered_rate_bps / l.drain_rate_bps; });
  const auto r = time_model(p, 128, 2, "interleaved", 1, 0, inputs(), term);
  ASSERT_TRUE(r.computed);
  EXPECT_NEAR(r.compute_end_s, 9 * kUs, 1e-15);
  EXPECT_NEAR(r.kernel_s, 10 * kUs, 1e-15);
  EXPECT_NEAR(r.mean_slowdown_l1, (1 + 1 + 2 + 3) / 4.0, 1e-12);
  EXPECT_NEAR(r.mean_slowdown_l2, (1 + 1 + 2 + 1) / 4.0, 1e-12);
}

TEST(TimeModel, BracketSidesOrderTheKernelTime) {
  const MoeProblem p = tiny_problem({128, 128, 128, 128});
  SlowdownSource term;
  term.status = InterferenceStatus::kIdentified;
  term.slowdown = [](const LoadState& l) {
    return l.outstanding_bytes > 0 ? SlowdownBracket{1.5, 2, 3} : SlowdownBracket{1, 1, 1};
  };
  const auto lo = time_model(p, 128, 2, "expert_wave", 0, 1, inputs(), term, BracketSide::kLow);
  const auto mid = time_model(p, 128, 2, "expert_wave", 0, 1, inputs(), term, BracketSide::kMid);
  const auto hi = time_model(p, 128, 2, "expert_wave", 0, 1, inputs(), term, BracketSide::kHigh);
  EXPECT_LT(lo.compute_end_s, mid.compute_end_s);
  EXPECT_LT(mid.compute_end_s, hi.compute_end_s);
  EXPECT_NEAR(hi.compute_end_s, 10 * kUs, 1e-15);  // L2(2), L2(3) run 6 us from 4
}

TEST(TimeModel, AnUncalibratedTermGivesNoHostTimeAndSaysWhy) {
  const MoeProblem p = tiny_problem({128, 128});
  SlowdownSource none;  // kNotCalibrated
  none.why = "the calibration file has no remote_store.loaded block";
  const auto r = time_model(p, 128, 2, "expert_wave", 0, 1, inputs(), none);
  EXPECT_FALSE(r.computed);
  EXPECT_NE(r.why_not.find("interference not calibrated"), std::string::npos);
  EXPECT_NE(r.why_not.find("remote_store.loaded"), std::string::npos);
  EXPECT_EQ(r.kernel_s, 0.0);
  none.status = InterferenceStatus::kNotIdentified;
  EXPECT_NE(time_model(p, 128, 2, "expert_wave", 0, 1, inputs(), none).why_not.find("not identified"),
            std::string::npos);
  // No remote path (the local control): no load, the term is not needed.
  TimeModelInputs local = inputs();
  local.drain_rate_bps = 0;
  const auto l = time_model(p, 128, 2, "expert_wave", 0, 1, local, none);
  ASSERT_TRUE(l.computed);
  EXPECT_NEAR(l.kernel_s, 3 * kUs, 1e-15);
}

TEST(TimeModel, BadInputIsRejectedNamingTheField) {
  const MoeProblem p = tiny_problem({128, 128});
  const auto none = no_interference("none");
  EXPECT_THROW(time_model(p, 128, 0, "expert_wave", 0, 1, inputs(), none), Error);
  EXPECT_THROW(time_model(p, 128, 2, "interleaved", 0, 0, inputs(), none), Error);
  EXPECT_THROW(time_model(p, 128, 2, "expert_wave", 0, 0, inputs(), none), Error);
  EXPECT_THROW(time_model(p, 128, 2, "serial", 0, 1, inputs(), none), Error);
  EXPECT_THROW(time_model(p, 128, 2, "expert_wave", 0, 1, inputs(0), none), Error);
  TimeModelInputs neg = inputs();
  neg.drain_rate_bps = -1;
  EXPECT_THROW(time_model(p, 128, 2, "expert_wave", 0, 1, neg, none), Error);
}

}  // namespace
}  // namespace xs::moe
