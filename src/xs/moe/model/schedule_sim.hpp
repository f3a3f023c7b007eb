// xstage moe host layer: a discrete-event replay of the kernel's own tile schedules (src/xs/kernels/moe/scheduler.cuh,
// the same header the kernel runs) with fixed per-tile durations. Each of G persistent CTAs takes its tiles in
// schedule order; a Linear-2 tile of row block p starts only when every Linear-1 tile of p has finished (the
// kernel's l1_done wait). What it adds to the fluid estimate: the cross-CTA dependency waits a schedule
// creates. An Interleaved instance emits L2(p) once its OWN Linear-1 stream has passed row p + D, while the
// other CTAs that own tiles of row p may still be behind it (each L2 tile they ran delayed their Linear-1
// stream by T_L2): with D too small the CTAs wait on one another in a convoy (measured on the H200 for
// dit_moe at D = 1: ~200 us of dependency spin per L2 tile). Not modelled: the producer's prefetch overlap,
// dispatch waits, per-tile jitter and the host path's load slowdown under outstanding stores.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "xs/moe/point/problem.hpp"

namespace xs::moe {

struct TileDurations {
  double l1_s = 0;        // one Linear-1 tile (mainloop + epilogue as the model sees it)
  double l2_s = 0;        // one Linear-2 tile, its modelled store stall included
};

struct ScheduleSimResult {
  double makespan_s = 0;            // last tile's end (the kernel's span, launch overheads aside)
  double l2_wait_per_cta_s = 0;     // mean over CTAs of the summed L2 dependency waits
  double l2_wait_median_s = 0;      // median wait per L2 tile
  std::uint64_t tiles = 0;          // tiles replayed (every tile of the problem once)
  bool deadlock = false;            // some CTA waits on a row no one will finish (D = 0 on one instance, ...)
};

// Schedule names: "interleaved" (lead_rows = D >= 1; experts_per_wave unused) or "expert_wave" (ExpertWave with
// experts_per_wave >= 1 local experts per wave; lead_rows unused).
ScheduleSimResult simulate_schedule(const MoeProblem& problem, int block_n, int num_ctas, const std::string& schedule,
                                    int lead_rows, const TileDurations& d, int experts_per_wave = 1);

// The smallest D of `candidates` whose simulated makespan is within (1 + tol) of the best candidate's.
struct LeadChoice {
  int lead_rows = 1;
  double makespan_s = 0;          // at lead_rows
  double best_makespan_s = 0;     // over the candidates
  std::vector<std::pair<int, double>> sweep;  // (D, makespan) for every candidate
};
LeadChoice choose_lead_rows(const MoeProblem& problem, int block_n, int num_ctas, const TileDurations& d,
                            const std::vector<int>& candidates, double tol = 0.02);

}  // namespace xs::moe
