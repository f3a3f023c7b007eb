// xstage moe model layer: the MegaMoE whole-kernel time model (issue 28 item 3). The discrete-event replay of
// the kernel's own tile schedules (src/xs/kernels/moe/scheduler.cuh, as schedule_sim.hpp) with, per tile:
//   - its compute-only mainloop time (T_L1, T_L2: the local control's tile times or a GEMM rate),
//   - its dependency wait (an L2 tile of row block p starts after every L1 tile of p),
//   - the interference slowdown s(load) of model/interference.hpp, evaluated at the tile's start from the load
//     the Combine stores put on the remote path at that time: the offered rate (each CTA whose previous tile
//     was a Linear-2 tile stores that tile's remote Combine rows during its current tile, at bytes / its
//     compute-only duration) and the outstanding bytes q(t),
//   - the drain of the Combine stores through the path (Burst-Gap: a fluid queue drained at R, capacity Q; an
//     issue that would pass Q waits until the queue has room). The kernel ends at the later of the last tile's
//     end and the last byte's drain (its system-scope fence).
// Plain data in, plain structs out; no file reading. Cost: O(tiles log K_SM) per replay.
// Not modelled: T_iss^0 (the issue time of an unloaded burst: microseconds per L2 tile and overlapped by the
// next mainloop), the producer's prefetch overlap, dispatch waits, per-tile jitter, launch and exit overheads
// (a transfer prediction carries those in the local control's measured time).
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "xs/model/slowdown_source.hpp"
#include "xs/moe/point/problem.hpp"

namespace xs::moe {

using model::no_interference;
using model::slowdown_source_of;
using model::SlowdownSource;  // model/slowdown_source.hpp

// Which side of the slowdown bracket a replay uses.
enum class BracketSide { kLow, kMid, kHigh };

struct TimeModelInputs {
  double l1_s = 0;            // T_L1: one Linear-1 tile's compute-only mainloop (+ epilogue) time
  double l2_s = 0;            // T_L2: one Linear-2 tile's
  double drain_rate_bps = 0;  // R of the remote path; 0: no remote path (local control: no queue, no load)
  double capacity_bytes = std::numeric_limits<double>::infinity();  // Q(K_SM); +inf where not identified
  int elem_bytes = 2;         // Combine element size (bf16 in both precisions)
  bool operands_in_l2 = true; // the LoadState's working-set flag
  int l1_k_blocks = 0;        // 64-wide k-blocks one L1 tile loads (h / 64); 0: as the term's calibration
  int l2_k_blocks = 0;        // the same for L2 (I / 64)
};

struct TimeModelResult {
  bool computed = false;
  std::string why_not;              // "interference not calibrated: ..." where !computed
  double kernel_s = 0;              // max(compute_end_s, drain_end_s)
  double compute_end_s = 0;         // last tile's end
  double drain_end_s = 0;           // last remote byte drained (0 without a remote path)
  double remote_bytes = 0;          // Combine bytes through the remote path
  double l2_wait_per_cta_s = 0;     // mean over CTAs of the summed L2 dependency waits
  double capacity_wait_per_cta_s = 0;  // mean over CTAs of the summed waits for room in Q
  double slowdown_extra_per_cta_s = 0; // mean over CTAs of the summed (s - 1) x tile time
  double mean_slowdown_l1 = 1, mean_slowdown_l2 = 1;  // tile-count means of s
  double peak_outstanding_bytes = 0;
  double mean_offered_rate_l2_bps = 0;  // offered rate seen by L2 tiles (mean over them)
  std::uint64_t tiles = 0;
  bool deadlock = false;
  // Loads at which the term was evaluated outside what it was calibrated on (an extrapolation), and why (empty:
  // none). A time that rests on them is no point prediction: callers report it as not decided.
  int term_outside_loads = 0;
  std::string term_outside_calibration;
  // Loads below the term's calibrated range (only bracketed there) and the most they can add, summed over every
  // tile (an upper bound of their effect on the kernel time).
  int term_below_loads = 0;
  double term_below_extra_s = 0;
};

// schedule: "interleaved" (lead_rows = D >= 1) or "expert_wave" (experts_per_wave >= 1). input_error for bad
// arguments (as simulate_schedule, plus R < 0, Q <= 0, elem_bytes < 1). A source whose status is not
// kIdentified gives computed = false with its reason, except when there is no remote path (R = 0), where no
// load exists and the term is not evaluated.
TimeModelResult time_model(const MoeProblem& problem, int block_n, int num_ctas, const std::string& schedule,
                           int lead_rows, int experts_per_wave, const TimeModelInputs& in,
                           const SlowdownSource& interference, BracketSide side = BracketSide::kMid);

// Remote Combine bytes of one L2 tile of each row block: valid pool rows whose dst rank is not the emulated
// rank x block_n x elem_bytes.
std::vector<double> l2_tile_remote_bytes(const MoeProblem& problem, int block_n, int elem_bytes);

}  // namespace xs::moe
