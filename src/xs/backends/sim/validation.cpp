// xstage sim layer: input checks for the simulator's planted parameters and for point specs (see
// simulator.hpp). Spec field names match the result file and bench::validate_spec.
#include <cmath>
#include <cstdint>
#include <string>

#include "xs/bench/sweep.hpp"
#include "xs/common/error.hpp"
#include "xs/backends/sim/simulator.hpp"

namespace xs::sim {
namespace {

// The simulator keeps per-producer, per-burst state when noise is on: the sweep's caps (bench/sweep.hpp),
// one set for every backend, bound it before anything is allocated.
using bench::kMaxBursts;
using bench::kMaxProducerBursts;
using bench::kMaxProducers;

bool positive_finite(double x) { return std::isfinite(x) && x > 0; }
bool nonnegative_finite(double x) { return std::isfinite(x) && x >= 0; }

}  // namespace

void validate_params(const SimParams& p) {
  if (!positive_finite(p.drain_rate_bps)) throw input_error("sim.drain_rate_bps", "R must be > 0 bytes/s");
  if (!positive_finite(p.capacity_bytes)) throw input_error("sim.capacity_bytes", "Q must be > 0 bytes");
  if (!nonnegative_finite(p.capacity_per_producer_bytes))
    throw input_error("sim.capacity_per_producer_bytes", "must be >= 0 (0: Q is the same for every K)");
  if (!nonnegative_finite(p.issue_overhead_s)) throw input_error("sim.issue_overhead_s", "must be >= 0 s");
  if (!std::isfinite(p.tiss0_ref_s) || !(p.tiss0_ref_s > p.issue_overhead_s))
    throw input_error("sim.tiss0_ref_s", "T_iss^0 at 32 KiB must exceed issue_overhead_s (" +
                                             std::to_string(p.issue_overhead_s) + " s)");
  if (!nonnegative_finite(p.completion_latency_s))
    throw input_error("sim.completion_latency_s", "must be >= 0 s");
  if (!nonnegative_finite(p.noise)) throw input_error("sim.noise", "lognormal sigma must be >= 0");
  if (p.request_bytes < 1) throw input_error("sim.request_bytes", "must be >= 1 byte");
  if (!positive_finite(p.mainloop_tile_s)) throw input_error("sim.mainloop_tile_s", "must be > 0 s");
  if (!nonnegative_finite(p.interference_alpha)) throw input_error("sim.interference_alpha", "must be >= 0");
}

void validate_spec(const PointSpec& spec) {
  if (spec.num_producers < 1 || spec.num_producers > kMaxProducers)
    throw input_error("K", "K=" + std::to_string(spec.num_producers) + " must be in [1, " +
                               std::to_string(kMaxProducers) + "]");
  const int width = spec.store_width_bytes;
  if (width != 4 && width != 8 && width != 16)
    throw input_error("store_width_bytes", std::to_string(width) + " is not a store width; use 4, 8 or 16");
  if (spec.bytes_per_producer == 0 || spec.bytes_per_producer % static_cast<unsigned>(width) != 0)
    throw input_error("B", "B=" + std::to_string(spec.bytes_per_producer) +
                               " bytes must be > 0 and a multiple of the store width " + std::to_string(width));
  if (spec.address_mode == AddressMode::kScattered && spec.bytes_per_producer % kScatterRowBytes != 0)
    throw input_error("B", "B=" + std::to_string(spec.bytes_per_producer) + " bytes: address_mode scattered stores " +
                               std::to_string(kScatterRowBytes) + "-byte rows, so B must be a multiple of " +
                               std::to_string(kScatterRowBytes));
  if (!nonnegative_finite(spec.gap_s)) throw input_error("G", "G must be a finite time >= 0 s");
  if (spec.warmup_bursts < 0) throw input_error("warmup_bursts", "must be >= 0");
  if (spec.num_bursts <= spec.warmup_bursts || spec.num_bursts > kMaxBursts)
    throw input_error("num_bursts", "num_bursts=" + std::to_string(spec.num_bursts) + " must exceed warmup_bursts=" +
                                        std::to_string(spec.warmup_bursts) + " and be <= " +
                                        std::to_string(kMaxBursts));
  if (static_cast<std::uint64_t>(spec.num_producers) * static_cast<std::uint64_t>(spec.num_bursts) > kMaxProducerBursts)
    throw input_error("num_bursts", "K x num_bursts = " + std::to_string(spec.num_producers) + " x " +
                                        std::to_string(spec.num_bursts) + " is over the limit of " +
                                        std::to_string(kMaxProducerBursts) + " per repetition");
  if (spec.repetitions < 1) throw input_error("repetitions", "must be >= 1");
  if (spec.suite == Suite::kLoaded && spec.loaded.injection == Injection::kEpilogue) {
    const LoadedKnobs& k = spec.loaded;
    if (spec.gap_s != 0)
      throw input_error("G", "G=" + std::to_string(spec.gap_s) + " s: injection \"epilogue\" stores after each "
                             "tile, unpaced; G must be 0 (injection \"paced\" bursts every G)");
    if (k.tiles_per_cta < 1 || k.warmup_tiles < 0 || k.warmup_tiles >= k.tiles_per_cta)
      throw input_error("warmup_tiles", "warmup_tiles must be in [0, tiles_per_cta) and tiles_per_cta >= 1");
    if (k.tiles_per_burst < 1 || k.tiles_per_burst > k.tiles_per_cta)
      throw input_error("tiles_per_burst", "tiles_per_burst=" + std::to_string(k.tiles_per_burst) +
                                               " must be in [1, tiles_per_cta=" + std::to_string(k.tiles_per_cta) + "]");
  }
}

}  // namespace xs::sim
