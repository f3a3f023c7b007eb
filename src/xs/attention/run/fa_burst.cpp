// xstage attention host layer: sender-side spans and burst alignment from tile records (see fa_burst.hpp).
#include "xs/attention/run/fa_burst.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "xs/common/stats.hpp"

namespace xs::attention {

namespace ka = xs::kernels::attention;

std::pair<std::uint64_t, std::uint64_t> launch_bounds_ns(const ka::TileRecord* records, std::size_t count) {
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max(), last = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (!records[i].written) continue;
    first = std::min(first, records[i].qloop_start_ns);
    last = std::max(last, records[i].store_end_ns);
  }
  if (last == 0) return {0, 0};
  return {first, last};
}

double launch_sender_span_s(const ka::TileRecord* records, std::size_t count) {
  const auto [first, last] = launch_bounds_ns(records, count);
  return last > first ? static_cast<double>(last - first) * 1e-9 : 0.0;
}

std::vector<StoreSpan> store_spans(const ka::TileRecord* records, std::size_t count, int grid, double sm_clock_hz) {
  std::vector<StoreSpan> out;
  if (!(sm_clock_hz > 0) || grid <= 0) return out;
  // %globaltimer counts from an epoch (~1.8e18 ns): as a double its ulp is 256 ns, longer than a store
  // burst. Subtract the earliest end in integer ns first, so only differences become doubles.
  std::uint64_t ref_ns = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = 0; i < count; ++i)
    if (records[i].written && !records[i].partial_only) ref_ns = std::min(ref_ns, records[i].store_end_ns);
  double origin = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < count; ++i) {
    const ka::TileRecord& t = records[i];
    if (!t.written || t.partial_only) continue;  // a split piece that left its partial stored nothing
    const double cycles = t.store_end_cycles >= t.store_start_cycles
                              ? static_cast<double>(t.store_end_cycles - t.store_start_cycles) : 0.0;
    StoreSpan s;
    s.cta = static_cast<int>(t.cta_idx);
    s.wave = static_cast<int>(t.cta_tile_idx);
    s.end_s = static_cast<double>(t.store_end_ns - ref_ns) * 1e-9;
    s.start_s = s.end_s - cycles / sm_clock_hz;
    origin = std::min(origin, s.start_s);
    out.push_back(s);
  }
  for (StoreSpan& s : out) {
    s.start_s -= origin;
    s.end_s -= origin;
  }
  return out;
}

RecordDurations record_durations(const ka::TileRecord* records, std::size_t count, double sm_clock_hz,
                                 bool completion_coupled) {
  RecordDurations d;
  if (!(sm_clock_hz > 0)) return d;
  auto seconds = [&](std::uint64_t from, std::uint64_t to) {
    return to >= from ? static_cast<double>(to - from) / sm_clock_hz : 0.0;
  };
  for (std::size_t i = 0; i < count; ++i) {
    const ka::TileRecord& t = records[i];
    if (!t.written) continue;
    const double qloop = seconds(t.qloop_start_cycles, t.qloop_end_cycles);
    d.sigma_s_per_kv_tile.push_back(qloop / std::max<std::uint32_t>(t.num_kv_tiles, 1));
    if (t.partial_only) continue;
    d.qloop_s.push_back(qloop);
    d.store_span_s.push_back(seconds(t.store_start_cycles, t.store_end_cycles));
    if (completion_coupled) d.fence_span_s.push_back(seconds(t.store_end_cycles, t.fence_end_cycles));
  }
  return d;
}

namespace {

// Per CTA, its spans merged into disjoint [start, end) intervals.
std::vector<std::pair<double, double>> merged_storer_intervals(const std::vector<StoreSpan>& spans) {
  std::map<int, std::vector<std::pair<double, double>>> by_cta;
  for (const StoreSpan& s : spans)
    if (s.end_s > s.start_s) by_cta[s.cta].emplace_back(s.start_s, s.end_s);
  std::vector<std::pair<double, double>> out;
  for (auto& [cta, v] : by_cta) {
    std::sort(v.begin(), v.end());
    std::pair<double, double> cur = v.front();
    for (std::size_t i = 1; i < v.size(); ++i) {
      if (v[i].first <= cur.second) {
        cur.second = std::max(cur.second, v[i].second);
      } else {
        out.push_back(cur);
        cur = v[i];
      }
    }
    out.push_back(cur);
  }
  return out;
}

}  // namespace

BurstAlignment burst_alignment(const std::vector<StoreSpan>& spans) {
  BurstAlignment a;
  // Phase spread per wave.
  std::map<int, std::map<int, double>> start_of;  // wave -> cta -> earliest start
  for (const StoreSpan& s : spans) {
    auto [it, inserted] = start_of[s.wave].emplace(s.cta, s.start_s);
    if (!inserted) it->second = std::min(it->second, s.start_s);
  }
  std::vector<double> spread;
  for (const auto& [wave, ctas] : start_of) {
    if (ctas.size() < 2) continue;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& [cta, t] : ctas) {
      lo = std::min(lo, t);
      hi = std::max(hi, t);
    }
    spread.push_back(hi - lo);
  }
  a.num_waves = static_cast<int>(spread.size());
  if (!spread.empty()) a.phase_spread_median_s = summarize(spread).median;
  // Concurrency: sweep the merged intervals; at equal times ends (-1) go before starts (+1), [start, end).
  std::vector<std::pair<double, int>> events;
  for (const auto& [b, e] : merged_storer_intervals(spans)) {
    events.emplace_back(b, +1);
    events.emplace_back(e, -1);
  }
  std::sort(events.begin(), events.end());
  int count = 0, peak = 0;
  double busy_s = 0, area = 0, prev = 0;
  for (const auto& [t, delta] : events) {
    if (count > 0) {
      busy_s += t - prev;
      area += count * (t - prev);
    }
    count += delta;
    peak = std::max(peak, count);
    prev = t;
  }
  a.peak_concurrent_storers = peak;
  a.mean_concurrent_storers = busy_s > 0 ? area / busy_s : 0.0;
  return a;
}

}  // namespace xs::attention
