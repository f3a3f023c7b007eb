// xstage sim layer: the loaded suite in the simulator (see simulate_loaded_point in simulator.hpp): a fluid
// outstanding-volume queue fed by paced bursts, and a mainloop whose tiles slow down with what is outstanding.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "xs/common/error.hpp"
#include "xs/backends/sim/simulator.hpp"

namespace xs::sim {
namespace {

constexpr int kStepsPerTile = 256;

// FNV-1a over the point's key (every spec field, the loaded knobs included): each point its own noise stream.
std::uint64_t key_hash(const PointSpec& spec) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : point_key(spec)) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

struct LoadedRun {
  std::vector<double> tile_s;                      // tiles j >= warmup_tiles
  std::vector<double> burst_start_s, burst_end_s;  // complete bursts
  double issued_bytes = 0, mainloop_span_s = 0, drain_tail_s = 0;
};

// One launch with stores: all K CTAs alike (the noise is per repetition), so one CTA stands for all.
LoadedRun run_loaded(const PointSpec& spec, double base_s, double alpha, double issue_bps, double drain_bps,
                     double capacity_bytes, bool unlimited) {
  const double k = spec.num_producers;
  const double b_bytes = static_cast<double>(spec.bytes_per_producer);
  const double dt = base_s / kStepsPerTile;
  LoadedRun out;
  double t = 0, q = 0, progress = 0, tile_start = 0, remaining = 0;
  bool issuing = false;
  int bursts = 0, tile = 0;
  while (tile < spec.loaded.tiles_per_cta) {
    if (!issuing && bursts < spec.num_bursts && t + 1e-15 >= bursts * spec.gap_s) {
      issuing = true;
      remaining = b_bytes;
      out.burst_start_s.push_back(t);
    }
    double inject = 0;
    if (issuing) {
      const double want = k * issue_bps * dt;
      const double allowed = unlimited ? want : std::min(want, std::max(0.0, capacity_bytes - q) + drain_bps * dt);
      inject = std::min(allowed, k * remaining);
      remaining -= inject / k;
      if (remaining <= 1e-9 * b_bytes) {
        issuing = false;
        out.burst_end_s.push_back(t + dt);
        ++bursts;
      }
    }
    out.issued_bytes += inject;
    q = unlimited ? 0.0 : std::max(0.0, q + inject - drain_bps * dt);
    progress += dt / (base_s * (1 + (unlimited ? 0.0 : alpha * q / capacity_bytes)));
    t += dt;
    if (progress >= 1.0) {
      if (tile >= spec.loaded.warmup_tiles) out.tile_s.push_back(t - tile_start);
      ++tile;
      tile_start = t;
      progress = 0;
    }
  }
  out.mainloop_span_s = t;
  out.drain_tail_s = unlimited ? 0.0 : q / drain_bps;
  if (out.burst_start_s.size() > out.burst_end_s.size()) out.burst_start_s.pop_back();  // cut by the mainloop end
  return out;
}

// Injection epilogue, one launch with stores (K CTAs alike, one stands for all): tile j's mainloop advances at
// 1 / (base (1 + alpha q / Q)) while the queue drains at R; then, after every tiles_per_burst-th tile, the
// CTAs' bursts (K B bytes) enter at K x the per-producer issue rate, admitted only up to capacity plus what
// drains; the time until the last byte is admitted is the tile's epilogue part.
struct EpilogueRun {
  std::vector<double> mainloop_s, with_epilogue_s;  // steady tiles (j >= warmup_tiles)
  std::vector<double> epilogue_s, epilogue_start_s; // steady tiles with a burst
  double issued_bytes = 0, mainloop_span_s = 0, drain_tail_s = 0;
};

EpilogueRun run_epilogue(const PointSpec& spec, double base_s, double alpha, double issue_bps, double drain_bps,
                         double capacity_bytes, bool unlimited) {
  const double k = spec.num_producers;
  const double volume = k * static_cast<double>(spec.bytes_per_producer);  // K B per burst, all CTAs
  const double dt = base_s / kStepsPerTile;
  EpilogueRun out;
  double t = 0, q = 0;
  for (int tile = 0; tile < spec.loaded.tiles_per_cta; ++tile) {
    const double tile_start = t;
    for (double progress = 0; progress < 1.0;) {
      const double q_mean = std::max(0.0, q - 0.5 * drain_bps * dt);  // over the step (exact while q > R dt)
      progress += dt / (base_s * (1 + (unlimited ? 0.0 : alpha * q_mean / capacity_bytes)));
      q = std::max(0.0, q - drain_bps * dt);
      t += dt;
    }
    const double mainloop = t - tile_start;
    double epilogue = 0;
    const bool burst = (tile + 1) % spec.loaded.tiles_per_burst == 0;
    if (burst) {
      const double epilogue_start = t;
      for (double remaining = volume; remaining > 1e-9 * volume;) {
        const double want = k * issue_bps * dt;
        const double allowed = unlimited ? want : std::min(want, std::max(0.0, capacity_bytes - q) + drain_bps * dt);
        const double inject = std::min(allowed, remaining);
        const double used = dt * inject / allowed;  // the last step ends when its bytes are in
        if (!unlimited) q = std::max(0.0, q + inject - drain_bps * used);
        remaining -= inject;
        t += used;
      }
      out.issued_bytes += volume;
      epilogue = t - epilogue_start;
      if (tile >= spec.loaded.warmup_tiles) {
        out.epilogue_s.push_back(epilogue);
        out.epilogue_start_s.push_back(epilogue_start);
      }
    }
    if (tile >= spec.loaded.warmup_tiles) {
      out.mainloop_s.push_back(mainloop);
      out.with_epilogue_s.push_back(mainloop + epilogue);
    }
  }
  out.mainloop_span_s = t;
  out.drain_tail_s = unlimited ? 0.0 : q / drain_bps;
  return out;
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

// Injection epilogue: the repetitions of one point (see simulate_loaded_point).
PointRecord simulate_epilogue_point(const SimParams& params, const PointSpec& spec, bool unlimited, double capacity,
                                    std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  auto jitter = [&] { return params.noise > 0 ? std::exp(params.noise * normal(rng)) : 1.0; };
  std::vector<double> tile_s, baseline_s, slowdown, bytes, rate, span, store_span, tail, issue, period;
  std::vector<double> epilogue_s, mean_tile_s, mean_with_s, baseline_mean_s, median_slowdown;
  for (int rep = 0; rep < spec.repetitions; ++rep) {
    throw_if_stopping();
    const double baseline = params.mainloop_tile_s * jitter();  // no burst: every tile is its base, no epilogue
    const double base = params.mainloop_tile_s * jitter();
    const EpilogueRun run = run_epilogue(spec, base, params.interference_alpha,
                                         issue_rate_per_producer_bps(params) * jitter(), params.drain_rate_bps * jitter(),
                                         capacity, unlimited);
    const double tile = median(run.mainloop_s), with = mean_of(run.with_epilogue_s);
    tile_s.push_back(tile);
    baseline_s.push_back(baseline);
    slowdown.push_back(with / baseline);
    median_slowdown.push_back(tile / baseline);
    mean_tile_s.push_back(mean_of(run.mainloop_s));
    mean_with_s.push_back(with);
    baseline_mean_s.push_back(baseline);
    epilogue_s.push_back(run.epilogue_s.empty() ? 0.0 : median(run.epilogue_s));
    bytes.push_back(run.issued_bytes);
    rate.push_back(run.issued_bytes / run.mainloop_span_s);
    span.push_back(run.mainloop_span_s);
    store_span.push_back(run.issued_bytes > 0 ? run.mainloop_span_s + run.drain_tail_s : 0.0);
    tail.push_back(run.drain_tail_s);
    issue.push_back(mean_of(run.epilogue_s));
    const std::size_t n = run.epilogue_start_s.size();
    period.push_back(n > 1 ? (run.epilogue_start_s[n - 1] - run.epilogue_start_s[0]) / static_cast<double>(n - 1) : 0.0);
  }
  PointRecord record;
  record.id = point_id(spec);
  record.spec = spec;
  record.issue_time_s = summarize(issue);
  record.period_s = summarize(period);
  LoadedMeasurement m;
  m.tile_time_s = summarize(tile_s);
  m.baseline_tile_time_s = summarize(baseline_s);
  m.slowdown = summarize(slowdown);
  m.bytes_issued = summarize(bytes);
  m.issue_rate_bps = summarize(rate);
  m.mainloop_span_s = summarize(span);
  m.store_span_s = summarize(store_span);
  m.drain_tail_s = summarize(tail);
  m.epilogue = LoadedMeasurement::Epilogue{summarize(epilogue_s), summarize(mean_tile_s), summarize(mean_with_s),
                                           summarize(baseline_mean_s), summarize(median_slowdown)};
  record.loaded = m;
  record.verification = {true, static_cast<std::uint64_t>(median(bytes)), 0};  // nothing written, nothing wrong
  return record;
}

// Mean over bursts b >= warmup of f(b) (all bursts when fewer); 0 when there are none.
template <typename F>
double burst_mean(std::size_t num, int warmup, F f) {
  const std::size_t first = num > static_cast<std::size_t>(warmup) ? static_cast<std::size_t>(warmup) : 0;
  if (num == first) return 0.0;
  double sum = 0;
  for (std::size_t i = first; i < num; ++i) sum += f(i);
  return sum / static_cast<double>(num - first);
}

}  // namespace

PointRecord simulate_loaded_point(const SimParams& params, const PointSpec& spec) {
  validate_params(params);
  validate_spec(spec);
  if (spec.suite != Suite::kLoaded) throw input_error("suite", "simulate_loaded_point needs a loaded point");
  const bool unlimited = spec.target == "local";
  const double capacity = capacity_for(params, spec.num_producers);
  std::mt19937_64 rng(params.seed ^ key_hash(spec));
  if (spec.loaded.injection == Injection::kEpilogue) return simulate_epilogue_point(params, spec, unlimited, capacity, rng);
  std::normal_distribution<double> normal;
  auto jitter = [&] { return params.noise > 0 ? std::exp(params.noise * normal(rng)) : 1.0; };

  std::vector<double> tile_s, baseline_s, slowdown, bytes, rate, span, store_span, tail, issue, period;
  for (int rep = 0; rep < spec.repetitions; ++rep) {
    throw_if_stopping();
    const double baseline = params.mainloop_tile_s * jitter();
    const double base = params.mainloop_tile_s * jitter();
    const LoadedRun run = run_loaded(spec, base, params.interference_alpha, issue_rate_per_producer_bps(params) * jitter(),
                                     params.drain_rate_bps * jitter(), capacity, unlimited);
    const double tile = median(run.tile_s);
    tile_s.push_back(tile);
    baseline_s.push_back(baseline);
    slowdown.push_back(tile / baseline);
    bytes.push_back(run.issued_bytes);
    rate.push_back(run.issued_bytes / run.mainloop_span_s);
    span.push_back(run.mainloop_span_s);
    store_span.push_back(run.burst_start_s.empty() && run.issued_bytes == 0 ? 0.0
                                                                            : run.mainloop_span_s + run.drain_tail_s);
    tail.push_back(run.drain_tail_s);
    const std::size_t n = run.burst_end_s.size();
    issue.push_back(burst_mean(n, spec.warmup_bursts, [&](std::size_t i) { return run.burst_end_s[i] - run.burst_start_s[i]; }));
    period.push_back(burst_mean(n > 0 ? n - 1 : 0, spec.warmup_bursts,
                                [&](std::size_t i) { return run.burst_start_s[i + 1] - run.burst_start_s[i]; }));
  }
  PointRecord record;
  record.id = point_id(spec);
  record.spec = spec;
  record.issue_time_s = summarize(issue);
  record.period_s = summarize(period);
  LoadedMeasurement m;
  m.tile_time_s = summarize(tile_s);
  m.baseline_tile_time_s = summarize(baseline_s);
  m.slowdown = summarize(slowdown);
  m.bytes_issued = summarize(bytes);
  m.issue_rate_bps = summarize(rate);
  m.mainloop_span_s = summarize(span);
  m.store_span_s = summarize(store_span);
  m.drain_tail_s = summarize(tail);
  record.loaded = m;
  record.verification = {true, static_cast<std::uint64_t>(median(bytes)), 0};  // nothing written, nothing wrong
  return record;
}

}  // namespace xs::sim
