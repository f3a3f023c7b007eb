// xstage fit tests: synthetic remote_store.loaded points with a known interference term (the form of
// model/interference.hpp, or a planted break of it), for recovery and interval-coverage tests.
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "xs/report/records.hpp"

namespace xs::fit::testing {

struct PlantedTerm {
  double drain_rate_bps = 52e9;   // R
  double free_slowdown = 1.0;     // s_free
  double free_log_sd = 0.03;      // between-point scatter below the knee
  double wait_s = 60e-6;          // W_ref at K_ref
  double k_ref = 66;
  double k_exponent = 1.5;        // gamma
  double misfit_log_sd = 0.1;     // between-point scatter of the full-path waits
  double rep_log_sd = 0.02;       // repetition noise
  double tile_time_s = 3e-6;      // T0 (L2)
  double free_trend = 0;          // break: s_free + free_trend * rho/R below the knee
  bool half_unslowed = false;     // break: every other full-path point does not slow at all
  std::map<int, double> wait_by_k;  // break: W(K) off the power law (empty: the form's W)
  double true_wait_s(int k) const {
    return wait_by_k.count(k) ? wait_by_k.at(k) : wait_s * std::pow(k / k_ref, k_exponent);
  }
};

inline PointRecord loaded_point(int k, std::uint64_t b, double gap_s, double slowdown, double t0, double issue_bps,
                                double rep_log_sd, std::mt19937_64& rng, const std::string& target = "host") {
  std::normal_distribution<double> z;
  PointRecord p;
  p.spec.suite = Suite::kLoaded;
  p.spec.target = target;
  p.spec.num_producers = k;
  p.spec.bytes_per_producer = b;
  p.spec.gap_s = gap_s;
  p.id = point_id(p.spec);
  std::vector<double> s, base, rate, tile;
  for (int r = 0; r < 5; ++r) {
    const double t = t0 * std::exp(0.005 * z(rng));
    const double sd = slowdown * std::exp(rep_log_sd * z(rng));
    base.push_back(t);
    s.push_back(sd);
    tile.push_back(sd * t);
    rate.push_back(issue_bps * std::exp(0.005 * z(rng)));
  }
  LoadedMeasurement m;
  m.slowdown = summarize(s);
  m.baseline_tile_time_s = summarize(base);
  m.tile_time_s = summarize(tile);
  m.issue_rate_bps = summarize(rate);
  p.loaded = m;
  p.verification = {true, 1, 0};
  return p;
}

// The H100 sweep's shape: K 33/66/132, offered 0.25, 0.5, 2 x R and G = 0 (plus 1.04 R in the knee band).
inline std::vector<PointRecord> planted_sweep(const PlantedTerm& t, std::uint64_t seed, bool with_knee = true) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z;
  std::vector<PointRecord> out;
  const std::uint64_t b = 8192;
  int full_idx = 0;
  for (int k : {33, 66, 132}) {
    std::vector<double> fractions = {0.0, 0.25, 0.5, 2.0};
    if (with_knee) fractions.push_back(1.04);
    for (double f : fractions) {
      const double gap = f == 0 ? 0.0 : k * static_cast<double>(b) / (f * t.drain_rate_bps);
      const double offered = f == 0 ? 1e30 : f * t.drain_rate_bps;
      const double issue = std::min(offered, t.drain_rate_bps);
      double s;
      if (f >= 1.1 || f == 0) {
        const bool unslowed = t.half_unslowed && (full_idx++ % 2 == 1);
        const double w = unslowed ? 0.0 : t.true_wait_s(k) * std::exp(t.misfit_log_sd * z(rng));
        s = t.free_slowdown + w / t.tile_time_s;
      } else if (f <= 0.9) {
        s = (t.free_slowdown + t.free_trend * f) * std::exp(t.free_log_sd * z(rng));
      } else {
        s = t.free_slowdown + 0.3 * t.true_wait_s(k) / t.tile_time_s;  // partly full
      }
      out.push_back(loaded_point(k, b, gap, s, t.tile_time_s, issue, t.rep_log_sd, rng));
    }
  }
  return out;
}

}  // namespace xs::fit::testing
