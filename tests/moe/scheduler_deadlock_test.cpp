// xstage moe unit tests: deadlock freedom of the MegaMoE schedules under a virtual round-robin execution
// with the kernel's dependency wait (L2(p) runs only after every L1(p) of every CTA), and the D = 0
// deadlock the host validation rejects.
#include <gtest/gtest.h>

#include <vector>

#include "schedule_sim.hpp"

namespace xs::kernels::moe {
namespace {

using schedule_test::enumerate;
using schedule_test::Execution;
using schedule_test::make_problem;
using schedule_test::OwnedProblem;
using schedule_test::run_round_robin;
using schedule_test::Sequences;

template <class Schedule>
Execution execute(const Schedule& s, const ScheduleProblem& prob, std::uint32_t num_instances) {
  std::string error;
  const Sequences seqs = enumerate(s, prob, num_instances, &error);
  EXPECT_EQ(error, "");
  return run_round_robin(prob.tiles, seqs);
}

TileId l1(std::uint32_t p) { return TileId{TileKind::kL1, p, 0}; }
TileId l2(std::uint32_t p) { return TileId{TileKind::kL2, p, 0}; }

// The simulator enforces the wait (a cross-instance dependency costs a step) and reports a cycle.
TEST(MoeScheduleExecution, SimulatorWaitsAndDetectsStalls) {
  const OwnedProblem o = make_problem({2}, 1, 1);  // P = 2, P1 = P2 = 1
  const TileSpace& space = o.view().tiles;
  Execution ex = run_round_robin(space, Sequences{{l2(0), l2(1)}, {l1(0), l1(1)}});
  EXPECT_TRUE(ex.completed);
  EXPECT_EQ(ex.steps, 3u);  // L1(0) | L2(0), L1(1) | L2(1)
  EXPECT_EQ(ex.tiles_run, 4u);
  // Instance 0 waits for row 1 that instance 1 computes only after waiting for row 0 of instance 0.
  ex = run_round_robin(space, Sequences{{l2(1), l1(0)}, {l2(0), l1(1)}});
  EXPECT_FALSE(ex.completed);
  EXPECT_EQ(ex.tiles_run, 0u);
  EXPECT_NE(ex.stall.find("instance 0 waits at L2(1,0)"), std::string::npos) << ex.stall;
  // An instance waiting on its own later L1: the D = 0 pattern.
  ex = run_round_robin(space, Sequences{{l1(1), l2(0), l1(0), l2(1)}});
  EXPECT_FALSE(ex.completed);
  EXPECT_EQ(ex.tiles_run, 1u);
}

// Every schedule the kernel accepts completes on every problem and instance count: Serial, ExpertWave
// and Interleaved with D >= 1. (Why D >= 1 cannot stall: take the lowest row p among blocked L2 heads. An
// instance still owing an L1(p) has its L1 cursor at a row <= p, so its head is an L1, which runs, or an
// L2 of a row <= p - D < p, which is not blocked by minimality. The test checks the claim, not the proof.)
TEST(MoeScheduleExecution, EveryValidScheduleCompletes) {
  for (const OwnedProblem& o : schedule_test::test_problems()) {
    const ScheduleProblem prob = o.view();
    for (std::uint32_t num_instances : schedule_test::instance_counts_for(prob)) {
      schedule_test::for_each_schedule(prob, [&](const auto& schedule, const std::string& name) {
        ASSERT_EQ(schedule_invalid_reason(schedule), nullptr) << name;
        const Execution ex = execute(schedule, prob, num_instances);
        EXPECT_TRUE(ex.completed) << name << " G=" << num_instances << " " << o.describe() << ": " << ex.stall;
        EXPECT_EQ(ex.tiles_run, prob.tiles.num_tiles()) << name << " G=" << num_instances;
      });
    }
  }
}

// D = 0 with one instance: p2 + 0 <= p1 holds at the start, so the instance emits L2(0, 0) before its own
// L1(0, *) and waits forever. With G instances each can open on an L2 whose L1 tiles sit behind L2 tiles.
TEST(MoeScheduleExecution, LeadZeroDeadlocks) {
  ASSERT_NE(schedule_invalid_reason(Interleaved{0}), nullptr);
  const OwnedProblem o = make_problem({2, 1}, 2, 1);
  const ScheduleProblem prob = o.view();
  Execution ex = execute(Interleaved{0}, prob, 1);
  EXPECT_FALSE(ex.completed);
  EXPECT_EQ(ex.tiles_run, 0u);
  EXPECT_NE(ex.stall.find("instance 0 waits at L2(0,0)"), std::string::npos) << ex.stall;
  EXPECT_TRUE(execute(Interleaved{1}, prob, 1).completed);

  // P1 = P2 = 4, P = 4, G = 4: instance g opens with L2(0, g), and row 0's L1 tiles come second.
  const OwnedProblem sq = make_problem({4}, 4, 4);
  ex = execute(Interleaved{0}, sq.view(), 4);
  EXPECT_FALSE(ex.completed);
  EXPECT_EQ(ex.tiles_run, 0u);
  EXPECT_TRUE(execute(Interleaved{1}, sq.view(), 4).completed);

  // In fact D = 0 deadlocks every non-empty problem: instance 0 starts at k1 = k2 = 0, p2 + 0 <= p1 holds,
  // so it opens with L2(0, 0), whose L1(0, 0) is its own second tile. The simulator finds that stall on
  // every problem of the random set and every G.
  int stalled = 0, runs = 0;
  for (const OwnedProblem& r : schedule_test::test_problems()) {
    for (std::uint32_t num_instances : {1u, 7u, 66u, 132u}) {
      ++runs;
      ex = execute(Interleaved{0}, r.view(), num_instances);
      stalled += !ex.completed && ex.stall.find("instance 0 waits at L2(0,0)") != std::string::npos;
    }
  }
  EXPECT_EQ(stalled, runs);
}

// Skew cannot deadlock either: one expert with all rows and 131 others empty, K_SM = 132.
TEST(MoeScheduleExecution, HotExpertCompletes) {
  std::vector<std::uint32_t> rows(132, 0);
  rows[77] = 240;
  const OwnedProblem o = make_problem(rows, 48, 56);
  for (std::uint32_t d : {1u, 2u, 8u}) EXPECT_TRUE(execute(Interleaved{d}, o.view(), 132).completed) << "D=" << d;
  for (std::uint32_t w : {1u, 4u, 132u}) EXPECT_TRUE(execute(ExpertWave{w}, o.view(), 132).completed) << "w=" << w;
}

}  // namespace
}  // namespace xs::kernels::moe
