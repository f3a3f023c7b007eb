// xstage runtime layer: from one launch's raw timestamps to one sample per quantity (host-side
// aggregation, pure functions). Definitions (paper Table 1 symbols):
//   per producer p, burst b:  d_iss(b,p) = issue_end - start          (SM cycles, same SM)
//   burst T_iss(b)    = max_p d_iss(b,p)                              (the burst ends with its slowest producer)
//   burst T_period(b) = mean_p [start(b+1,p) - start(b,p)]            (start-to-start, T_iss + G at equilibrium)
//   burst T_done(b)   = max_p [fence_end(b,p) - start(b,p)]           (completion mode: issue start -> fence.sc.sys
//                                                                      done, the remote-visible (fence) horizon)
//   sample = median over the steady-state bursts b >= warmup of each, / sm_clock_hz.
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "remote_store/burst.hpp"

namespace xs::runtime {

struct LaunchTimeline {
  std::uint32_t num_bursts = 0;
  std::uint32_t num_producers = 0;
  std::vector<kernels::remote_store::BurstRecord> records;   // [burst][producer]
  std::vector<kernels::remote_store::ProducerClock> clocks;  // [producer]
};

struct LaunchSample {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  double sm_clock_hz = 0;
  double issue_time_s = kNone;       // T_iss
  double period_s = kNone;           // T_period; needs >= 2 steady-state bursts
  double completion_s = kNone;       // completion mode only
  std::uint32_t num_late_producers = 0;  // reached the start barrier after the start time
};

// SM clock of one launch: median over producers of (last - first clock64) / (last - first %globaltimer).
// Throws Error (exit 3) when the window is empty (the timer did not advance).
double derive_sm_clock_hz(const std::vector<kernels::remote_store::ProducerClock>& clocks);

// Throws Error (exit 3) for records the kernel did not write consistently (issue end before start).
LaunchSample aggregate_launch(const LaunchTimeline& timeline, std::uint32_t first_steady_burst, bool completion);

}  // namespace xs::runtime
