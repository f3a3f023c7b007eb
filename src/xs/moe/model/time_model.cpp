// xstage moe model layer: the MegaMoE whole-kernel time model (see time_model.hpp).
#include "xs/moe/model/time_model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>

#include "xs/common/error.hpp"
#include "xs/kernels/moe/scheduler.cuh"

namespace xs::moe {
namespace {

namespace km = xs::kernels::moe;

struct Cta {
  km::ScheduleCursor cur;
  km::TileId next{};
  bool has_next = false;
  double t = 0;                 // free at
  double pending_bytes = 0;     // remote Combine bytes of its last L2 tile, issued when it is next free
  double stored_beside_bytes = 0;  // bytes its stores put on the path during its next tile
  double offered_bps = 0;       // its contribution to the offered rate while it runs its current tile
  double l2_wait_s = 0, capacity_wait_s = 0, extra_s = 0;
};

// The remote path's fluid queue: q bytes outstanding at `clock`, drained at R.
struct DrainQueue {
  double rate_bps = 0, capacity_bytes = 0;
  double clock_s = 0, bytes = 0, peak_bytes = 0, total_bytes = 0;
  void advance(double t) {
    if (t <= clock_s) return;  // an issue slightly behind the clock (a re-queued CTA): no time passes
    bytes = std::max(0.0, bytes - rate_bps * (t - clock_s));
    clock_s = t;
  }
  // Issues `v` bytes at t; returns how long the issuer waits for room (the queue may not pass Q).
  double issue(double t, double v) {
    advance(t);
    const double wait = bytes + v > capacity_bytes ? (bytes + v - capacity_bytes) / rate_bps : 0.0;
    bytes += v;
    total_bytes += v;
    peak_bytes = std::max(peak_bytes, std::min(bytes, capacity_bytes));
    return wait;
  }
  double empty_at() const { return clock_s + (rate_bps > 0 ? bytes / rate_bps : 0.0); }
};

double side_of(const model::SlowdownBracket& s, BracketSide side) {
  return side == BracketSide::kLow ? s.lo : side == BracketSide::kHigh ? s.hi : s.mid;
}

// Where the replay's loads left the term's calibration (above it, or below it where it is only a bracket).
void record_calibration_range(const model::OutsideCalibration& outside, TimeModelResult& r) {
  r.term_outside_loads = outside.outside;
  r.term_outside_calibration = outside.sentence();
  r.term_below_loads = outside.below;
  r.term_below_extra_s = outside.below_extra_s;
}

// The load a tile sees (model::LoadState): every field from the configuration or the replay's own queue.
model::LoadState tile_load(const TimeModelInputs& in, double offered_bps, double outstanding_bytes, int num_ctas,
                           double base_s, bool is_l2, double beside_bytes) {
  model::LoadState load;
  load.offered_rate_bps = std::max(0.0, offered_bps);  // the running sum can round below 0
  load.outstanding_bytes = outstanding_bytes;
  load.drain_rate_bps = in.drain_rate_bps;
  load.capacity_bytes = std::isfinite(in.capacity_bytes) ? in.capacity_bytes : 0.0;
  load.num_sms = num_ctas;
  load.operands_in_l2 = in.operands_in_l2;
  load.tile_time_s = base_s;  // T0: the tile's compute-only time (the wait is additive, scaled by k-blocks)
  load.k_blocks_per_tile = is_l2 ? in.l2_k_blocks : in.l1_k_blocks;
  load.burst_bytes_per_sm = beside_bytes;  // this CTA's Combine rows stored beside this tile (0: none)
  return load;
}

// One replay of the kernel's tiles over K_SM CTAs: an event queue of CTAs by the time they come free, each running
// its schedule's next tile, with the remote path's queue and the interference term. The loop's whole state, built
// once; each step works on it in place.
template <class Schedule>
struct ReplayState {
  using Item = std::pair<double, std::uint32_t>;
  const Schedule& sched;
  const TimeModelInputs& in;
  const SlowdownSource& term;
  BracketSide side;
  int num_ctas;
  km::TileSpace tiles;
  std::vector<double> l2_bytes;
  bool remote;
  km::ScheduleProblem sp;
  std::uint32_t g;
  std::vector<Cta> ctas;
  std::vector<std::uint32_t> l1_scheduled;
  std::vector<double> l1_done_at;
  std::vector<std::vector<std::uint32_t>> waiting;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  DrainQueue queue;
  double offered_bps = 0;  // sum of the CTAs' contributions
  TimeModelResult r;
  model::OutsideCalibration outside;  // loads past the term's calibrated range
  double sum_s1 = 0, sum_s2 = 0, sum_offered_l2 = 0;
  std::uint64_t n1 = 0, n2 = 0;
  double end = 0;

  // Every CTA at its schedule's first tile, ready at t = 0.
  ReplayState(const MoeProblem& prob, int block_n, int num_ctas_, const Schedule& sched_, const TimeModelInputs& in_,
              const SlowdownSource& term_, BracketSide side_)
      : sched(sched_), in(in_), term(term_), side(side_), num_ctas(num_ctas_), tiles(prob.tile_space(block_n)),
        l2_bytes(l2_tile_remote_bytes(prob, block_n, in_.elem_bytes)), remote(in_.drain_rate_bps > 0),
        queue{in_.drain_rate_bps, in_.capacity_bytes} {
    sp.tiles = tiles;
    sp.num_experts = static_cast<std::uint32_t>(prob.num_local_experts);
    sp.expert_first_block = prob.expert_first_block.data();
    g = static_cast<std::uint32_t>(num_ctas);
    ctas.resize(g);
    l1_scheduled.assign(tiles.num_row_blocks, 0);
    l1_done_at.assign(tiles.num_row_blocks, 0.0);
    waiting.resize(tiles.num_row_blocks);
    for (std::uint32_t c = 0; c < g; ++c) {
      ctas[c].cur = sched.begin(sp, c, g);
      ctas[c].has_next = sched.next(sp, ctas[c].cur, ctas[c].next);
      if (ctas[c].has_next) ready.push({0.0, c});
    }
  }

  // The previous L2 tile's Combine rows are issued as the CTA comes free: the issue may wait for room in Q,
  // and their stores run beside this tile (its offered-rate contribution: bytes over this tile's time).
  // A tile after anything else stores nothing beside it. (A CTA re-queued on a dependency comes here twice:
  // its bytes were issued on the first visit.) Returns when the CTA is ready to start.
  double issue_pending(Cta& cta, double t, double base_s) {
    double ready_s = t;
    offered_bps -= cta.offered_bps;
    cta.offered_bps = 0;
    if (cta.pending_bytes > 0) {
      if (remote) {
        const double wait = queue.issue(t, cta.pending_bytes);
        cta.capacity_wait_s += wait;
        ready_s = t + wait;
      } else {
        queue.total_bytes += cta.pending_bytes;
      }
      cta.stored_beside_bytes = cta.pending_bytes;
      cta.pending_bytes = 0;
      cta.t = ready_s;
    }
    cta.offered_bps = base_s > 0 ? cta.stored_beside_bytes / base_s : 0.0;
    offered_bps += cta.offered_bps;
    return ready_s;
  }

  // The slowdown s of a tile starting at `start` under the load on the remote path (1 without one), its load
  // checked against the term's calibrated range.
  double slowdown_at(double start, double base_s, bool is_l2, double beside_bytes) {
    if (!remote) return 1.0;
    queue.advance(start);
    const model::LoadState load = tile_load(in, offered_bps, queue.bytes, num_ctas, base_s, is_l2, beside_bytes);
    if (base_s > 0) outside.add(term, load, base_s);
    const double s = base_s > 0 ? side_of(term.slowdown(load), side) : 1.0;
    if (!(s > 0) || !std::isfinite(s))
      throw std::logic_error("time_model: the interference term returned a slowdown that is not a positive number");
    return s;
  }

  // After a tile that ends at `stop`: an L1 tile may complete its row (releasing the L2 tiles waiting on it), an L2
  // tile leaves its Combine rows pending; the CTA is re-queued with its next tile, or leaves the offered rate.
  void finish_tile(std::uint32_t c, Cta& cta, const km::TileId& tile, bool is_l2, double stop) {
    if (!is_l2) {
      double& done = l1_done_at[tile.row_block];
      done = std::max(done, stop);
      if (++l1_scheduled[tile.row_block] == tiles.l1_tiles_per_row) {
        for (std::uint32_t w : waiting[tile.row_block]) ready.push({ctas[w].t, w});
        waiting[tile.row_block].clear();
      }
    } else {
      cta.pending_bytes = l2_bytes[tile.row_block];
    }
    cta.t = stop;
    cta.has_next = sched.next(sp, cta.cur, cta.next);
    if (cta.has_next) {
      ready.push({cta.t, c});
    } else {
      offered_bps -= cta.offered_bps;
      cta.offered_bps = 0;
    }
  }

  // One event: the CTA that comes free first runs its next tile, or an L2 tile whose row's L1 tiles are not all
  // scheduled waits for them.
  void step() {
    const auto [t, c] = ready.top();
    ready.pop();
    Cta& cta = ctas[c];
    const km::TileId tile = cta.next;
    const bool is_l2 = tile.kind == km::TileKind::kL2;
    const double base_s = is_l2 ? in.l2_s : in.l1_s;
    const double ready_s = issue_pending(cta, t, base_s);
    double start = ready_s;
    if (is_l2) {
      if (l1_scheduled[tile.row_block] < tiles.l1_tiles_per_row) {  // the row's finish is not known yet
        waiting[tile.row_block].push_back(c);
        return;
      }
      start = std::max(ready_s, l1_done_at[tile.row_block]);
      cta.l2_wait_s += start - ready_s;
    }
    const double beside_bytes = cta.stored_beside_bytes;
    cta.stored_beside_bytes = 0;
    const double s = slowdown_at(start, base_s, is_l2, beside_bytes);
    if (is_l2) {
      sum_s2 += s;
      ++n2;
      sum_offered_l2 += offered_bps;
    } else {
      sum_s1 += s;
      ++n1;
    }
    const double stop = start + base_s * s;
    cta.extra_s += base_s * (s - 1.0);
    end = std::max(end, stop);
    ++r.tiles;
    finish_tile(c, cta, tile, is_l2, stop);
  }

  // After the last event: a deadlock if any L2 tile still waits; the last L2 tiles' rows, issued as their CTAs
  // finish, in time order (the fence waits for the last byte).
  void issue_last_rows() {
    for (const auto& w : waiting) r.deadlock = r.deadlock || !w.empty();
    std::vector<std::pair<double, double>> last;
    for (Cta& cta : ctas)
      if (cta.pending_bytes > 0) last.emplace_back(cta.t, cta.pending_bytes);
    std::sort(last.begin(), last.end());
    for (const auto& [t, v] : last) {
      if (remote) {
        end = std::max(end, t + queue.issue(t, v));
      } else {
        queue.total_bytes += v;
      }
    }
  }

  // The result: the kernel's end, the path's totals, the per-CTA means of the waits and the slowdowns' means.
  TimeModelResult result() {
    r.computed = true;
    r.compute_end_s = end;
    r.drain_end_s = remote ? queue.empty_at() : 0.0;
    r.kernel_s = std::max(r.compute_end_s, r.drain_end_s);
    r.remote_bytes = queue.total_bytes;
    r.peak_outstanding_bytes = queue.peak_bytes;
    double wait = 0, cap = 0, extra = 0;
    for (const Cta& cta : ctas) {
      wait += cta.l2_wait_s;
      cap += cta.capacity_wait_s;
      extra += cta.extra_s;
    }
    r.l2_wait_per_cta_s = wait / g;
    r.capacity_wait_per_cta_s = cap / g;
    r.slowdown_extra_per_cta_s = extra / g;
    r.mean_slowdown_l1 = n1 ? sum_s1 / n1 : 1.0;
    r.mean_slowdown_l2 = n2 ? sum_s2 / n2 : 1.0;
    record_calibration_range(outside, r);
    r.mean_offered_rate_l2_bps = n2 ? sum_offered_l2 / n2 : 0.0;
    return std::move(r);
  }
};

template <class Schedule>
TimeModelResult replay(const MoeProblem& prob, int block_n, int num_ctas, const Schedule& sched,
                       const TimeModelInputs& in, const SlowdownSource& term, BracketSide side) {
  ReplayState<Schedule> state(prob, block_n, num_ctas, sched, in, term, side);
  while (!state.ready.empty()) state.step();
  state.issue_last_rows();
  return state.result();
}

}  // namespace

std::vector<double> l2_tile_remote_bytes(const MoeProblem& problem, int block_n, int elem_bytes) {
  std::vector<double> out(problem.num_row_blocks, 0.0);
  for (std::uint32_t b = 0; b < problem.num_row_blocks; ++b) {
    std::uint64_t rows = 0;
    for (std::uint64_t row = std::uint64_t{b} * kPoolBlockRows; row < std::uint64_t{b + 1} * kPoolBlockRows; ++row)
      rows += problem.pool_arrival[row] >= 0 && problem.pool_dst_rank[row] != problem.emulated_rank;
    out[b] = static_cast<double>(rows) * block_n * elem_bytes;
  }
  return out;
}

TimeModelResult time_model(const MoeProblem& problem, int block_n, int num_ctas, const std::string& schedule,
                           int lead_rows, int experts_per_wave, const TimeModelInputs& in,
                           const SlowdownSource& interference, BracketSide side) {
  if (num_ctas < 1) throw input_error("K_SM", "the time model needs K_SM >= 1");
  if (!(in.l1_s >= 0 && in.l2_s >= 0)) throw input_error("tile times", "T_L1 and T_L2 must be >= 0");
  if (!(in.drain_rate_bps >= 0) || !std::isfinite(in.drain_rate_bps))
    throw input_error("R", "the drain rate must be a finite number >= 0 (0: no remote path)");
  if (!(in.capacity_bytes > 0)) throw input_error("Q", "the capacity must be > 0 bytes (+inf: not identified)");
  if (in.elem_bytes < 1) throw input_error("elem_bytes", "the Combine element size must be >= 1 byte");
  if (in.drain_rate_bps > 0 && !interference.usable()) {
    TimeModelResult r;
    r.why_not = interference.reason_not_usable();
    return r;
  }
  if (schedule == "interleaved") {
    if (lead_rows < 1) throw input_error("D", "the interleaved replay needs D >= 1 (D = 0 can deadlock)");
    km::Interleaved s;
    s.lead_rows = static_cast<std::uint32_t>(lead_rows);
    return replay(problem, block_n, num_ctas, s, in, interference, side);
  }
  if (schedule == "expert_wave") {
    if (experts_per_wave < 1)
      throw input_error("experts_per_wave", "the expert-wave replay needs experts_per_wave >= 1");
    return replay(problem, block_n, num_ctas, km::ExpertWave{static_cast<std::uint32_t>(experts_per_wave)}, in,
                  interference, side);
  }
  throw input_error("schedule", "'" + schedule + "' cannot be replayed; accepted: interleaved, expert_wave");
}

}  // namespace xs::moe
