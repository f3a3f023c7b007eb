// xstage runtime layer: launch aggregation (definitions in burst_timeline.hpp).
#include "runtime/burst_timeline.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/stats.hpp"

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
  std::vector<double> issue_cycles, period_cycles, completion_cycles;
  for (std::uint32_t b = first_steady_burst; b < n; ++b) {
    double issue_max = 0, done_max = 0, period_sum = 0;
    for (std::uint32_t p = 0; p < k; ++p) {
      const auto& r = at(b, p);
      if (r.start_cycles == 0 || r.issue_end_cycles < r.start_cycles)
        throw bad_record(fmt::format("burst {} producer {}: start {} issue end {}", b, p, r.start_cycles,
                                     r.issue_end_cycles));
      issue_max = std::max(issue_max, static_cast<double>(r.issue_end_cycles - r.start_cycles));
      if (completion) {
        if (r.fence_end_cycles < r.issue_end_cycles)
          throw bad_record(fmt::format("burst {} producer {}: fence end before issue end", b, p));
        done_max = std::max(done_max, static_cast<double>(r.fence_end_cycles - r.start_cycles));
      }
      if (b + 1 < n) {
        const auto& next = at(b + 1, p);
        if (next.start_cycles < r.start_cycles)
          throw bad_record(fmt::format("burst {} producer {}: next start before this start", b, p));
        period_sum += static_cast<double>(next.start_cycles - r.start_cycles);
      }
    }
    issue_cycles.push_back(issue_max);
    if (completion) completion_cycles.push_back(done_max);
    if (b + 1 < n) period_cycles.push_back(period_sum / k);
  }
  s.issue_time_s = median(issue_cycles) / s.sm_clock_hz;
  if (!period_cycles.empty()) s.period_s = median(period_cycles) / s.sm_clock_hz;
  if (completion) s.completion_s = median(completion_cycles) / s.sm_clock_hz;
  for (const auto& c : t.clocks) s.num_late_producers += c.barrier_arrival_ns > c.start_time_ns ? 1 : 0;
  return s;
}

}  // namespace xs::runtime
