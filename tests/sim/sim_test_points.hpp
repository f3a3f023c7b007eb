// xstage sim tests: spec builders and the paper's equations written out independently of the simulator,
// so a test compares the simulator's mechanics against eqs. 1-7 rather than against itself.
#pragma once
#include <algorithm>
#include <cstdint>

#include "xs/report/records.hpp"
#include "xs/backends/sim/simulator.hpp"

namespace xs::sim::test_points {

inline PointSpec periodic(int num_producers, std::uint64_t bytes_per_producer, double gap_s) {
  PointSpec spec;
  spec.suite = Suite::kPeriodic;
  spec.target = "sim";
  spec.num_producers = num_producers;
  spec.bytes_per_producer = bytes_per_producer;
  spec.gap_s = gap_s;
  return spec;
}

inline PointSpec isolated(int num_producers, std::uint64_t bytes_per_producer) {
  PointSpec spec = periodic(num_producers, bytes_per_producer, 0);
  spec.suite = Suite::kIsolated;
  spec.num_bursts = 1;  // as bench::expand writes isolated points
  spec.warmup_bursts = 0;
  return spec;
}

// T_iss^0 = overhead + B / r, with r chosen so that a 32 KiB burst takes tiss0_ref_s (simulator.hpp).
inline double tiss0_s(const SimParams& p, std::uint64_t bytes_per_producer) {
  return p.issue_overhead_s +
         static_cast<double>(bytes_per_producer) * (p.tiss0_ref_s - p.issue_overhead_s) / 32768.0;
}
inline double drain_horizon_s(const SimParams& p, const PointSpec& s) {  // V / R
  return static_cast<double>(s.volume_bytes()) / p.drain_rate_bps;
}
// Eq. 3: T_iss(G) = max(T_iss^0, V/R - G).
inline double eq3_issue_s(const SimParams& p, const PointSpec& s) {
  return std::max(tiss0_s(p, s.bytes_per_producer), drain_horizon_s(p, s) - s.gap_s);
}
// Eq. 2: T_period(G) = max(T_iss^0 + G, V/R).
inline double eq2_period_s(const SimParams& p, const PointSpec& s) {
  return std::max(tiss0_s(p, s.bytes_per_producer) + s.gap_s, drain_horizon_s(p, s));
}
// Eq. 7: T_iss^iso = max(T_iss^0, (V - Q)/R).
inline double eq7_isolated_s(const SimParams& p, const PointSpec& s, double capacity_bytes) {
  return std::max(tiss0_s(p, s.bytes_per_producer),
                  (static_cast<double>(s.volume_bytes()) - capacity_bytes) / p.drain_rate_bps);
}

inline double rel_err(double measured, double expected) { return (measured - expected) / expected; }

}  // namespace xs::sim::test_points
