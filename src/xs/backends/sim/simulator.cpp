// xstage sim layer: the fluid-segment event simulator behind simulate_point (see simulator.hpp).
//
// Approach. Between two events every rate is constant, so the state advances in closed form instead of
// per byte or per request. Events: a producer's overhead or gap timer ends, a producer's last byte of a
// burst is accepted, the outstanding volume q reaches Q (path full). q reaching 0 needs no event: it then
// stays 0 until A next changes (an event anyway), so it is clamped in place.
//   - Issuing producer p injects at its own rate r_p; A = sum of r_p over issuing producers.
//   - Path not full: injection A, drain R while q > 0 (work-conserving, FIFO), so dq/dt = A - R.
//   - Path full (q = Q and A > R): a request enters only as the drain frees space, so injection is capped
//     at R, shared in proportion to r_p (every stalled producer retries at its own pace). q stays at Q.
// Because every issuing producer progresses at the same fraction s (1, or R/A when full) of its own
// rate, one virtual clock W (dW/dt = s) orders all issue completions: producer p started at W0 finishes
// at W0 + B/r_p. A heap on that key makes each event O(log K). Producers with identical rates (noise 0)
// are one weighted group, so a noiseless point costs O(num_bursts) events whatever K is.
// A byte's drain time follows from FIFO order: the last byte of burst b is the cumulative injected volume
// at the instant the last producer finishes that burst; it drains when cumulative drained volume
// (injected - q) reaches that mark.
#include "xs/backends/sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <random>
#include <stdexcept>
#include <vector>

#include "xs/common/error.hpp"

namespace xs::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTimeTolS = 1e-15;      // events closer than this coincide (runs span < 1 s)
constexpr double kByteTol = 1e-3;        // FIFO marks: cumulative volumes reach ~1e10 B, double ulp ~1e-6 B

struct Path {
  bool unlimited = false;                // local memory: no drain limit, no capacity
  double drain_rate_bps = 0;             // R of this repetition
  double capacity_bytes = 0;             // Q(K) rounded down to whole requests
};

// One simulated launch. Producers with identical rates are merged into a group of `weight` producers.
struct Launch {
  std::vector<double> weight;            // producers per group
  std::vector<double> rate_bps;          // [group * num_bursts + burst], per-producer issue rate r_p
  int num_bursts = 0;
  double bytes_per_producer = 0;         // B
  double overhead_s = 0;                 // fixed per-burst issue cost, part of T_iss^0
  double gap_s = 0;                      // G
  Path path;
};

struct Timeline {
  std::vector<double> start_s;           // [group * (num_bursts + 1) + burst]; last slot = end of last gap
  std::vector<double> end_s;             // [group * num_bursts + burst], last byte accepted
  std::vector<double> drained_s;         // [burst], last byte left the path
};

class Engine {
 public:
  explicit Engine(const Launch& launch) : in_(launch), num_groups_(static_cast<int>(launch.weight.size())) {
    const int n = in_.num_bursts;
    out_.start_s.assign(num_groups_ * (n + 1), 0.0);
    out_.end_s.assign(num_groups_ * n, 0.0);
    out_.drained_s.assign(n, 0.0);
    phase_.assign(num_groups_, Phase::kDone);
    burst_idx_.assign(num_groups_, 0);
    groups_done_.assign(n, 0);
  }

  Timeline run() {
    const double drain_bps = in_.path.drain_rate_bps;
    const double capacity = in_.path.capacity_bytes;
    num_active_ = num_groups_;
    for (int g = 0; g < num_groups_; ++g) start_burst(g, 0);
    // Each step fires at least one event; a group has at most 3 per burst and the path changes state at
    // most twice per rate change, so exceeding this budget means the state is corrupt (NaN, stuck).
    const long long max_steps = 16LL * (num_groups_ + 1) * (in_.num_bursts + 2);
    for (long long step = 0; num_active_ > 0; ++step) {
      if (step > max_steps) throw std::logic_error("the simulator's event loop made no progress (internal error)");
      const double s = scale();
      const double dt_timer = timers_.empty() ? kInf : timers_.top().first - now_s_;
      const double dt_issue = issue_.empty() ? kInf : (issue_.top().first - virtual_s_) / s;
      double dt_full = kInf;
      if (!in_.path.unlimited && !full_ && inject_bps_ > drain_bps)
        dt_full = (capacity - outstanding_bytes_) / (inject_bps_ - drain_bps);
      const double dt = std::max(0.0, std::min({dt_timer, dt_issue, dt_full}));
      advance(dt);
      // Snap the state variable whose event fired, so rounding cannot re-fire or skip it.
      if (dt == dt_full) { outstanding_bytes_ = capacity; full_ = true; }
      if (dt == dt_issue) virtual_s_ = issue_.top().first;
      drained_bytes_ = injected_bytes_ - outstanding_bytes_;
      while (!issue_.empty() && issue_.top().first <= virtual_s_ + kTimeTolS) {
        const int g = issue_.top().second;
        issue_.pop();
        finish_issue(g);
      }
      while (!timers_.empty() && timers_.top().first <= now_s_ + kTimeTolS) {
        const int g = timers_.top().second;
        timers_.pop();
        if (phase_[g] == Phase::kOverhead) begin_issue(g);
        else start_burst(g, burst_idx_[g] + 1);
      }
      if (full_ && inject_bps_ <= drain_bps) full_ = false;  // q now falls (or holds) from Q
    }
    // All producers are done; what is still outstanding drains at R in FIFO order.
    for (const auto& [mark_bytes, b] : marks_) out_.drained_s[b] = now_s_ + (mark_bytes - drained_bytes_) / drain_bps;
    return std::move(out_);
  }

 private:
  enum class Phase { kOverhead, kIssuing, kGap, kDone };
  using Keyed = std::pair<double, int>;  // (time or virtual key, group)
  using MinHeap = std::priority_queue<Keyed, std::vector<Keyed>, std::greater<>>;

  double rate(int g) const { return in_.rate_bps[g * in_.num_bursts + burst_idx_[g]]; }
  double scale() const { return full_ ? in_.path.drain_rate_bps / inject_bps_ : 1.0; }

  void start_burst(int g, int b) {
    burst_idx_[g] = b;
    out_.start_s[g * (in_.num_bursts + 1) + b] = now_s_;
    if (b == in_.num_bursts) {
      phase_[g] = Phase::kDone;
      --num_active_;
    } else if (in_.overhead_s > 0) {
      phase_[g] = Phase::kOverhead;
      timers_.push({now_s_ + in_.overhead_s, g});
    } else {
      begin_issue(g);
    }
  }

  void begin_issue(int g) {
    phase_[g] = Phase::kIssuing;
    issue_.push({virtual_s_ + in_.bytes_per_producer / rate(g), g});
    inject_bps_ += in_.weight[g] * rate(g);
    ++num_issuing_;
  }

  void finish_issue(int g) {
    const int b = burst_idx_[g];
    inject_bps_ = --num_issuing_ == 0 ? 0.0 : inject_bps_ - in_.weight[g] * rate(g);
    out_.end_s[g * in_.num_bursts + b] = now_s_;
    if (++groups_done_[b] == num_groups_) {
      // FIFO: the burst's last byte is the volume injected so far; it may already have drained.
      if (injected_bytes_ - drained_bytes_ <= kByteTol) out_.drained_s[b] = now_s_;
      else marks_.push_back({injected_bytes_, b});
    }
    if (in_.gap_s > 0) {
      phase_[g] = Phase::kGap;
      timers_.push({now_s_ + in_.gap_s, g});
    } else {
      start_burst(g, b + 1);
    }
  }

  void advance(double dt) {
    const double s = scale();
    const double inject_bps = inject_bps_ * s;
    const double drain_bps = in_.path.unlimited ? inject_bps
                             : (outstanding_bytes_ > 0 || inject_bps > in_.path.drain_rate_bps)
                                 ? in_.path.drain_rate_bps : inject_bps;
    // A pending mark lies inside q, so it is crossed before q can reach 0: drain_bps holds until then.
    while (!marks_.empty() && marks_.front().first - drained_bytes_ <= drain_bps * dt + kByteTol) {
      const double need_bytes = std::max(0.0, marks_.front().first - drained_bytes_);
      out_.drained_s[marks_.front().second] = now_s_ + (drain_bps > 0 ? need_bytes / drain_bps : 0.0);
      marks_.pop_front();
    }
    virtual_s_ += s * dt;
    injected_bytes_ += inject_bps * dt;
    if (!in_.path.unlimited && !full_)
      outstanding_bytes_ = std::max(0.0, outstanding_bytes_ + (inject_bps_ - in_.path.drain_rate_bps) * dt);
    drained_bytes_ = injected_bytes_ - outstanding_bytes_;
    now_s_ += dt;
  }

  const Launch& in_;
  const int num_groups_;
  std::vector<Phase> phase_;
  std::vector<int> burst_idx_;
  std::vector<int> groups_done_;          // per burst: groups whose last byte was accepted
  MinHeap timers_;                        // overhead and gap ends, real time
  MinHeap issue_;                         // issue completions, virtual time
  std::deque<std::pair<double, int>> marks_;  // (cumulative bytes, burst) not yet drained
  double now_s_ = 0, virtual_s_ = 0;
  double inject_bps_ = 0;                 // A, unscaled sum of issuing producers' rates
  double outstanding_bytes_ = 0;          // q
  double injected_bytes_ = 0, drained_bytes_ = 0;
  bool full_ = false;
  int num_active_ = 0, num_issuing_ = 0;
  Timeline out_;
};

// Per-burst measurements of one launch, as the kernel's per-producer clocks would give them.
struct BurstTimes {
  std::vector<double> issue_s;       // max over producers (the slowest producer's span)
  std::vector<double> issue_mean_s;  // mean over producers
  std::vector<double> period_s, completion_s;
};

void append_burst_times(const Launch& in, const Timeline& t, double latency_s, BurstTimes& out) {
  const int n = in.num_bursts;
  const int num_groups = static_cast<int>(in.weight.size());
  double num_producers = 0;
  for (double w : in.weight) num_producers += w;
  for (int b = 0; b < n; ++b) {
    double issue_s = 0, issue_sum_s = 0, period_sum_s = 0, first_start_s = kInf;
    for (int g = 0; g < num_groups; ++g) {
      const double start_s = t.start_s[g * (n + 1) + b];
      issue_s = std::max(issue_s, t.end_s[g * n + b] - start_s);
      issue_sum_s += in.weight[g] * (t.end_s[g * n + b] - start_s);
      period_sum_s += in.weight[g] * (t.start_s[g * (n + 1) + b + 1] - start_s);
      first_start_s = std::min(first_start_s, start_s);
    }
    out.issue_s.push_back(issue_s);
    out.issue_mean_s.push_back(issue_sum_s / num_producers);
    out.period_s.push_back(period_sum_s / num_producers);
    out.completion_s.push_back(t.drained_s[b] + latency_s - first_start_s);
  }
}

// The steady-state definitions shared with the GPU backend (backends/gpu/burst_timeline.hpp): the window in
// which every producer is past warm-up and none has started its last burst, W = [max_g start(w),
// min_g start(N-1)], and the mean over producer-bursts (b,g) starting in W, weighted by group size, of
// the issue time and of the start-to-start period. Falls back to all b >= w if W holds none.
struct WindowMeans {
  double issue_s = 0, period_s = 0;
};
WindowMeans window_means(const Launch& in, const Timeline& t, int warmup_bursts) {
  const int n = in.num_bursts;
  const int num_groups = static_cast<int>(in.weight.size());
  auto start = [&](int g, int b) { return t.start_s[g * (n + 1) + b]; };
  double lo = -kInf, hi = kInf;
  for (int g = 0; g < num_groups; ++g) {
    lo = std::max(lo, start(g, warmup_bursts));
    hi = std::min(hi, start(g, n - 1));
  }
  for (int pass = 0; pass < 2; ++pass) {
    double issue = 0, period = 0, weight = 0;
    for (int g = 0; g < num_groups; ++g)
      for (int b = warmup_bursts; b + 1 < n; ++b) {
        if (pass == 0 && (start(g, b) < lo || start(g, b) > hi)) continue;
        issue += in.weight[g] * (t.end_s[g * n + b] - start(g, b));
        period += in.weight[g] * (start(g, b + 1) - start(g, b));
        weight += in.weight[g];
      }
    if (weight > 0) return {issue / weight, period / weight};
  }
  return {};
}

double steady_median(const std::vector<double>& per_burst, int warmup_bursts) {
  return median(std::vector<double>(per_burst.begin() + warmup_bursts, per_burst.end()));
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// FNV-1a over every spec field, so each point draws its own noise stream from the same seed.
std::uint64_t spec_hash(const PointSpec& spec) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](const void* data, std::size_t size) {
    for (std::size_t i = 0; i < size; ++i) h = (h ^ static_cast<const unsigned char*>(data)[i]) * 0x100000001b3ULL;
  };
  auto mix_int = [&mix](std::int64_t v) { mix(&v, sizeof v); };
  std::uint64_t gap_bits = 0;
  std::memcpy(&gap_bits, &spec.gap_s, sizeof gap_bits);
  mix_int(static_cast<int>(spec.suite));
  mix(spec.target.data(), spec.target.size());
  for (std::int64_t v : {std::int64_t{spec.num_producers}, static_cast<std::int64_t>(spec.bytes_per_producer),
                         static_cast<std::int64_t>(gap_bits), std::int64_t{spec.num_bursts},
                         std::int64_t{spec.warmup_bursts}, std::int64_t{spec.repetitions},
                         std::int64_t{spec.store_width_bytes}, std::int64_t{spec.threads_per_producer},
                         static_cast<std::int64_t>(spec.producer_kind),
                         static_cast<std::int64_t>(spec.address_mode), std::int64_t{spec.completion}})
    mix_int(v);
  return h;
}

}  // namespace

double issue_rate_per_producer_bps(const SimParams& params) {
  return static_cast<double>(kRefBytesPerProducer) / (params.tiss0_ref_s - params.issue_overhead_s);
}

double backpressure_free_issue_time_s(const SimParams& params, std::uint64_t bytes_per_producer) {
  return params.issue_overhead_s + static_cast<double>(bytes_per_producer) / issue_rate_per_producer_bps(params);
}

double capacity_for(const SimParams& params, int num_producers) {
  if (params.capacity_per_producer_bytes > 0)
    return std::min(params.capacity_bytes, num_producers * params.capacity_per_producer_bytes);
  return params.capacity_bytes;
}

PointRecord simulate_point(const SimParams& params, const PointSpec& spec) {
  if (spec.suite == Suite::kLoaded) return simulate_loaded_point(params, spec);
  validate_params(params);
  validate_spec(spec);
  const bool unlimited = spec.suite == Suite::kLocalControl || spec.target == "local";
  const bool isolated = spec.suite == Suite::kIsolated;
  const int num_producers = spec.num_producers;
  const int n = spec.num_bursts;
  const double request_bytes = params.request_bytes;
  const double capacity_bytes = std::floor(capacity_for(params, num_producers) / request_bytes) * request_bytes;
  if (!unlimited && capacity_bytes < request_bytes)
    throw input_error("sim.request_bytes", "Q(K=" + std::to_string(num_producers) + ") holds no whole request");
  const double latency_s = unlimited ? 0.0 : params.completion_latency_s;
  const double rate_bps = issue_rate_per_producer_bps(params);

  std::mt19937_64 rng(splitmix64(params.seed ^ splitmix64(spec_hash(spec))));
  std::normal_distribution<double> normal;
  auto jitter = [&] { return params.noise > 0 ? std::exp(params.noise * normal(rng)) : 1.0; };

  // Noise makes producers differ; without it they are one group of K identical producers.
  const int num_groups = params.noise > 0 ? num_producers : 1;
  Launch base;
  base.weight.assign(num_groups, params.noise > 0 ? 1.0 : static_cast<double>(num_producers));
  base.bytes_per_producer = static_cast<double>(spec.bytes_per_producer);
  base.overhead_s = params.issue_overhead_s;

  std::vector<double> issue_samples, issue_max_samples, period_samples, completion_samples;
  for (int rep = 0; rep < spec.repetitions; ++rep) {
    throw_if_stopping();  // SIGINT/SIGTERM: a long point ends here (bench/backend.hpp)
    base.path = {unlimited, params.drain_rate_bps * jitter(), capacity_bytes};
    std::vector<double> rates(static_cast<std::size_t>(num_groups) * n);
    for (double& r : rates) r = rate_bps * jitter();
    BurstTimes times;
    if (isolated) {
      // Each burst starts into an empty path: a launch of one burst, no gap.
      for (int b = 0; b < n; ++b) {
        Launch one = base;
        one.num_bursts = 1;
        one.rate_bps.resize(num_groups);
        for (int g = 0; g < num_groups; ++g) one.rate_bps[g] = rates[g * n + b];
        append_burst_times(one, Engine(one).run(), latency_s, times);
      }
    } else {
      Launch all = base;
      all.num_bursts = n;
      all.gap_s = spec.gap_s;
      all.rate_bps = std::move(rates);
      const Timeline timeline = Engine(all).run();
      append_burst_times(all, timeline, latency_s, times);
      const WindowMeans means = window_means(all, timeline, spec.warmup_bursts);
      issue_samples.push_back(means.issue_s);
      period_samples.push_back(means.period_s);
      issue_max_samples.push_back(steady_median(times.issue_s, spec.warmup_bursts));
    }
    // Isolated: mean over producers of the aligned burst's spans, and the slowest one (meta.definitions).
    if (isolated) {
      issue_samples.push_back(steady_median(times.issue_mean_s, spec.warmup_bursts));
      issue_max_samples.push_back(steady_median(times.issue_s, spec.warmup_bursts));
    }
    completion_samples.push_back(steady_median(times.completion_s, spec.warmup_bursts));
  }

  PointRecord record;
  record.id = point_id(spec);
  record.spec = spec;
  record.issue_time_s = summarize(std::move(issue_samples));
  record.period_s = summarize(std::move(period_samples));
  record.issue_time_max_s = summarize(std::move(issue_max_samples));
  if (spec.completion) record.completion_s = summarize(std::move(completion_samples));
  record.sm_clock_hz = 0;  // no SM clock in a model
  // The simulator writes no memory, so nothing can be wrong; the field records the volume the point
  // stands for so sim and GPU results read alike.
  record.verification = {true, spec.volume_bytes() * static_cast<std::uint64_t>(n), 0};
  return record;
}

}  // namespace xs::sim
