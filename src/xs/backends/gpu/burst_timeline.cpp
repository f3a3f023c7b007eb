// xstage backends/gpu layer: launch aggregation (definitions in burst_timeline.hpp).
#include "xs/backends/gpu/burst_timeline.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"

namespace xs::runtime {
namespace {

Error bad_record(const std::string& what) {
  return Error(ExitCode::kDeviceFailure, "kernel", "records", "burst_kernel wrote inconsistent timestamps: " + what);
}

}  // namespace

double derive_sm_clock_hz(const std::vector<kernels::remote_store::ProducerClock>& clocks) {
  std::vector<double> hz;
  hz.reserve(clocks.size());
  for (std::size_t p = 0; p < clocks.size(); ++p) {
    const auto& c = clocks[p];
    if (c.last_ns <= c.first_ns || c.last_cycles <= c.first_cycles)
      throw bad_record(fmt::format("producer {}: empty clock window ({} ns, {} cycles); is %globaltimer running?", p,
                                   static_cast<long long>(c.last_ns - c.first_ns),
                                   static_cast<long long>(c.last_cycles - c.first_cycles)));
    const double cycles = static_cast<double>(c.last_cycles - c.first_cycles);
    hz.push_back(1e9 * cycles / static_cast<double>(c.last_ns - c.first_ns));
  }
  if (hz.empty()) throw bad_record("no producer clocks");
  return median(hz);
}

LaunchSample aggregate_launch(const LaunchTimeline& t, std::uint32_t first_steady_burst, bool completion) {
  const std::uint32_t n = t.num_bursts, k = t.num_producers;
  if (t.records.size() != static_cast<std::size_t>(n) * k || t.clocks.size() != k || n == 0 || k == 0)
    throw bad_record("record arrays do not match N x K");
  if (first_steady_burst >= n) throw bad_record("no steady-state burst");
  LaunchSample s;
  s.sm_clock_hz = derive_sm_clock_hz(t.clocks);
  auto at = [&](std::uint32_t b, std::uint32_t p) -> const kernels::remote_store::BurstRecord& {
    return t.records[static_cast<std::size_t>(b) * k + p];
  };
  // Consistency first: every record of a steady burst was written.
  for (std::uint32_t b = first_steady_burst; b < n; ++b) {
    for (std::uint32_t p = 0; p < k; ++p) {
      const auto& r = at(b, p);
      if (r.start_cycles == 0 || r.issue_end_cycles < r.start_cycles)
        throw bad_record(fmt::format("burst {} producer {}: start {} issue end {}", b, p, r.start_cycles,
                                     r.issue_end_cycles));
      if (completion && r.fence_end_cycles < r.issue_end_cycles)
        throw bad_record(fmt::format("burst {} producer {}: fence end before issue end", b, p));
      if (b + 1 < n && at(b + 1, p).start_cycles < r.start_cycles)
        throw bad_record(fmt::format("burst {} producer {}: next start before this start", b, p));
    }
  }
  auto duration = [&](std::uint32_t b, std::uint32_t p) {
    return static_cast<double>(at(b, p).issue_end_cycles - at(b, p).start_cycles);
  };
  // Per burst: slowest producer's span, and the completion horizon.
  std::vector<double> span_max, completion_cycles;
  for (std::uint32_t b = first_steady_burst; b < n; ++b) {
    double issue_max = 0, done_max = 0;
    for (std::uint32_t p = 0; p < k; ++p) {
      issue_max = std::max(issue_max, duration(b, p));
      if (completion) done_max = std::max(done_max, static_cast<double>(at(b, p).fence_end_cycles - at(b, p).start_cycles));
    }
    span_max.push_back(issue_max);
    if (completion) completion_cycles.push_back(done_max);
  }
  if (completion) s.completion_s = median(completion_cycles) / s.sm_clock_hz;
  if (n == 1) {  // isolated: one aligned burst; mean over producers and the slowest producer
    double sum = 0;
    for (std::uint32_t p = 0; p < k; ++p) sum += duration(0, p);
    s.issue_time_s = sum / static_cast<double>(k) / s.sm_clock_hz;
    s.issue_time_max_s = span_max.front() / s.sm_clock_hz;
  } else {
    // Clocks of different SMs are not comparable, so the window is found in %globaltimer-free terms:
    // each producer's own cycle counter, offset by its start-barrier crossing (start(0,p)), which the
    // barrier aligns across producers to within its polling granularity.
    auto rel = [&](std::uint32_t b, std::uint32_t p) {
      return static_cast<double>(at(b, p).start_cycles - at(0, p).start_cycles);
    };
    double lo = 0, hi = std::numeric_limits<double>::infinity();
    for (std::uint32_t p = 0; p < k; ++p) {
      lo = std::max(lo, rel(first_steady_burst, p));
      hi = std::min(hi, rel(n - 1, p));
    }
    double sum_issue = 0, sum_period = 0, all_issue = 0, all_period = 0;
    std::size_t count = 0, all_count = 0;
    for (std::uint32_t p = 0; p < k; ++p) {
      for (std::uint32_t b = first_steady_burst; b + 1 < n; ++b) {
        const double d = duration(b, p), period = rel(b + 1, p) - rel(b, p);
        all_issue += d, all_period += period, ++all_count;
        if (rel(b, p) >= lo && rel(b, p) <= hi) sum_issue += d, sum_period += period, ++count;
      }
    }
    if (count == 0) sum_issue = all_issue, sum_period = all_period, count = all_count;
    if (count > 0) {
      s.issue_time_s = sum_issue / static_cast<double>(count) / s.sm_clock_hz;
      s.period_s = sum_period / static_cast<double>(count) / s.sm_clock_hz;
    }
    s.issue_time_max_s = median(span_max) / s.sm_clock_hz;
  }
  for (const auto& c : t.clocks) s.num_late_producers += c.barrier_arrival_ns > c.start_time_ns ? 1 : 0;
  return s;
}

}  // namespace xs::runtime
