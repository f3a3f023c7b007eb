// xstage moe unit tests: what makes Interleaved different from ExpertWave (paper section 4.2). In steady
// state the L1 stream leads the L2 stream by about D rows, the L1:L2 tile counts approach P1:P2 whatever D
// is, and an instance's L2 tiles come in short runs separated by L1 tiles instead of one run per wave.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "schedule_sim.hpp"

namespace xs::kernels::moe {
namespace {

using schedule_test::make_problem;
using schedule_test::OwnedProblem;

// 64 experts x 60 row blocks = 3840 rows: long enough that D up to 1000 leaves a long steady state.
OwnedProblem long_problem(std::uint32_t p1, std::uint32_t p2) {
  return make_problem(std::vector<std::uint32_t>(64, 60), p1, p2);
}

template <class Schedule>
std::vector<TileId> instance_sequence(const Schedule& s, const ScheduleProblem& prob, std::uint32_t g,
                                      std::uint32_t num_instances) {
  std::vector<TileId> seq;
  ScheduleCursor cur = s.begin(prob, g, num_instances);
  TileId t;
  while (s.next(prob, cur, t)) seq.push_back(t);
  return seq;
}

std::vector<std::uint32_t> instances_to_check(std::uint32_t num_instances) {
  return {0u, num_instances / 2, num_instances - 1};
}

// Steady state of one Interleaved instance: the emissions after its first L2 tile up to its last L1 tile.
// With lambda = k1/P1 - k2/P2 (the L1 stream's lead in rows, from the cursors), Algorithm 1 emits L1 only
// when lambda < D and L2 only when lambda > D - 1 (floor arithmetic), so from the first L2 on, lambda stays
// in (D - 1 - G/P2, D + G/P1). Multiplied by P1*P2 everything is an integer.
struct SteadyState {
  std::string error;
  std::uint64_t num_l1 = 0, num_l2 = 0;  // n1, n2 in the window
};

SteadyState steady_state(const std::vector<TileId>& seq, const TileSpace& space, std::uint32_t g,
                         std::uint32_t num_instances, std::uint32_t lead_rows) {
  SteadyState st;
  const std::int64_t p1 = space.l1_tiles_per_row, p2 = space.l2_tiles_per_row, G = num_instances, D = lead_rows;
  const std::int64_t lo = (D - 1) * p1 * p2 - G * p1, hi = D * p1 * p2 + G * p2;  // lambda*P1*P2 bounds
  std::size_t last_l1 = 0;
  for (std::size_t i = 0; i < seq.size(); ++i)
    if (seq[i].kind == TileKind::kL1) last_l1 = i;
  std::int64_t k1 = g, k2 = g;
  bool steady = false;
  for (std::size_t i = 0; i < seq.size() && i <= last_l1; ++i) {
    const TileId& t = seq[i];
    const std::int64_t dense = t.kind == TileKind::kL1 ? t.row_block * p1 + t.n_block : t.row_block * p2 + t.n_block;
    std::int64_t& k = t.kind == TileKind::kL1 ? k1 : k2;
    if (dense != k) {
      st.error = "position " + std::to_string(i) + ": " + schedule_test::tile_name(t) + " is not the cursor's tile " +
                 std::to_string(k);
      return st;
    }
    k += G;
    if (steady) ++(t.kind == TileKind::kL1 ? st.num_l1 : st.num_l2);
    if (t.kind == TileKind::kL2) steady = true;
    const std::int64_t lead = k1 * p2 - k2 * p1;
    if (steady && (lead <= lo || lead >= hi)) {
      st.error = "position " + std::to_string(i) + ": L1 lead " + std::to_string(double(lead) / double(p1 * p2)) +
                 " rows outside (" + std::to_string(double(lo) / double(p1 * p2)) + ", " +
                 std::to_string(double(hi) / double(p1 * p2)) + ")";
      return st;
    }
  }
  return st;
}

// Long-run n1:n2. The lead bound gives |n1*G/P1 - n2*G/P2| < 1 + G/P1 + G/P2 over the window, so the
// relative error of n1/n2 against P1/P2 is below (P1*P2/G + P1 + P2) / (n2*P1): under 0.7% for every case
// here (asserted), which the 2% tolerance covers with room. The same holds for every D.
TEST(MoeScheduleInterleave, LongRunRatioIsP1ToP2ForEveryLead) {
  for (const auto& shape : schedule_test::real_row_tiles()) {
    const OwnedProblem o = long_problem(shape.p1, shape.p2);
    const ScheduleProblem prob = o.view();
    const double target = double(shape.p1) / double(shape.p2);
    for (std::uint32_t num_instances : {1u, 7u, 66u, 132u}) {
      for (std::uint32_t d : {1u, 2u, 3u, 8u, 64u, 1000u}) {
        for (std::uint32_t g : instances_to_check(num_instances)) {
          const std::string where = "D=" + std::to_string(d) + " G=" + std::to_string(num_instances) + " g=" +
                                    std::to_string(g) + " " + o.describe();
          const SteadyState st = steady_state(instance_sequence(Interleaved{d}, prob, g, num_instances), prob.tiles, g,
                                              num_instances, d);
          ASSERT_EQ(st.error, "") << where;
          ASSERT_GT(st.num_l2, 0u) << where;
          const double bound = (double(shape.p1) * shape.p2 / num_instances + shape.p1 + shape.p2) /
                               (double(st.num_l2) * shape.p1);
          ASSERT_LT(bound, 0.007) << "window too short to test the ratio: " << where;
          const std::int64_t diff = std::llabs(std::int64_t(st.num_l1 * shape.p2) - std::int64_t(st.num_l2 * shape.p1));
          EXPECT_LT(diff * num_instances, std::int64_t(shape.p1) * shape.p2 + std::int64_t(num_instances) * (shape.p1 + shape.p2))
              << where;
          EXPECT_NEAR(double(st.num_l1) / double(st.num_l2) / target, 1.0, 0.02) << where;
        }
      }
    }
  }
}

// Lengths of the maximal runs of consecutive L2 tiles that have an L1 tile on both sides.
std::vector<std::uint32_t> inner_l2_runs(const std::vector<TileId>& seq) {
  std::vector<std::uint32_t> runs;
  std::size_t i = 0;
  while (i < seq.size()) {
    if (seq[i].kind == TileKind::kL1) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < seq.size() && seq[j].kind == TileKind::kL2) ++j;
    if (i > 0 && j < seq.size()) runs.push_back(static_cast<std::uint32_t>(j - i));
    i = j;
  }
  return runs;
}

// An L2 run between two L1 tiles covers the rows the preceding L1 tile advanced p1 by, at most
// ceil(G/P1) rows, at stride G: at most B = ceil(ceil(G/P1) * P2 / G) tiles. For G >= P1 + P2-ish shapes
// (P1 = 88, P2 = 11 at G = 66, 132) B = 1: an L1 tile between every two L2 tiles. ExpertWave{1} instead
// emits each wave's L2 share in one run (here 60 rows * P2 / G tiles, far above B).
TEST(MoeScheduleInterleave, L2TilesComeInShortRunsBetweenL1Tiles) {
  for (const auto& shape : schedule_test::real_row_tiles()) {
    const OwnedProblem o = long_problem(shape.p1, shape.p2);
    const ScheduleProblem prob = o.view();
    for (std::uint32_t num_instances : {1u, 7u, 66u, 132u}) {
      const std::uint32_t rows_per_step = (num_instances + shape.p1 - 1) / shape.p1;
      const std::uint32_t max_run = (rows_per_step * shape.p2 + num_instances - 1) / num_instances;  // B
      for (std::uint32_t g : instances_to_check(num_instances)) {
        for (std::uint32_t d : {1u, 2u, 8u}) {
          const std::vector<std::uint32_t> runs = inner_l2_runs(instance_sequence(Interleaved{d}, prob, g, num_instances));
          ASSERT_FALSE(runs.empty());
          EXPECT_LE(*std::max_element(runs.begin(), runs.end()), max_run)
              << "D=" << d << " G=" << num_instances << " g=" << g << " " << o.describe();
          // Many runs, not one per wave: the instance's L2 tiles are spread over the whole problem.
          EXPECT_GT(runs.size(), 64u * 60u * shape.p2 / num_instances / max_run / 2) << "D=" << d;
        }
        // ExpertWave: one run per wave, exactly the wave's L2 tiles j = g, g+G, ... of 60*P2.
        const std::uint32_t wave_share = (60 * shape.p2 - g + num_instances - 1) / num_instances;
        const std::vector<std::uint32_t> wave_runs = inner_l2_runs(instance_sequence(ExpertWave{1}, prob, g, num_instances));
        ASSERT_EQ(wave_runs.size(), 63u) << "G=" << num_instances << " g=" << g;  // the last wave has no L1 after it
        for (std::uint32_t r : wave_runs) EXPECT_EQ(r, wave_share);
        EXPECT_GT(wave_share, max_run) << "G=" << num_instances;
      }
    }
  }
}

// The literal property where B = 1: between two consecutive L2 tiles of an instance an L1 tile appears
// until the instance's L1 tiles are exhausted.
TEST(MoeScheduleInterleave, StrictAlternationWhereOneRowPerStep) {
  const OwnedProblem o = long_problem(88, 11);  // h = 1408, I = 5632
  const ScheduleProblem prob = o.view();
  for (std::uint32_t num_instances : {66u, 132u}) {
    for (std::uint32_t g : instances_to_check(num_instances)) {
      const std::vector<TileId> seq = instance_sequence(Interleaved{1}, prob, g, num_instances);
      std::size_t last_l1 = 0;
      for (std::size_t i = 0; i < seq.size(); ++i)
        if (seq[i].kind == TileKind::kL1) last_l1 = i;
      for (std::size_t i = 1; i < last_l1; ++i)
        ASSERT_FALSE(seq[i].kind == TileKind::kL2 && seq[i - 1].kind == TileKind::kL2)
            << "G=" << num_instances << " g=" << g << " two L2 tiles in a row at " << i;
    }
  }
}

}  // namespace
}  // namespace xs::kernels::moe
