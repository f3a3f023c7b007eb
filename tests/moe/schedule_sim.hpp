// xstage moe unit tests (helper): random and skewed schedule problems, each instance's tile sequence of a
// schedule, and the checks the scheduler tests share: exact cover, per-instance L1-before-L2 order and a
// virtual round-robin execution with the kernel's dependency wait (L2(p) needs every L1(p) of every CTA).
#pragma once
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "xs/kernels/moe/scheduler.cuh"

namespace xs::kernels::moe::schedule_test {

// A ScheduleProblem that owns its expert boundaries (the view points into first_block).
struct OwnedProblem {
  std::vector<std::uint32_t> first_block{0};  // E + 1 entries
  std::uint32_t l1_tiles_per_row = 0;         // P1
  std::uint32_t l2_tiles_per_row = 0;         // P2

  ScheduleProblem view() const {
    ScheduleProblem p;
    p.tiles.num_row_blocks = first_block.back();
    p.tiles.l1_tiles_per_row = l1_tiles_per_row;
    p.tiles.l2_tiles_per_row = l2_tiles_per_row;
    p.num_experts = static_cast<std::uint32_t>(first_block.size() - 1);
    p.expert_first_block = first_block.data();
    return p;
  }
  std::string describe() const {
    std::ostringstream os;
    os << "E=" << first_block.size() - 1 << " P=" << first_block.back() << " P1=" << l1_tiles_per_row
       << " P2=" << l2_tiles_per_row << " rows/expert=[";
    for (std::size_t e = 1; e < first_block.size() && e <= 24; ++e)
      os << (e > 1 ? "," : "") << first_block[e] - first_block[e - 1];
    os << (first_block.size() > 25 ? ",...]" : "]");
    return os.str();
  }
};

inline OwnedProblem make_problem(const std::vector<std::uint32_t>& rows_per_expert, std::uint32_t p1,
                                 std::uint32_t p2) {
  OwnedProblem o;
  o.l1_tiles_per_row = p1;
  o.l2_tiles_per_row = p2;
  for (std::uint32_t r : rows_per_expert) o.first_block.push_back(o.first_block.back() + r);
  return o;
}

// (P1, P2) = (2I/128, h/128) for (h, I) = (4096, 2048), (7168, 3072), (1408, 5632), (4096, 1024), then
// small shapes where one instance's stride spans several rows.
struct RowTiles {
  std::uint32_t p1, p2;
};
inline const std::vector<RowTiles>& real_row_tiles() {
  static const std::vector<RowTiles> v{{32, 32}, {48, 56}, {88, 11}, {16, 32}};
  return v;
}
inline const std::vector<RowTiles>& all_row_tiles() {
  static const std::vector<RowTiles> v{{32, 32}, {48, 56}, {88, 11}, {16, 32}, {1, 1}, {2, 1}, {1, 3}, {4, 2}, {3, 5}};
  return v;
}

// Instance counts G: single CTA, small odd strides, K_SM = 66 and 132 of the H200, and more than tiles.
inline const std::vector<std::uint32_t>& instance_counts() {
  static const std::vector<std::uint32_t> v{1, 2, 3, 7, 66, 132, 5000};
  return v;
}

// 1..64 experts with 0..6 row blocks each (zeros included), shape drawn from all_row_tiles().
inline OwnedProblem random_problem(std::mt19937& rng) {
  const std::uint32_t num_experts = std::uniform_int_distribution<std::uint32_t>(1, 64)(rng);
  std::vector<std::uint32_t> rows(num_experts);
  for (auto& r : rows) r = std::uniform_int_distribution<std::uint32_t>(0, 6)(rng);
  const auto& shapes = all_row_tiles();
  const RowTiles s = shapes[std::uniform_int_distribution<std::size_t>(0, shapes.size() - 1)(rng)];
  return make_problem(rows, s.p1, s.p2);
}

// One expert holds most rows (hot expert), the others 0..2 row blocks each.
inline OwnedProblem skewed_problem(std::mt19937& rng) {
  const std::uint32_t num_experts = std::uniform_int_distribution<std::uint32_t>(2, 32)(rng);
  std::vector<std::uint32_t> rows(num_experts);
  for (auto& r : rows) r = std::uniform_int_distribution<std::uint32_t>(0, 2)(rng);
  rows[std::uniform_int_distribution<std::uint32_t>(0, num_experts - 1)(rng)] =
      std::uniform_int_distribution<std::uint32_t>(60, 160)(rng);
  const auto& shapes = all_row_tiles();
  const RowTiles s = shapes[std::uniform_int_distribution<std::size_t>(0, shapes.size() - 1)(rng)];
  return make_problem(rows, s.p1, s.p2);
}

using Sequences = std::vector<std::vector<TileId>>;  // [instance] -> tiles in emission order

// Runs begin/next for every instance. A schedule that emits more than all tiles for one instance is
// reported (error non-empty) instead of looping.
template <class Schedule>
Sequences enumerate(const Schedule& s, const ScheduleProblem& prob, std::uint32_t num_instances,
                    std::string* error) {
  Sequences seqs(num_instances);
  const std::uint32_t cap = prob.tiles.num_tiles();
  for (std::uint32_t g = 0; g < num_instances; ++g) {
    ScheduleCursor cur = s.begin(prob, g, num_instances);
    TileId t;
    while (s.next(prob, cur, t)) {
      if (seqs[g].size() == cap) {
        *error = "instance " + std::to_string(g) + " emits more tiles than the problem has";
        return seqs;
      }
      seqs[g].push_back(t);
    }
  }
  return seqs;
}

inline std::string tile_name(const TileId& t) {
  return std::string(t.kind == TileKind::kL1 ? "L1(" : "L2(") + std::to_string(t.row_block) + "," +
         std::to_string(t.n_block) + ")";
}

// Every tile of the space exactly once over all instances, nothing outside it. "" when so.
inline std::string check_exact_cover(const TileSpace& space, const Sequences& seqs) {
  std::vector<std::uint32_t> visits(space.num_tiles(), 0);
  for (std::size_t g = 0; g < seqs.size(); ++g)
    for (const TileId& t : seqs[g]) {
      const std::uint32_t per_row = t.kind == TileKind::kL1 ? space.l1_tiles_per_row : space.l2_tiles_per_row;
      if (t.row_block >= space.num_row_blocks || t.n_block >= per_row)
        return "instance " + std::to_string(g) + " emits " + tile_name(t) + " outside the tile space";
      if (++visits[space.tile_index(t)] > 1)
        return "instance " + std::to_string(g) + " emits " + tile_name(t) + " a second time";
    }
  for (std::uint32_t i = 0; i < space.num_tiles(); ++i)
    if (visits[i] == 0) return tile_name(space.tile_at(i)) + " is emitted by no instance";
  return "";
}

// Within each instance: every L2(p) it emits comes after every L1(p) that same instance emits. "" when so.
inline std::string check_own_order(const TileSpace& space, const Sequences& seqs) {
  std::vector<std::uint32_t> own_l1(space.num_row_blocks, 0), done_l1(space.num_row_blocks, 0);
  for (std::size_t g = 0; g < seqs.size(); ++g) {
    for (const TileId& t : seqs[g]) own_l1[t.row_block] = done_l1[t.row_block] = 0;  // reset what g touches
    for (const TileId& t : seqs[g])
      if (t.kind == TileKind::kL1) ++own_l1[t.row_block];
    for (std::size_t i = 0; i < seqs[g].size(); ++i) {
      const TileId& t = seqs[g][i];
      if (t.kind == TileKind::kL1) ++done_l1[t.row_block];
      else if (done_l1[t.row_block] < own_l1[t.row_block])
        return "instance " + std::to_string(g) + " emits " + tile_name(t) + " at position " + std::to_string(i) +
               " before " + std::to_string(own_l1[t.row_block] - done_l1[t.row_block]) + " of its own L1 tiles of row " +
               std::to_string(t.row_block);
    }
  }
  return "";
}

// Virtual execution: in each step every unfinished instance tries the head of its sequence (in order, as
// the kernel's producer does). L1 always runs; L2(p) runs only when all P1 tiles L1(p, *) of all instances
// ran in earlier steps. A step where no instance runs anything repeats forever (the state is unchanged),
// so it is reported as a stall instead of looping.
struct Execution {
  bool completed = false;
  std::uint64_t steps = 0;
  std::uint64_t tiles_run = 0;
  std::string stall;  // the blocked heads when stalled
};

inline Execution run_round_robin(const TileSpace& space, const Sequences& seqs) {
  Execution ex;
  std::vector<std::uint32_t> l1_done(space.num_row_blocks, 0);
  std::vector<std::size_t> pos(seqs.size(), 0);
  std::vector<std::uint32_t> finished_l1_rows;
  while (true) {
    bool all_done = true;
    finished_l1_rows.clear();
    std::uint64_t ran = 0;
    for (std::size_t g = 0; g < seqs.size(); ++g) {
      if (pos[g] == seqs[g].size()) continue;
      all_done = false;
      const TileId& t = seqs[g][pos[g]];
      if (t.kind == TileKind::kL2 && l1_done[t.row_block] < space.l1_tiles_per_row) continue;
      if (t.kind == TileKind::kL1) finished_l1_rows.push_back(t.row_block);
      ++pos[g];
      ++ran;
    }
    if (all_done) {
      ex.completed = true;
      return ex;
    }
    if (ran == 0) {
      std::ostringstream os;
      for (std::size_t g = 0; g < seqs.size() && g < 8; ++g)
        if (pos[g] < seqs[g].size()) os << "instance " << g << " waits at " << tile_name(seqs[g][pos[g]]) << "; ";
      ex.stall = os.str();
      return ex;
    }
    // A tile's completion becomes visible to the other instances from the next step on.
    for (std::uint32_t p : finished_l1_rows) ++l1_done[p];
    ex.tiles_run += ran;
    ++ex.steps;
  }
}

// The fixed test set: 40 random problems and 12 skewed ones (seeded, so every run checks the same set).
inline const std::vector<OwnedProblem>& test_problems() {
  static const std::vector<OwnedProblem> v = [] {
    std::mt19937 rng(20261201u);
    std::vector<OwnedProblem> out;
    for (int i = 0; i < 40; ++i) out.push_back(random_problem(rng));
    for (int i = 0; i < 12; ++i) out.push_back(skewed_problem(rng));
    return out;
  }();
  return v;
}

// Calls fn(schedule, name) for Serial, ExpertWave{1, 2, 4, all} and Interleaved{1, 2, 3, 8, 64, 1000}.
template <class Fn>
void for_each_schedule(const ScheduleProblem& prob, Fn&& fn) {
  fn(Serial{}, std::string("serial"));
  for (std::uint32_t w : {1u, 2u, 4u}) fn(ExpertWave{w}, "expert_wave{" + std::to_string(w) + "}");
  fn(ExpertWave{prob.num_experts}, std::string("expert_wave{all}"));
  for (std::uint32_t d : {1u, 2u, 3u, 8u, 64u, 1000u}) fn(Interleaved{d}, "interleaved{" + std::to_string(d) + "}");
}

// instance_counts() plus one more instance than the problem has tiles.
inline std::vector<std::uint32_t> instance_counts_for(const ScheduleProblem& prob) {
  std::vector<std::uint32_t> v = instance_counts();
  v.push_back(prob.tiles.num_tiles() + 1);
  return v;
}

}  // namespace xs::kernels::moe::schedule_test
