// xstage backends/gpu layer: from one launch's raw timestamps to one sample per quantity (host-side
// aggregation, pure functions). The definitions are meta.definitions (src/xs/report/meta.cpp), which the
// simulator follows too; here with d(b,p) = issue_end - start of producer p's burst b (SM cycles, same SM):
//   Periodic bursts. Producers are not re-synchronized after the start barrier, and under backpressure
//   the path serves them unevenly, so they drift apart. The steady state is the window in which every
//   producer is past its warm-up and none has started its last burst:
//     W = [max_p start(w,p), min_p start(N-1,p)],  pairs (b,p), b <= N-2, with start(b,p) in W
//   (selecting by start, not by the whole pair lying in W, keeps long stalls from being left out).
//     T_iss     = mean over the pairs of d(b,p)                       (what a producer sees per burst)
//     T_period  = mean over the pairs of start(b+1,p) - start(b,p)    (= T_iss + G exactly, per pair)
//   Averaging over (b,p) pairs of that window keeps flow conservation (K V bytes per T_period) however
//   unfair the service; if no pair fits (extreme drift) all pairs b >= w are used.
//     T_iss,max = median over b >= w of max_p d(b,p)                  (the slowest producer's span)
//   Isolated burst (N = 1, producers aligned by the start barrier): T_iss = mean_p d(0,p) (the same
//   per-producer quantity as periodic), T_iss,max = max_p d(0,p) (the aggregate burst, eq. 7's T_iss^iso).
//   Completion mode: T_done(b) = max_p [fence_end(b,p) - start(b,p)] (issue start -> fence.sc.sys done,
//   the remote-visible (fence) horizon), median over b >= w.
// Every value is divided by the launch's sm_clock_hz.
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "xs/kernels/remote_store/burst.hpp"

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
  double issue_time_max_s = kNone;   // slowest producer's span (both suites)
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
