// xstage sim layer: a discrete-event model of K producers issuing B-byte bursts into a path with drain
// rate R, outstanding capacity Q, a per-producer issue rate, optional completion latency and seeded noise.
// It produces the same PointRecord as the GPU backend, so the whole calibration runs without a GPU.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "xs/bench/backend.hpp"
#include "xs/report/records.hpp"

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
  // The loaded suite (sim/loaded.cpp). The simulator's assumption, not a measured law: a tile of the
  // mainloop beside the stores takes mainloop_tile_s x (1 + interference_alpha x q / Q(K)), q the outstanding
  // volume averaged over the tile; 0 disables the term (a planted absence).
  double mainloop_tile_s = 3e-6;          // per-tile mainloop time without stores (rate 0)
  double interference_alpha = 0.5;
};
inline constexpr std::uint64_t kRefBytesPerProducer = 32768;

// issue_rate = kRefBytesPerProducer / (tiss0_ref_s - issue_overhead_s), so T_iss^0(32 KiB) = tiss0_ref_s.
double issue_rate_per_producer_bps(const SimParams& params);
double backpressure_free_issue_time_s(const SimParams& params, std::uint64_t bytes_per_producer);
// Planted Q(K). The simulated path holds whole requests: floor(Q(K) / request_bytes) of them.
double capacity_for(const SimParams& params, int num_producers);

// (Additive.) Input checks, throwing xs::input_error naming the field: SimParams fields are named
// "sim.<field>"; spec fields use the result-file names ("K", "B", "G", "store_width_bytes", "num_bursts",
// "warmup_bursts", "repetitions"), as bench::validate_spec does.
void validate_params(const SimParams& params);
void validate_spec(const PointSpec& spec);

// Runs one point; deterministic for a given (params.seed, spec). Validates both first.
// What is measured follows meta.definitions (src/xs/report/meta.cpp), the same as the GPU backend, from
// per-producer clocks as the GPU kernel reads them (start_p(b) = the producer's clock when it begins
// burst b, end_p(b) = when its last store of burst b is accepted; start_p(num_bursts) = end of its last gap):
//   issue_time_s      periodic: mean of end_p(b) - start_p(b) over the steady-state window's producer-bursts;
//                     isolated: mean over producers of the one burst's spans
//   issue_time_max_s  median over bursts b >= warmup of max_p (end_p(b) - start_p(b)) (isolated: that max)
//   period_s          periodic: mean over the window's producer-bursts of start_p(b+1) - start_p(b)
//   completion(b)   = (last byte of burst b drained, FIFO) + completion_latency_s - min_p start_p(b)
// Suites: periodic = each producer runs num_bursts x (issue B bytes, busy gap G) with no barrier between
// producers. isolated = num_bursts bursts, each into an empty path (recovery assumed); period samples
// stay empty. local_control, or target "local" = the same loop with no drain limit and no capacity (and
// no completion latency), so T_iss = T_iss^0 for every G.
// SimParams.noise > 0 draws, per repetition, R x exp(noise Z) and, per producer and burst, the issue rate
// x exp(noise Z) (Z standard normal, so the planted values are the medians). store_width_bytes,
// threads_per_producer, producer_kind and address_mode are validated but do not change the simulation:
// the model has no L2 and no addresses, so fresh, same and scattered (B a multiple of 256) behave alike.
PointRecord simulate_point(const SimParams& params, const PointSpec& spec);

// Suite loaded (simulate_point delegates here). K CTAs start together; each runs tiles_per_cta tiles while
// its storers issue bursts of B bytes at the per-producer issue rate (T_iss^0), burst b no earlier than b G
// (G = 0: back to back), until the mainloop ends. Injection enters a fluid path (drain R while q > 0,
// capacity Q(K): a full path admits only what drains); target local or suite local_control: no limit, q = 0.
// Tile j of every CTA takes base x (1 + interference_alpha x mean q over the tile / Q(K)), base =
// mainloop_tile_s x exp(noise Z) per repetition, the baseline its own draw. The working set, the mainloop kind,
// the store pattern and the storer threads do not change the simulation. Time advances in steps of base/256.
PointRecord simulate_loaded_point(const SimParams& params, const PointSpec& spec);

// The seed rank `rank` of a run simulates with: its own noise stream, so that ranks differ as GPUs do
// (rank 0 keeps `seed`: a one-rank run is unchanged).
std::uint64_t rank_seed(std::uint64_t seed, int rank);

// A planted failure for the multi-rank tests (docs/multi-gpu.md), read from XS_SIM_FAULT =
// "<rank>:<point>:<mode>": rank <rank> fails when it starts its <point>-th measured point (1-based, counted per
// process). Modes: throw (an xs::Error, exit 3, as a CUDA failure), exit (the process dies: _Exit(3), as a
// crashed driver), hang (sleeps, as a stuck kernel, until killed or, on the rank that takes the stop signals, abandoned
// like any long point kStopGraceS after a SIGINT/SIGTERM).
struct SimFault {
  int rank = -1;  // -1: none
  std::size_t point = 0;
  std::string mode;
};
// Parses XS_SIM_FAULT's text ("" -> none); input_error naming XS_SIM_FAULT and the accepted form otherwise.
SimFault parse_sim_fault(const std::string& text);

// Backend "sim": targets "sim" and "host" are the planted path, "local" is the unlimited path; any other
// target is unavailable ("target X does not exist in the simulator"). Validates params at construction.
// `rank` is the run's rank (bench/rank_comm.hpp): it simulates with rank_seed(params.seed, rank), and
// describe() names the rank and that seed; XS_SIM_FAULT plants a failure (see SimFault).
std::unique_ptr<Backend> make_sim_backend(const SimParams& params, int rank = 0);

}  // namespace xs::sim
