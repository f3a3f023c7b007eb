// xstage fit tests: an independent ground-truth generator for the fitter (written apart from src/xs/backends/sim, which
// implements the very model the fitter assumes). A fluid model of X-Stage per burst, plus noise and
// model-breaking scenarios, produces PointRecords whose true (R, Q(K), T_iss^0(K,B)) are known exactly.
//
// Physics (fluid, per stream): outstanding bytes x; a burst injects V = K B over T_iss^0 while the drain
// removes bytes; if x + V - drained(T_iss^0) would exceed Q the burst stalls until x + V - drained(t) = Q
// (then T_iss = t); the gap G drains further, and a path that empties goes idle. With a constant drain
// this is eq. 3 in steady state (T_iss = max(T_iss^0, V/R - G), T_period = max(T_iss^0 + G, V/R)) and eq. 7
// for an isolated burst from idle (T_iss = max(T_iss^0, (V - Q)/R)); it also contains the fill transient
// (the first Q / (V - R T_iss^0) zero-gap bursts issue at T_iss^0), which the fitter must not mistake for R.
//
// Noise: per point, a systematic offset exp(sigma_point Z) on that point's R and T_iss^0 (independent Z:
// one launch configuration runs a little fast or slow for all its repetitions, so between-point scatter
// exceeds repetition scatter); per repetition, a further exp(sigma_rep Z) on each. The planted values are
// the medians. Definitions follow the unified ones: issue_time_s is the mean producer span (periodic: mean
// over steady bursts [warmup, num_bursts)), issue_time_max_s the slowest producer's, period_s the mean
// steady-state period.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "xs/report/records.hpp"

namespace xs::fit::truth {

inline constexpr std::uint64_t kKiB = 1024;
inline constexpr double kMiB = 1048576.0;

// The planted platform. Q(K) grows with K and saturates; T_iss^0 has a fixed part, a per-producer byte
// rate, and a mild K-dependent contention term (shapes the fitter is not told about).
struct TruthParams {
  double drain_rate_bps = 717e9;                 // R (steady state)
  double capacity_max_bytes = 5.3 * kMiB;        // Q(K) = capacity_max K / (K + capacity_half_k)
  double capacity_half_k = 33;
  double tiss0_fixed_s = 0.15e-6;
  double rate_per_producer_bps = 32768 / 0.61e-6;
  double contention_per_132 = 0.10;              // T_iss^0 byte term x (1 + this K/132)
  double producer_spread = 0.10;                 // slowest producer span = T_iss + this T_iss^0
  double uneven_service = 0.15;                  // isolated: share of the backpressure the mean producer escapes

  double capacity_bytes(int k) const { return capacity_max_bytes * k / (k + capacity_half_k); }
  double tiss0_s(int k, std::uint64_t b) const {
    return tiss0_fixed_s + static_cast<double>(b) / rate_per_producer_bps * (1 + contention_per_132 * k / 132.0);
  }
};

// Departures from the model (all off by default: clean fluid eq. 3 / eq. 7 data plus noise).
struct Breakage {
  // Drain ramps up from idle: rate R (1 - ramp_deficit e^{-t/ramp_time_s}), t = time since the path
  // last left idle (stream start, or an isolated burst).
  double ramp_deficit = 0;
  double ramp_time_s = 0;
  // Cached prefix: the first cached_prefix_bytes drained in a periodic stream go cached_speedup x faster
  // (L2 absorption). Isolated bursts are taken as run on a flushed path and stay uncached.
  double cached_prefix_bytes = 0;
  double cached_speedup = 1.6;
  // Soft knee on isolated points: T = (T0^n + D^n)^(1/n), D = [(V - Q)/R]+, instead of max(T0, D).
  double soft_knee_order = 0;
  // A knee outside that family (log-sum-exp): T = s ln(e^(T0/s) + e^(D/s)), s = softplus_knee_scale x T0, D =
  // (V - Q)/R unclamped (negative below Q, so the floor far below the knee stays T0). Its excess over max(T0, D)
  // is s ln 2 at the knee and fades exponentially on both sides.
  double softplus_knee_scale = 0;
  // Absorbing prefix on isolated bursts (the H200 host shows one): the first isolated_prefix_bytes of each
  // isolated burst drain isolated_prefix_speedup x faster, so the drain branch sits below (V - Q)/R by a
  // near-constant amount, as a larger Q would.
  double isolated_prefix_bytes = 0;
  double isolated_prefix_speedup = 2.0;
  // Two capacities on isolated bursts (the H100 host shows it, docs/lab-notes/2026-12-07-night.md): the floor
  // holds up to V = Q (no backpressure below it), but past it the burst's last producer waits behind all but
  // c(V) = Q_tail + (Q - Q_tail) e^(-(V - Q)/w) bytes, Q_tail = tail_capacity_fraction x Q, w = tail_width_fraction
  // x Q: T = max(T0, (V - c(V))/R). Eq. 7's single Q fits neither side: far past the knee the bursts behave as
  // Q_tail, below it as Q. 0: off.
  double tail_capacity_fraction = 0;
  double tail_width_fraction = 0.5;
  // Slow drift of R over the sweep, in measurement order: point i of N runs at R (1 + drift (i/(N-1) - 1/2)),
  // so the planted R is the run's median rate.
  double drain_drift = 0;
};

struct Noise {
  double sigma_point = 0.01;  // per-point systematic (lognormal sigma) on R and on T_iss^0
  double sigma_rep = 0.02;    // per-repetition (lognormal sigma) on R and on T_iss^0
};

inline std::vector<std::uint64_t> geometric_bytes(std::uint64_t lo, std::uint64_t hi, double factor) {
  std::vector<std::uint64_t> out;
  for (double b = static_cast<double>(lo); b <= static_cast<double>(hi) * 1.0001; b *= factor)
    out.push_back(static_cast<std::uint64_t>(std::llround(b / 16.0)) * 16);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The sweep: zero-gap K x B (x num_bursts), gap sweeps of chosen (K,B) over 0 .. gap_span V/R with
// local-memory controls, isolated bursts over V per K.
struct TruthSweep {
  std::vector<int> zero_gap_k = {16, 33, 66, 132};
  std::vector<std::uint64_t> zero_gap_b = geometric_bytes(16 * kKiB, 256 * kKiB, 2);
  std::vector<int> zero_gap_num_bursts = {32};
  std::vector<std::pair<int, std::uint64_t>> gap_sweeps = {{132, 32 * kKiB}, {33, 16 * kKiB}};
  int num_gaps = 24;
  double gap_span = 3.0;
  std::vector<int> isolated_k = {33, 132};
  std::vector<std::uint64_t> isolated_b = geometric_bytes(1 * kKiB, 2048 * kKiB, std::sqrt(2.0));
  int num_bursts = 32, warmup_bursts = 8, repetitions = 5;
};

namespace detail {

// The drain of one stream: cumulative bytes drained and time since the path left idle.
struct DrainState {
  double drained_bytes = 0;
  double busy_s = 0;
};

class Drain {
 public:
  Drain(double rate_bps, const Breakage& br) : r_(rate_bps), br_(br) {
    if (br.ramp_deficit > 0 && br.cached_prefix_bytes > 0)
      throw std::logic_error("truth generator: ramp and cached prefix are separate scenarios");
  }
  // Bytes the drain removes in t seconds from state s if never short of bytes.
  double drained_in(const DrainState& s, double t) const {
    if (br_.ramp_deficit > 0) {
      const double tau = br_.ramp_time_s;
      return r_ * (t - br_.ramp_deficit * tau * std::exp(-s.busy_s / tau) * (1 - std::exp(-t / tau)));
    }
    if (br_.cached_prefix_bytes > s.drained_bytes) {
      const double fast = r_ * br_.cached_speedup;
      const double left = br_.cached_prefix_bytes - s.drained_bytes;
      return t * fast <= left ? t * fast : left + (t - left / fast) * r_;
    }
    return r_ * t;
  }
  // Time to drain `bytes` from state s (inverse of drained_in).
  double time_to_drain(const DrainState& s, double bytes) const {
    if (bytes <= 0) return 0;
    if (br_.ramp_deficit > 0) {  // drained_in is increasing in t: bisect
      double lo = bytes / r_, hi = bytes / (r_ * (1 - br_.ramp_deficit)) + 1e-12;
      for (int i = 0; i < 100; ++i) {
        const double mid = 0.5 * (lo + hi);
        (drained_in(s, mid) < bytes ? lo : hi) = mid;
      }
      return hi;
    }
    if (br_.cached_prefix_bytes > s.drained_bytes) {
      const double fast = r_ * br_.cached_speedup;
      const double left = br_.cached_prefix_bytes - s.drained_bytes;
      return bytes <= left ? bytes / fast : left / fast + (bytes - left) / r_;
    }
    return bytes / r_;
  }
  static void advance(DrainState& s, double t, double bytes) {
    s.busy_s += t;
    s.drained_bytes += bytes;
  }

 private:
  double r_;
  Breakage br_;
};

struct BurstResult {
  double issue_s = 0, period_s = 0;
};

// Runs num_bursts bursts of one stream from an idle path; fills one entry per burst.
inline std::vector<BurstResult> run_stream(double tiss0_s, double volume_bytes, double capacity_bytes, double gap_s,
                                           int num_bursts, const Drain& drain) {
  std::vector<BurstResult> out;
  DrainState s;
  double x = 0;  // outstanding bytes
  for (int b = 0; b < num_bursts; ++b) {
    if (x <= 0) s.busy_s = 0;  // idle path: the ramp starts over
    BurstResult r;
    const double d0 = drain.drained_in(s, tiss0_s);
    if (x + volume_bytes - d0 <= capacity_bytes) {
      r.issue_s = tiss0_s;
      const double d = std::min(d0, x + volume_bytes);
      x += volume_bytes - d;
      Drain::advance(s, tiss0_s, d);
    } else {
      const double need = x + volume_bytes - capacity_bytes;
      r.issue_s = drain.time_to_drain(s, need);
      x = capacity_bytes;
      Drain::advance(s, r.issue_s, need);
    }
    if (gap_s > 0) {
      const double dg = drain.drained_in(s, gap_s);
      if (dg >= x) {
        Drain::advance(s, gap_s, x);
        x = 0;
      } else {
        x -= dg;
        Drain::advance(s, gap_s, dg);
      }
    }
    r.period_s = r.issue_s + gap_s;
    out.push_back(r);
  }
  return out;
}

}  // namespace detail

class TruthGenerator {
 public:
  TruthGenerator(TruthParams params, Noise noise, Breakage breakage, std::uint64_t seed)
      : p_(params), noise_(noise), br_(breakage), rng_state_(seed) {}

  // One record: per-point offsets, then per-repetition jitter, each repetition a fresh stream.
  PointRecord point(const PointSpec& spec) {
    const int k = spec.num_producers;
    const double v = static_cast<double>(spec.volume_bytes());
    const double t0_true = p_.tiss0_s(k, spec.bytes_per_producer);
    const double q = p_.capacity_bytes(k);
    const double drift = num_points_ > 1 ? br_.drain_drift * (double(point_idx_) / (num_points_ - 1) - 0.5) : 0.0;
    const double point_r = (1 + drift) * std::exp(noise_.sigma_point * z_());
    const double point_t = std::exp(noise_.sigma_point * z_());
    std::vector<double> issue, issue_max, period;
    for (int rep = 0; rep < spec.repetitions; ++rep) {
      const double r = p_.drain_rate_bps * point_r * std::exp(noise_.sigma_rep * z_());
      const double t0 = t0_true * point_t * std::exp(noise_.sigma_rep * z_());
      double t_iss = 0, t_period = 0;
      if (spec.suite == Suite::kLocalControl) {
        t_iss = t0;
        t_period = t0 + spec.gap_s;
      } else if (spec.suite == Suite::kIsolated) {
        Breakage iso = br_;
        iso.cached_prefix_bytes = br_.isolated_prefix_bytes;  // flushed path, unless it absorbs a prefix
        iso.cached_speedup = br_.isolated_prefix_speedup;
        t_iss = detail::run_stream(t0, v, q, 0, 1, detail::Drain(r, iso)).front().issue_s;
        if (br_.soft_knee_order > 0) {
          const double d = std::max(0.0, (v - q) / r), n = br_.soft_knee_order;
          t_iss = std::pow(std::pow(t0, n) + std::pow(d, n), 1 / n);
        }
        if (br_.tail_capacity_fraction > 0 && v > q) {
          const double tail = br_.tail_capacity_fraction * q, w = br_.tail_width_fraction * q;
          const double c = tail + (q - tail) * std::exp(-(v - q) / w);
          t_iss = std::max(t0, (v - c) / r);
        }
        if (br_.softplus_knee_scale > 0) {
          const double d = (v - q) / r, s = br_.softplus_knee_scale * t0, hi = std::max(t0, d);
          t_iss = hi + s * std::log(std::exp((t0 - hi) / s) + std::exp((d - hi) / s));
        }
      } else {
        const auto bursts = detail::run_stream(t0, v, q, spec.gap_s, spec.num_bursts, detail::Drain(r, br_));
        double sum_iss = 0, sum_period = 0;
        int n = 0;
        for (int b = spec.warmup_bursts; b < spec.num_bursts; ++b, ++n) {
          sum_iss += bursts[b].issue_s;
          sum_period += bursts[b].period_s;
        }
        t_iss = sum_iss / n;
        t_period = sum_period / n;
      }
      double t_iss_max = t_iss + p_.producer_spread * t0;
      if (spec.suite == Suite::kIsolated) {
        // Eq. 7 describes the burst: the drain is work-conserving, so the burst's span (its slowest
        // producer) is the fluid issue time, no shorter than the floor plus the producers' start spread.
        // Producers are served unevenly under backpressure, so their mean span lags the burst by a share
        // of the backpressure (on the H200 the mean is 0.75-0.95 of the span on long bursts).
        t_iss_max = std::max(t_iss, t0 * (1 + p_.producer_spread));
        t_iss = t0 + (1 - p_.uneven_service) * std::max(0.0, t_iss_max - t0 * (1 + p_.producer_spread));
      }
      issue.push_back(t_iss);
      issue_max.push_back(t_iss_max);
      period.push_back(t_period);
    }
    PointRecord rec;
    rec.spec = spec;
    rec.id = point_id(spec);
    rec.issue_time_s = summarize(issue);
    rec.issue_time_max_s = summarize(issue_max);
    if (spec.suite != Suite::kIsolated) rec.period_s = summarize(period);
    rec.sm_clock_hz = 1.98e9;
    rec.verification.checked = true;
    rec.verification.bytes_checked = spec.volume_bytes();
    return rec;
  }

  std::vector<PointRecord> sweep(const TruthSweep& sw) {
    std::vector<PointRecord> out;
    const std::vector<PointSpec> all = specs(sw);
    num_points_ = static_cast<int>(all.size());
    for (point_idx_ = 0; point_idx_ < num_points_; ++point_idx_) out.push_back(point(all[point_idx_]));
    num_points_ = 0;
    return out;
  }

  std::vector<PointSpec> specs(const TruthSweep& sw) const {
    std::vector<PointSpec> out;
    auto add = [&](Suite suite, int k, std::uint64_t b, double gap_s, int num_bursts) {
      PointSpec s;
      s.suite = suite;
      s.target = suite == Suite::kLocalControl ? "local" : "host";
      s.num_producers = k;
      s.bytes_per_producer = b;
      s.gap_s = gap_s;
      s.num_bursts = suite == Suite::kIsolated ? 1 : num_bursts;
      s.warmup_bursts = suite == Suite::kIsolated ? 0 : sw.warmup_bursts;
      s.repetitions = sw.repetitions;
      out.push_back(s);
    };
    for (int n : sw.zero_gap_num_bursts)
      for (int k : sw.zero_gap_k)
        for (std::uint64_t b : sw.zero_gap_b) add(Suite::kPeriodic, k, b, 0, n);
    for (auto [k, b] : sw.gap_sweeps) {
      const double horizon_s = static_cast<double>(k) * static_cast<double>(b) / p_.drain_rate_bps;
      // G = 0 of a (K,B) already in the zero-gap grid is not measured twice.
      const bool in_grid = std::count(sw.zero_gap_k.begin(), sw.zero_gap_k.end(), k) &&
                           std::count(sw.zero_gap_b.begin(), sw.zero_gap_b.end(), b);
      for (int g = 0; g <= sw.num_gaps; ++g) {
        const double gap_s = sw.gap_span * horizon_s * g / sw.num_gaps;
        if (g > 0 || !in_grid) add(Suite::kPeriodic, k, b, gap_s, sw.num_bursts);
        add(Suite::kLocalControl, k, b, gap_s, sw.num_bursts);
      }
    }
    for (int k : sw.isolated_k)
      for (std::uint64_t b : sw.isolated_b) add(Suite::kIsolated, k, b, 0, 1);
    return out;
  }

  // Noise-free isolated issue time of eq. 7 (for picking points relative to the true knee).
  double isolated_issue_s(int k, std::uint64_t b) const {
    const double v = static_cast<double>(k) * static_cast<double>(b);
    return std::max(p_.tiss0_s(k, b), (v - p_.capacity_bytes(k)) / p_.drain_rate_bps);
  }
  const TruthParams& params() const { return p_; }

 private:
  TruthParams p_;
  Noise noise_;
  Breakage br_;
  // Own splitmix64 + Box-Muller: the same draws on every standard library (std::normal_distribution is
  // implementation-defined), so fixed seeds give the same datasets everywhere.
  std::uint64_t rng_state_;
  int point_idx_ = 0, num_points_ = 0;  // position in sweep() (drift); 0 points: no drift
  std::uint64_t next_u64_() {
    std::uint64_t x = (rng_state_ += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  double z_() {
    const double u1 = (static_cast<double>(next_u64_() >> 11) + 0.5) * 0x1.0p-53;  // (0, 1)
    const double u2 = static_cast<double>(next_u64_() >> 11) * 0x1.0p-53;
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

// The true knee volume of eq. 7 for K: smallest V with (V - Q)/R >= T_iss^0(K, V/K) (bisection in B).
inline double true_knee_volume_bytes(const TruthParams& p, int k) {
  double lo = 1, hi = 1e12;
  for (int i = 0; i < 200; ++i) {
    const double b = std::sqrt(lo * hi);
    const double v = k * b;
    const double t0 = p.tiss0_fixed_s + b / p.rate_per_producer_bps * (1 + p.contention_per_132 * k / 132.0);
    ((v - p.capacity_bytes(k)) / p.drain_rate_bps >= t0 ? hi : lo) = b;
  }
  return k * hi;
}

}  // namespace xs::fit::truth
