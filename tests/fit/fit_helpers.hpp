// xstage fit tests: builders for exact synthetic records (straight from eqs. 2, 3, 7) and for calibration
// sweeps run through the simulator.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "xs/model/burst_gap.hpp"
#include "xs/report/records.hpp"
#include "xs/backends/sim/simulator.hpp"

namespace xs::fit::testing {

inline constexpr std::uint64_t kKiB = 1024;
inline constexpr double kMiB = 1048576.0;

// A record whose every repetition measured exactly `issue_s` / `period_s`.
inline PointRecord exact_point(Suite suite, int k, std::uint64_t b, double gap_s, double issue_s, double period_s,
                               const std::string& target = "host") {
  PointRecord p;
  p.spec.suite = suite;
  p.spec.target = target;
  p.spec.num_producers = k;
  p.spec.bytes_per_producer = b;
  p.spec.gap_s = gap_s;
  p.id = point_id(p.spec);
  p.issue_time_s = summarize(std::vector<double>(5, issue_s));
  if (suite != Suite::kIsolated) p.period_s = summarize(std::vector<double>(5, period_s));
  return p;
}

// Planted platform for exact data: T_iss^0(K,B) = overhead + B / rate_per_producer (concurrent producers).
struct Planted {
  double drain_rate_bps = 717e9;              // R
  double capacity_bytes = 4.25 * kMiB;        // Q
  double rate_per_producer_bps = 32768 / 0.76e-6;
  double overhead_s = 0;
  double tiss0_s(std::uint64_t b) const { return overhead_s + static_cast<double>(b) / rate_per_producer_bps; }
};

inline std::vector<std::uint64_t> geometric_bytes(std::uint64_t lo, std::uint64_t hi, double factor) {
  std::vector<std::uint64_t> out;
  for (double b = static_cast<double>(lo); b <= static_cast<double>(hi) * 1.0001; b *= factor)
    out.push_back(static_cast<std::uint64_t>(std::llround(b / 16.0)) * 16);  // a multiple of the store width
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The calibration sweep the tests use, shaped like bench::default_calibration (zero-gap K/B grid, two gap
// sweeps spanning 0 .. 3 V/R_guess, isolated bursts over V, local control), with a finer isolated grid.
struct SweepShape {
  std::vector<int> zero_gap_k = {16, 33, 66, 132};
  std::vector<std::uint64_t> zero_gap_b = geometric_bytes(16 * kKiB, 256 * kKiB, 2);
  std::vector<std::pair<int, std::uint64_t>> gap_sweeps = {{132, 32 * kKiB}, {33, 16 * kKiB}};
  int num_gaps = 24;
  std::vector<int> isolated_k = {33, 132};
  std::vector<std::uint64_t> isolated_b = geometric_bytes(1 * kKiB, 2048 * kKiB, std::sqrt(2.0));
  int num_bursts = 12, warmup_bursts = 4, repetitions = 5;
};

inline std::vector<PointSpec> calibration_specs(const SweepShape& shape, double drain_rate_guess_bps,
                                                const std::string& target = "sim") {
  std::vector<PointSpec> specs;
  auto add = [&](Suite suite, int k, std::uint64_t b, double gap_s) {
    PointSpec s;
    s.suite = suite;
    s.target = target;
    s.num_producers = k;
    s.bytes_per_producer = b;
    s.gap_s = gap_s;
    s.num_bursts = shape.num_bursts;
    s.warmup_bursts = shape.warmup_bursts;
    s.repetitions = shape.repetitions;
    specs.push_back(s);
  };
  for (int k : shape.zero_gap_k)
    for (std::uint64_t b : shape.zero_gap_b) add(Suite::kPeriodic, k, b, 0);
  for (auto [k, b] : shape.gap_sweeps) {
    const double horizon_s = static_cast<double>(k) * static_cast<double>(b) / drain_rate_guess_bps;
    for (int g = 0; g <= shape.num_gaps; ++g) {
      add(Suite::kPeriodic, k, b, 3.0 * horizon_s * g / shape.num_gaps);
      add(Suite::kLocalControl, k, b, 3.0 * horizon_s * g / shape.num_gaps);
    }
  }
  for (int k : shape.isolated_k)
    for (std::uint64_t b : shape.isolated_b) add(Suite::kIsolated, k, b, 0);
  return specs;
}

inline std::vector<PointRecord> simulate(const sim::SimParams& params, const std::vector<PointSpec>& specs) {
  std::vector<PointRecord> out;
  out.reserve(specs.size());
  for (const auto& s : specs) out.push_back(sim::simulate_point(params, s));
  return out;
}

}  // namespace xs::fit::testing
