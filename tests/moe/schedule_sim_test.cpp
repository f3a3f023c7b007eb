// xstage moe tests: the discrete-event replay of the kernel's tile schedules (src/xs/moe/model/schedule_sim.hpp) —
// tile accounting, exact makespans where they are known in closed form, the convoy at small D on a
// dit_moe-like shape (long Linear-2 tiles, P1 > K_SM), and bad input.
#include <gtest/gtest.h>

#include <cmath>

#include "xs/common/error.hpp"
#include "xs/moe/point/routing.hpp"
#include "xs/moe/model/schedule_sim.hpp"

namespace xs::moe {
namespace {

MoeProblem problem_of(int hidden, int inter, int experts, int top_k, int tokens, double alpha) {
  RoutingParams rp;
  rp.num_ranks = 8;
  rp.tokens_per_rank = tokens;
  rp.num_experts = experts;
  rp.top_k = top_k;
  rp.zipf_alpha = alpha;
  rp.seed = 7;
  return build_problem(generate_routing(rp), hidden, inter);
}

TEST(ScheduleSim, EveryTileReplayedOnceAndAllL1ThenL2WhenDCoversEveryRow) {
  const MoeProblem p = problem_of(1024, 512, 32, 4, 1024, 0.0);
  const auto tiles = p.tile_space(128);
  const int g = 16;
  const TileDurations d{1e-6, 0.0};
  // D larger than the row count: every L1 tile precedes every L2 tile on each CTA, and zero-length L2
  // tiles make the makespan the busiest CTA's L1 work: ceil(num_l1 / G) tiles.
  const auto r = simulate_schedule(p, 128, g, "interleaved", static_cast<int>(tiles.num_row_blocks) + 1, d);
  EXPECT_EQ(r.tiles, tiles.num_tiles());
  EXPECT_FALSE(r.deadlock);
  EXPECT_NEAR(r.makespan_s, std::ceil(double(tiles.num_l1_tiles()) / g) * 1e-6, 1e-12);
  const auto w = simulate_schedule(p, 128, g, "expert_wave", 1, d);
  EXPECT_EQ(w.tiles, tiles.num_tiles());
  EXPECT_FALSE(w.deadlock);
}

TEST(ScheduleSim, OneCtaRunsEverythingBackToBackWithoutWaiting) {
  const MoeProblem p = problem_of(512, 256, 16, 2, 512, 0.0);
  const auto tiles = p.tile_space(128);
  const TileDurations d{2e-6, 3e-6};
  for (const char* s : {"interleaved", "expert_wave"}) {
    SCOPED_TRACE(s);
    const auto r = simulate_schedule(p, 128, 1, s, 1, d);
    EXPECT_NEAR(r.makespan_s, tiles.num_l1_tiles() * 2e-6 + tiles.num_l2_tiles() * 3e-6, 1e-12);
    EXPECT_EQ(r.l2_wait_per_cta_s, 0.0);  // a single CTA finished the row itself before its L2 tile
  }
}

// dit_moe-like: h 1408, I 5632 (P1 = 88 > K_SM = 66), T_L2 = 4 T_L1 (K = I vs K = h). At D = 1 a CTA reaches
// L2(p) while the CTAs owning p's last L1 tiles are still a long L2 tile behind: the replay must show the
// waits, and a larger D must remove most of them.
TEST(ScheduleSim, SmallLeadOnLongL2TilesMakesAConvoyThatALargerLeadRemoves) {
  const MoeProblem p = problem_of(1408, 5632, 16, 2, 2048, 0.5);
  const TileDurations d{8e-6, 32e-6};
  const auto at1 = simulate_schedule(p, 128, 66, "interleaved", 1, d);
  const auto at8 = simulate_schedule(p, 128, 66, "interleaved", 8, d);
  EXPECT_GT(at1.l2_wait_median_s, 2 * d.l1_s);
  EXPECT_LT(at8.l2_wait_per_cta_s, 0.5 * at1.l2_wait_per_cta_s);
  EXPECT_LT(at8.makespan_s, at1.makespan_s);
  const LeadChoice c = choose_lead_rows(p, 128, 66, d, {1, 2, 3, 4, 6, 8, 12, 16});
  EXPECT_GT(c.lead_rows, 1);
  EXPECT_LE(c.makespan_s, c.best_makespan_s * 1.02);
  EXPECT_EQ(c.sweep.size(), 8u);
}

TEST(ScheduleSim, BadInputIsRejectedWithExit2) {
  const MoeProblem p = problem_of(512, 256, 16, 2, 256, 0.0);
  const TileDurations d{1e-6, 1e-6};
  for (auto bad : {std::make_tuple(std::string("wave"), 16, 1), std::make_tuple(std::string("interleaved"), 16, 0),
                   std::make_tuple(std::string("interleaved"), 0, 1)}) {
    try {
      (void)simulate_schedule(p, 128, std::get<1>(bad), std::get<0>(bad), std::get<2>(bad), d);
      FAIL() << "accepted " << std::get<0>(bad);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
    }
  }
  EXPECT_THROW((void)choose_lead_rows(p, 128, 16, d, {}), Error);
}

}  // namespace
}  // namespace xs::moe
