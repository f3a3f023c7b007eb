// xstage moe unit tests: the MegaMoE schedules (src/xs/kernels/moe/scheduler.cuh) on hand-checked sequences,
// then on random and skewed problems: every tile exactly once over all instances, each instance's L2(p)
// after its own L1(p), the degenerate cases that must equal Serial, and the host-side validation.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "schedule_sim.hpp"

namespace xs::kernels::moe {
namespace {

using schedule_test::enumerate;
using schedule_test::make_problem;
using schedule_test::OwnedProblem;
using schedule_test::Sequences;

TileId l1(std::uint32_t p, std::uint32_t n) { return TileId{TileKind::kL1, p, n}; }
TileId l2(std::uint32_t p, std::uint32_t n) { return TileId{TileKind::kL2, p, n}; }

std::string names(const std::vector<TileId>& seq) {
  std::string s;
  for (const TileId& t : seq) s += schedule_test::tile_name(t) + " ";
  return s;
}

bool same(const std::vector<TileId>& a, const std::vector<TileId>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].kind != b[i].kind || a[i].row_block != b[i].row_block || a[i].n_block != b[i].n_block) return false;
  return true;
}

template <class Schedule>
Sequences sequences_of(const Schedule& s, const ScheduleProblem& prob, std::uint32_t num_instances) {
  std::string error;
  Sequences seqs = enumerate(s, prob, num_instances, &error);
  EXPECT_EQ(error, "");
  return seqs;
}

// Experts with 1 and 2 row blocks (P = 3), P1 = 2, P2 = 1, two instances; sequences worked out by hand
// from the definitions in the header.
TEST(MoeSchedule, HandCheckedSequences) {
  const OwnedProblem o = make_problem({1, 2}, 2, 1);
  const ScheduleProblem prob = o.view();
  Sequences s = sequences_of(Serial{}, prob, 2);
  EXPECT_EQ(names(s[0]), names({l1(0, 0), l1(1, 0), l1(2, 0), l2(0, 0), l2(2, 0)}));
  EXPECT_EQ(names(s[1]), names({l1(0, 1), l1(1, 1), l1(2, 1), l2(1, 0)}));
  // Wave 0 = expert 0 (row 0), wave 1 = expert 1 (rows 1, 2); each wave restarts at position g.
  s = sequences_of(ExpertWave{1}, prob, 2);
  EXPECT_EQ(names(s[0]), names({l1(0, 0), l2(0, 0), l1(1, 0), l1(2, 0), l2(1, 0)}));
  EXPECT_EQ(names(s[1]), names({l1(0, 1), l1(1, 1), l1(2, 1), l2(2, 0)}));
  // Algorithm 1, D = 1: instance 0 emits L2(0) once its L1 stream reached row 1.
  s = sequences_of(Interleaved{1}, prob, 2);
  EXPECT_EQ(names(s[0]), names({l1(0, 0), l2(0, 0), l1(1, 0), l1(2, 0), l2(2, 0)}));
  EXPECT_EQ(names(s[1]), names({l1(0, 1), l1(1, 1), l2(1, 0), l1(2, 1)}));
  // D = 0 emits L2(0) before any L1 of row 0: the order a single-CTA instance cannot wait out.
  s = sequences_of(Interleaved{0}, prob, 2);
  EXPECT_EQ(names(s[0]), names({l2(0, 0), l1(0, 0), l1(1, 0), l2(2, 0), l1(2, 0)}));
}

TEST(MoeSchedule, EveryTileExactlyOnce) {
  std::uint64_t cases = 0;
  for (const OwnedProblem& o : schedule_test::test_problems()) {
    const ScheduleProblem prob = o.view();
    ASSERT_EQ(schedule_problem_invalid_reason(prob), nullptr) << o.describe();
    for (std::uint32_t num_instances : schedule_test::instance_counts_for(prob)) {
      schedule_test::for_each_schedule(prob, [&](const auto& schedule, const std::string& name) {
        std::string error;
        const Sequences seqs = enumerate(schedule, prob, num_instances, &error);
        ASSERT_EQ(error, "") << name << " G=" << num_instances << " " << o.describe();
        EXPECT_EQ(schedule_test::check_exact_cover(prob.tiles, seqs), "")
            << name << " G=" << num_instances << " " << o.describe();
        ++cases;
      });
    }
  }
  EXPECT_EQ(cases, schedule_test::test_problems().size() * 11 * (schedule_test::instance_counts().size() + 1));
}

TEST(MoeSchedule, EachInstanceEmitsL2AfterItsOwnL1OfTheRow) {
  for (const OwnedProblem& o : schedule_test::test_problems()) {
    const ScheduleProblem prob = o.view();
    for (std::uint32_t num_instances : schedule_test::instance_counts_for(prob)) {
      schedule_test::for_each_schedule(prob, [&](const auto& schedule, const std::string& name) {
        const Sequences seqs = sequences_of(schedule, prob, num_instances);
        EXPECT_EQ(schedule_test::check_own_order(prob.tiles, seqs), "")
            << name << " G=" << num_instances << " " << o.describe();
      });
    }
  }
}

// The checkers themselves: a dropped, duplicated or out-of-range tile and an L2 before its own L1 are
// reported, so the two tests above can fail.
TEST(MoeSchedule, CheckersReportBrokenSequences) {
  const OwnedProblem o = make_problem({2, 0, 3}, 3, 2);
  const ScheduleProblem prob = o.view();
  const Sequences good = sequences_of(Interleaved{1}, prob, 3);
  ASSERT_EQ(schedule_test::check_exact_cover(prob.tiles, good), "");
  Sequences dropped = good;
  dropped[1].pop_back();
  EXPECT_NE(schedule_test::check_exact_cover(prob.tiles, dropped).find("emitted by no instance"), std::string::npos);
  Sequences duplicated = good;
  duplicated[2].push_back(good[0].front());
  EXPECT_NE(schedule_test::check_exact_cover(prob.tiles, duplicated).find("a second time"), std::string::npos);
  Sequences outside = good;
  outside[0].push_back(l2(0, 2));  // n2 = P2
  EXPECT_NE(schedule_test::check_exact_cover(prob.tiles, outside).find("outside"), std::string::npos);
  // D = 0 on one instance: L2(0, 0) comes first (every tile still once, the order is what is wrong).
  const Sequences d0 = sequences_of(Interleaved{0}, prob, 1);
  EXPECT_EQ(schedule_test::check_exact_cover(prob.tiles, d0), "");
  EXPECT_NE(schedule_test::check_own_order(prob.tiles, d0).find("before 3 of its own L1 tiles of row 0"),
            std::string::npos)
      << schedule_test::check_own_order(prob.tiles, d0);
}

template <class A, class B>
void expect_same_sequences(const A& a, const B& b, const OwnedProblem& o, const std::string& what) {
  const ScheduleProblem prob = o.view();
  for (std::uint32_t num_instances : schedule_test::instance_counts_for(prob)) {
    const Sequences sa = sequences_of(a, prob, num_instances), sb = sequences_of(b, prob, num_instances);
    for (std::uint32_t g = 0; g < num_instances; ++g) {
      if (!same(sa[g], sb[g])) {
        ASSERT_EQ(names(sa[g]), names(sb[g])) << what << " G=" << num_instances << " g=" << g << " " << o.describe();
      }
    }
  }
}

// One wave holding every expert is Serial; so is Interleaved with D >= P (p2 + D <= p1 needs p1 = +inf,
// i.e. the instance's L1 stream done). A hot expert alone with ExpertWave{1} is Serial too.
TEST(MoeSchedule, DegenerateSchedulesEqualSerial) {
  for (const OwnedProblem& o : schedule_test::test_problems()) {
    const std::uint32_t num_experts = o.view().num_experts, num_rows = o.view().tiles.num_row_blocks;
    expect_same_sequences(ExpertWave{num_experts}, Serial{}, o, "expert_wave{E}");
    expect_same_sequences(ExpertWave{0xffffffffu}, Serial{}, o, "expert_wave{2^32-1}");
    expect_same_sequences(Interleaved{num_rows}, Serial{}, o, "interleaved{P}");
    expect_same_sequences(Interleaved{0xffffffffu}, Serial{}, o, "interleaved{2^32-1}");
  }
  expect_same_sequences(ExpertWave{1}, Serial{}, make_problem({0, 0, 37, 0}, 4, 7), "expert_wave{1}, one hot expert");
  // ...and the test can tell them apart when they differ.
  const OwnedProblem two = make_problem({3, 3}, 2, 2);
  EXPECT_NE(names(sequences_of(ExpertWave{1}, two.view(), 1)[0]), names(sequences_of(Serial{}, two.view(), 1)[0]));
  EXPECT_NE(names(sequences_of(Interleaved{1}, two.view(), 1)[0]), names(sequences_of(Serial{}, two.view(), 1)[0]));
}

// No experts / no rows, zero instances and an instance id past G emit nothing (and do not loop).
TEST(MoeSchedule, EmptyCases) {
  const OwnedProblem empty = make_problem({0, 0, 0}, 32, 32);
  const OwnedProblem some = make_problem({1, 2}, 2, 3);
  schedule_test::for_each_schedule(some.view(), [&](const auto& schedule, const std::string& name) {
    TileId t;
    ScheduleCursor cur = schedule.begin(empty.view(), 0, 4);
    EXPECT_FALSE(schedule.next(empty.view(), cur, t)) << name;
    cur = schedule.begin(some.view(), 0, 0);
    EXPECT_FALSE(schedule.next(some.view(), cur, t)) << name << " G=0";
    cur = schedule.begin(some.view(), 5, 5);
    EXPECT_FALSE(schedule.next(some.view(), cur, t)) << name << " g=G";
    cur = schedule.begin(some.view(), 4, 5);
    EXPECT_TRUE(schedule.next(some.view(), cur, t)) << name << " g=G-1";
  });
  // experts_per_wave = 0 would form no wave: it emits nothing rather than spinning on the device.
  TileId t;
  ScheduleCursor cur = ExpertWave{0}.begin(some.view(), 0, 1);
  EXPECT_FALSE(ExpertWave{0}.next(some.view(), cur, t));
}

TEST(MoeSchedule, InvalidReasons) {
  EXPECT_EQ(schedule_invalid_reason(Serial{}), nullptr);
  EXPECT_EQ(schedule_invalid_reason(ExpertWave{1}), nullptr);
  EXPECT_EQ(schedule_invalid_reason(Interleaved{1}), nullptr);
  ASSERT_NE(schedule_invalid_reason(Interleaved{0}), nullptr);
  EXPECT_NE(std::strstr(schedule_invalid_reason(Interleaved{0}), "D = 0 can deadlock"), nullptr);
  EXPECT_NE(std::strstr(schedule_invalid_reason(Interleaved{0}), "use D >= 1"), nullptr);
  ASSERT_NE(schedule_invalid_reason(ExpertWave{0}), nullptr);
  EXPECT_NE(std::strstr(schedule_invalid_reason(ExpertWave{0}), "experts_per_wave >= 1"), nullptr);

  OwnedProblem o = make_problem({2, 0, 3}, 2, 2);
  EXPECT_EQ(schedule_problem_invalid_reason(o.view()), nullptr);
  ScheduleProblem no_table = o.view();
  no_table.expert_first_block = nullptr;
  EXPECT_NE(schedule_problem_invalid_reason(no_table), nullptr);
  ScheduleProblem wrong_total = o.view();
  wrong_total.tiles.num_row_blocks = 4;
  EXPECT_NE(schedule_problem_invalid_reason(wrong_total), nullptr);
  o.first_block = {0, 3, 2, 5};
  EXPECT_NE(schedule_problem_invalid_reason(o.view()), nullptr);
  o.first_block = {1, 3, 3, 5};
  EXPECT_NE(schedule_problem_invalid_reason(o.view()), nullptr);
}

}  // namespace
}  // namespace xs::kernels::moe
