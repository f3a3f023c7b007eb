// xstage sim layer: a discrete-event model of K producers issuing B-byte bursts into a path with drain
// rate R, outstanding capacity Q, a per-producer issue rate, optional completion latency and seeded noise.
// It produces the same PointRecord as the GPU backend, so the whole calibration runs without a GPU.
#pragma once
#include <cstdint>
#include <memory>

#include "bench/backend.hpp"
#include "report/records.hpp"

namespace xs::sim {

// Planted platform. The backpressure-free issue time of a burst is
//   T_iss^0(K, B) = issue_overhead_s + B / issue_rate_per_producer_bps
// (each producer injects its own B bytes at its own rate; producers run concurrently). By default the
// per-producer rate is derived from tiss0_ref_s so that a B = 32 KiB burst issues in tiss0_ref_s.
struct SimParams {
  double drain_rate_bps = 717e9;          // R
  double capacity_bytes = 4.25 * 1048576; // Q (same for every K unless capacity_per_producer_bytes > 0)
  double capacity_per_producer_bytes = 0; // if > 0: Q(K) = min(capacity_bytes, K * this)
  double tiss0_ref_s = 0.76e-6;           // T_iss^0 at B = kRefBytesPerProducer
  double issue_overhead_s = 0.0;          // fixed part of T_iss^0 per burst
  double completion_latency_s = 0.0;      // T_lat: drained byte -> remote-visible
  double noise = 0.0;                     // relative jitter (lognormal sigma) on issue rate and drain rate
  std::uint64_t seed = 1;
  int request_bytes = 512;                // granularity of simulated requests
};
inline constexpr std::uint64_t kRefBytesPerProducer = 32768;

double issue_rate_per_producer_bps(const SimParams& params);
double backpressure_free_issue_time_s(const SimParams& params, std::uint64_t bytes_per_producer);
double capacity_for(const SimParams& params, int num_producers);

// Runs one point; deterministic for a given (params.seed, spec).
PointRecord simulate_point(const SimParams& params, const PointSpec& spec);

std::unique_ptr<Backend> make_sim_backend(const SimParams& params);

}  // namespace xs::sim
