// xstage benchmarks: the fit layer's cost on simulated calibrations: fit_calibration (R, T_iss^0, Q with a
// joint 1000-replicate bootstrap) plus validate, on the built-in default sweep (bench::default_calibration)
// and on a ~530-point sweep. Sweeps are simulated once, outside the timed loop. Budget: < 1 s on one core.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "xs/bench/sweep.hpp"
#include "xs/fit/fit.hpp"
#include "xs/backends/sim/simulator.hpp"

namespace {

using xs::PointRecord;
using xs::PointSpec;
using xs::Suite;

constexpr double kNoise = 0.02;  // 2% lognormal jitter: realistic repetition spread for the bootstrap

std::vector<PointRecord> simulate(const std::vector<PointSpec>& specs) {
  xs::sim::SimParams params;
  params.noise = kNoise;
  std::vector<PointRecord> out;
  for (const auto& s : specs) out.push_back(xs::sim::simulate_point(params, s));
  return out;
}

std::vector<PointRecord> default_sweep() {
  std::vector<PointSpec> specs;
  for (const auto& p : xs::bench::expand(xs::bench::default_calibration("host", 717e9))) specs.push_back(p.spec);
  return simulate(specs);
}

std::vector<PointRecord> large_sweep() {
  std::vector<PointSpec> specs;
  auto add = [&](Suite suite, int k, std::uint64_t b, double gap_s) {
    PointSpec s;
    s.suite = suite;
    s.target = "host";
    s.num_producers = k;
    s.bytes_per_producer = b;
    s.gap_s = gap_s;
    s.num_bursts = 24;
    s.warmup_bursts = 6;
    specs.push_back(s);
  };
  const double drain_rate_bps = 717e9;
  // R: zero-gap K x B (5 x 8 = 40 points).
  for (int k : {8, 16, 33, 66, 132})
    for (std::uint64_t b = 4096; b <= 524288; b *= 2) add(Suite::kPeriodic, k, b, 0);
  // Gap sweeps 0 .. 3 V/R in 24 steps at 8 (K,B), each with its local control (8 x 25 x 2 = 400 points).
  const std::pair<int, std::uint64_t> gap_configs[] = {{132, 32768}, {132, 16384}, {132, 131072}, {66, 65536},
                                                       {66, 16384},  {33, 16384},  {33, 131072}, {16, 65536}};
  for (auto [k, b] : gap_configs)
    for (int i = 0; i <= 24; ++i) {
      const double gap_s = 3.0 * k * static_cast<double>(b) / drain_rate_bps * i / 24;
      add(Suite::kPeriodic, k, b, gap_s);
      add(Suite::kLocalControl, k, b, gap_s);
    }
  // Q(K): isolated bursts 1 KiB .. 2 MiB x2 at 4 K (4 x 12 = 48 points).
  for (int k : {16, 33, 66, 132})
    for (std::uint64_t b = 1024; b <= 2097152; b *= 2) add(Suite::kIsolated, k, b, 0);
  return simulate(specs);  // 488 points
}

void run_fit(benchmark::State& state, const std::vector<PointRecord>& points, int resamples) {
  xs::fit::FitOptions options;
  options.bootstrap_resamples = resamples;
  for (auto _ : state) {
    const xs::fit::CalibrationFit fit = xs::fit::fit_calibration(points, options);
    benchmark::DoNotOptimize(xs::fit::validate(points, fit.to_platform_model()));
  }
  state.counters["points"] = static_cast<double>(points.size());
  state.counters["resamples"] = resamples;
}

void BM_fit_default_sweep(benchmark::State& state) {
  static const std::vector<PointRecord> points = default_sweep();
  run_fit(state, points, 1000);
}
void BM_fit_large_sweep(benchmark::State& state) {
  static const std::vector<PointRecord> points = large_sweep();
  run_fit(state, points, static_cast<int>(state.range(0)));
}

}  // namespace

BENCHMARK(BM_fit_default_sweep)->Name("fit.calibration.default_sweep")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_fit_large_sweep)->Name("fit.calibration.large_sweep")->Arg(1000)->Arg(0)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
