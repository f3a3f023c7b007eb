// xstage moe host layer: discrete-event replay of the tile schedules (see schedule_sim.hpp).
#include "xs/moe/model/schedule_sim.hpp"

#include <algorithm>
#include <functional>
#include <queue>

#include "xs/common/error.hpp"
#include "xs/kernels/moe/scheduler.cuh"

namespace xs::moe {
namespace {

namespace km = xs::kernels::moe;

// One CTA: its cursor, the tile it holds next (if any), and the time it is free.
struct Cta {
  km::ScheduleCursor cur;
  km::TileId next{};
  bool has_next = false;
  double t = 0;
  double l2_wait_s = 0;
};

template <class Schedule>
ScheduleSimResult replay(const MoeProblem& prob, int block_n, int num_ctas, const Schedule& sched,
                         const TileDurations& d) {
  const km::TileSpace tiles = prob.tile_space(block_n);
  km::ScheduleProblem sp;
  sp.tiles = tiles;
  sp.num_experts = static_cast<std::uint32_t>(prob.num_local_experts);
  sp.expert_first_block = prob.expert_first_block.data();
  const auto g = static_cast<std::uint32_t>(num_ctas);
  std::vector<Cta> ctas(g);
  // Per row block: L1 tiles scheduled so far, the latest end among them, CTAs blocked on the row.
  std::vector<std::uint32_t> l1_scheduled(tiles.num_row_blocks, 0);
  std::vector<double> l1_done_at(tiles.num_row_blocks, 0.0);
  std::vector<std::vector<std::uint32_t>> waiting(tiles.num_row_blocks);
  using Item = std::pair<double, std::uint32_t>;  // (free time, CTA)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  for (std::uint32_t c = 0; c < g; ++c) {
    ctas[c].cur = sched.begin(sp, c, g);
    ctas[c].has_next = sched.next(sp, ctas[c].cur, ctas[c].next);
    if (ctas[c].has_next) ready.push({0.0, c});
  }
  ScheduleSimResult r;
  std::vector<double> waits;
  double end = 0;
  while (!ready.empty()) {
    const auto [t, c] = ready.top();
    ready.pop();
    Cta& cta = ctas[c];
    const km::TileId tile = cta.next;
    double start = t;
    if (tile.kind == km::TileKind::kL2) {
      if (l1_scheduled[tile.row_block] < tiles.l1_tiles_per_row) {  // the row's finish is not known yet
        waiting[tile.row_block].push_back(c);
        continue;
      }
      start = std::max(t, l1_done_at[tile.row_block]);
      cta.l2_wait_s += start - t;
      waits.push_back(start - t);
    }
    const double stop = start + (tile.kind == km::TileKind::kL1 ? d.l1_s : d.l2_s);
    end = std::max(end, stop);
    ++r.tiles;
    if (tile.kind == km::TileKind::kL1) {
      double& done = l1_done_at[tile.row_block];
      done = std::max(done, stop);
      if (++l1_scheduled[tile.row_block] == tiles.l1_tiles_per_row) {
        for (std::uint32_t w : waiting[tile.row_block]) ready.push({ctas[w].t, w});
        waiting[tile.row_block].clear();
      }
    }
    cta.t = stop;
    cta.has_next = sched.next(sp, cta.cur, cta.next);
    if (cta.has_next) ready.push({cta.t, c});
  }
  for (const auto& w : waiting) r.deadlock = r.deadlock || !w.empty();
  r.makespan_s = end;
  double sum = 0;
  for (const auto& cta : ctas) sum += cta.l2_wait_s;
  r.l2_wait_per_cta_s = g > 0 ? sum / g : 0;
  if (!waits.empty()) {
    std::nth_element(waits.begin(), waits.begin() + waits.size() / 2, waits.end());
    r.l2_wait_median_s = waits[waits.size() / 2];
  }
  return r;
}

}  // namespace

ScheduleSimResult simulate_schedule(const MoeProblem& problem, int block_n, int num_ctas, const std::string& schedule,
                                    int lead_rows, const TileDurations& d, int experts_per_wave) {
  if (num_ctas < 1) throw input_error("K_SM", "the schedule replay needs K_SM >= 1");
  if (!(d.l1_s >= 0 && d.l2_s >= 0)) throw input_error("tile durations", "tile durations must be >= 0");
  if (schedule == "interleaved") {
    if (lead_rows < 1) throw input_error("D", "the interleaved replay needs D >= 1 (D = 0 can deadlock)");
    km::Interleaved s;
    s.lead_rows = static_cast<std::uint32_t>(lead_rows);
    return replay(problem, block_n, num_ctas, s, d);
  }
  if (schedule == "expert_wave") {
    if (experts_per_wave < 1) throw input_error("experts_per_wave", "the expert-wave replay needs experts_per_wave >= 1");
    return replay(problem, block_n, num_ctas, km::ExpertWave{static_cast<std::uint32_t>(experts_per_wave)}, d);
  }
  throw input_error("schedule", "'" + schedule + "' cannot be replayed; accepted: interleaved, expert_wave");
}

LeadChoice choose_lead_rows(const MoeProblem& problem, int block_n, int num_ctas, const TileDurations& d,
                            const std::vector<int>& candidates, double tol) {
  if (candidates.empty()) throw input_error("D candidates", "give at least one candidate D >= 1");
  LeadChoice c;
  c.best_makespan_s = -1;
  for (int lead : candidates) {
    const double span = simulate_schedule(problem, block_n, num_ctas, "interleaved", lead, d).makespan_s;
    c.sweep.emplace_back(lead, span);
    if (c.best_makespan_s < 0 || span < c.best_makespan_s) c.best_makespan_s = span;
  }
  std::sort(c.sweep.begin(), c.sweep.end());
  for (const auto& [lead, span] : c.sweep)
    if (span <= c.best_makespan_s * (1 + tol)) {
      c.lead_rows = lead;
      c.makespan_s = span;
      break;
    }
  return c;
}

}  // namespace xs::moe
