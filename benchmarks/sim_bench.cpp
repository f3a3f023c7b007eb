// xstage benchmarks: simulator throughput on a representative calibration sweep (~300 points: zero-gap
// K/B decompositions, gap sweeps, isolated knees, local control; K up to 132, B up to 512 KiB, 32 bursts,
// 5 repetitions), noiseless and with noise (noise makes every producer its own event source).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "xs/backends/sim/simulator.hpp"

namespace {

using xs::PointSpec;
using xs::Suite;

PointSpec make_spec(Suite suite, int num_producers, std::uint64_t bytes_per_producer, double gap_s) {
  PointSpec spec;
  spec.suite = suite;
  spec.target = suite == Suite::kLocalControl ? "local" : "sim";
  spec.num_producers = num_producers;
  spec.bytes_per_producer = bytes_per_producer;
  spec.gap_s = gap_s;
  if (suite == Suite::kIsolated) {
    spec.num_bursts = 1;
    spec.warmup_bursts = 0;
  }
  return spec;
}

std::vector<PointSpec> representative_sweep() {
  const std::pair<int, std::uint64_t> gap_configs[] = {{132, 32768}, {66, 65536}, {33, 16384}, {132, 524288}};
  std::vector<PointSpec> points;
  const double drain_rate_bps = xs::sim::SimParams{}.drain_rate_bps;
  // R: zero-gap periodic over K x B (5 x 8 = 40 points).
  for (int k : {8, 16, 33, 66, 132})
    for (std::uint64_t b = 4096; b <= 524288; b *= 2) points.push_back(make_spec(Suite::kPeriodic, k, b, 0));
  // Gap sweeps 0 .. 3 V/R in 24 steps at 4 (K, B) configurations (4 x 25 = 100 points).
  for (auto [k, b] : gap_configs) {
    const double horizon_s = k * static_cast<double>(b) / drain_rate_bps;
    for (int i = 0; i <= 24; ++i) points.push_back(make_spec(Suite::kPeriodic, k, b, 3 * horizon_s * i / 24));
  }
  // Q(K): isolated bursts, 1 KiB .. 512 KiB x2 at 5 K values (5 x 10 = 50 points).
  for (int k : {8, 16, 33, 66, 132})
    for (std::uint64_t b = 1024; b <= 524288; b *= 2) points.push_back(make_spec(Suite::kIsolated, k, b, 0));
  // Local control of the gap sweeps (4 x 25 = 100 points).
  for (auto [k, b] : gap_configs) {
    const double horizon_s = k * static_cast<double>(b) / drain_rate_bps;
    for (int i = 0; i <= 24; ++i) points.push_back(make_spec(Suite::kLocalControl, k, b, 3 * horizon_s * i / 24));
  }
  for (auto& p : points) p.completion = p.suite != Suite::kLocalControl;
  return points;  // 290 points
}

void run_sweep(benchmark::State& state, double noise) {
  xs::sim::SimParams params;
  params.noise = noise;
  const std::vector<PointSpec> points = representative_sweep();
  for (auto _ : state) {
    for (const auto& spec : points) benchmark::DoNotOptimize(xs::sim::simulate_point(params, spec));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(points.size()));
  state.counters["points"] = static_cast<double>(points.size());
}

void BM_sim_sweep_noiseless(benchmark::State& state) { run_sweep(state, 0.0); }
void BM_sim_sweep_noise3pct(benchmark::State& state) { run_sweep(state, 0.03); }

// The heaviest single point: K producers, 512 KiB each, zero gap, noise on.
void BM_sim_point_noisy(benchmark::State& state) {
  xs::sim::SimParams params;
  params.noise = 0.03;
  const PointSpec spec = make_spec(Suite::kPeriodic, static_cast<int>(state.range(0)), 524288, 0);
  for (auto _ : state) benchmark::DoNotOptimize(xs::sim::simulate_point(params, spec));
}

}  // namespace

BENCHMARK(BM_sim_sweep_noiseless)->Name("sim.sweep.noiseless")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sim_sweep_noise3pct)->Name("sim.sweep.noise3pct")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_sim_point_noisy)->Name("sim.point.noisy")->Arg(33)->Arg(132)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
