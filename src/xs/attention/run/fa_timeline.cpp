// xstage attention host layer: one launch's timeline from its tile records (see fa_timeline.hpp).
#include "xs/attention/run/fa_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "xs/attention/run/fa_burst.hpp"

namespace xs::attention {

namespace ka = xs::kernels::attention;

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Quantiles quantiles_of(const std::vector<double>& v) {
  Quantiles q;
  if (v.empty()) return q;
  q.min = *std::min_element(v.begin(), v.end());
  q.max = *std::max_element(v.begin(), v.end());
  q.median = median_of(v);
  return q;
}

double cycles_between(std::uint64_t from, std::uint64_t to) {
  return to >= from ? static_cast<double>(to - from) : 0.0;
}

struct CtaRecords {
  std::vector<const ka::TileRecord*> wg[2];  // per consumer warpgroup, in tile order
};

// Records by the CTA that ran them (TileRecord::cta_idx), each warpgroup's in the order the CTA ran them.
std::map<int, CtaRecords> by_cta(const ka::TileRecord* records, std::size_t count) {
  std::map<int, CtaRecords> out;
  for (std::size_t i = 0; i < count; ++i) {
    const ka::TileRecord& t = records[i];
    if (!t.written) continue;
    out[static_cast<int>(t.cta_idx)].wg[i % 2].push_back(&t);
  }
  for (auto& [cta, c] : out)
    for (auto& v : c.wg)
      std::sort(v.begin(), v.end(), [](const ka::TileRecord* a, const ka::TileRecord* b) { return a->cta_tile_idx < b->cta_tile_idx; });
  return out;
}

// One warpgroup's tiles (in order): their Q-loops and epilogues in seconds; other_s is left to the caller.
CriticalPath critical_path_of(const std::vector<const ka::TileRecord*>& tiles, int cta, double sm_clock_hz) {
  CriticalPath p;
  p.cta_idx = cta;
  p.num_tiles = static_cast<int>(tiles.size());
  for (const ka::TileRecord* t : tiles) {
    p.num_kv_tiles += std::max<std::uint32_t>(t->num_kv_tiles, 1);
    p.qloop_s += cycles_between(t->qloop_start_cycles, t->qloop_end_cycles) / sm_clock_hz;
    p.epilogue_s += cycles_between(t->qloop_end_cycles, t->store_end_cycles) / sm_clock_hz;
  }
  return p;
}

}  // namespace

double launch_sm_clock_hz(const ka::TileRecord* records, std::size_t count, int grid, double min_span_ns) {
  if (grid <= 0) return 0;
  std::vector<double> hz;
  for (const auto& [cta, c] : by_cta(records, count)) {
    const ka::TileRecord *first = nullptr, *last = nullptr;
    for (const auto& v : c.wg)
      for (const ka::TileRecord* t : v) {
        if (!first || t->qloop_start_ns < first->qloop_start_ns) first = t;
        if (!last || t->store_end_ns > last->store_end_ns) last = t;
      }
    if (!first || last->store_end_ns <= first->qloop_start_ns) continue;
    const double ns = static_cast<double>(last->store_end_ns - first->qloop_start_ns);
    if (ns > min_span_ns) hz.push_back(cycles_between(first->qloop_start_cycles, last->store_end_cycles) / (ns * 1e-9));
  }
  return median_of(hz);
}

LaunchTimeline launch_timeline(const ka::TileRecord* records, std::size_t count, int grid, double sm_clock_hz) {
  LaunchTimeline tl;
  if (grid <= 0 || !(sm_clock_hz > 0)) return tl;
  const auto ctas = by_cta(records, count);
  const auto [origin, end] = launch_bounds_ns(records, count);
  if (ctas.empty() || end <= origin) return tl;
  tl.span_s = static_cast<double>(end - origin) * 1e-9;
  tl.origin_ns = origin;
  tl.end_ns = end;
  tl.num_ctas = static_cast<int>(ctas.size());
  std::vector<double> starts, finishes, tiles, qloops, epilogues, gaps, sigmas;
  double idle_s = 0, slowest_qloops_s = 0;
  std::uint64_t critical_end_ns = 0;
  for (const auto& [cta, c] : ctas) {
    std::uint64_t first = std::numeric_limits<std::uint64_t>::max(), last = 0;
    double cta_qloop_s[2] = {0, 0}, cta_kv = 0, cta_sigma_sum_s = 0;
    for (int w = 0; w < 2; ++w) {
      const auto& v = c.wg[w];
      for (std::size_t i = 0; i < v.size(); ++i) {
        const ka::TileRecord& t = *v[i];
        first = std::min(first, t.qloop_start_ns);
        last = std::max(last, t.store_end_ns);
        const double q_s = cycles_between(t.qloop_start_cycles, t.qloop_end_cycles) / sm_clock_hz;
        qloops.push_back(q_s);
        epilogues.push_back(cycles_between(t.qloop_end_cycles, t.store_end_cycles) / sm_clock_hz);
        cta_qloop_s[w] += q_s;
        cta_sigma_sum_s += q_s;
        cta_kv += std::max<std::uint32_t>(t.num_kv_tiles, 1);
        if (i + 1 < v.size()) gaps.push_back(cycles_between(t.store_end_cycles, v[i + 1]->qloop_start_cycles) / sm_clock_hz);
      }
      if (!v.empty() && (tl.critical.cta_idx < 0 || v.back()->store_end_ns > critical_end_ns)) {
        critical_end_ns = v.back()->store_end_ns;
        tl.critical = critical_path_of(v, cta, sm_clock_hz);
      }
    }
    tiles.push_back(static_cast<double>(std::max(c.wg[0].size(), c.wg[1].size())));
    starts.push_back(static_cast<double>(first - origin) * 1e-9);
    finishes.push_back(static_cast<double>(last - origin) * 1e-9);
    idle_s += tl.span_s - finishes.back();
    slowest_qloops_s = std::max({slowest_qloops_s, cta_qloop_s[0], cta_qloop_s[1]});
    if (cta_kv > 0) sigmas.push_back(cta_sigma_sum_s / cta_kv);
  }
  tl.cta_start_s = quantiles_of(starts);
  tl.cta_finish_s = quantiles_of(finishes);
  tl.tail_idle_fraction = idle_s / (tl.num_ctas * tl.span_s);
  tl.tiles_per_cta = quantiles_of(tiles);
  tl.qloop_median_s = median_of(qloops);
  tl.epilogue_median_s = median_of(epilogues);
  tl.gap_median_s = median_of(gaps);
  tl.outside_qloop_fraction = std::max(0.0, tl.span_s - slowest_qloops_s) / tl.span_s;
  tl.cta_sigma_s_per_kv_tile = quantiles_of(sigmas);
  // The critical warpgroup's span runs from the launch's origin to its last store, which ends the launch.
  tl.critical.other_s = tl.span_s - tl.critical.qloop_s - tl.critical.epilogue_s;
  return tl;
}

std::array<std::vector<double>, 3> critical_path_round_differences(const std::vector<std::array<double, 3>> (&parts)[2],
                                                                   std::size_t launches_per_round, std::size_t rounds,
                                                                   double ref_hz) {
  std::array<std::vector<double>, 3> out;
  const std::size_t need = rounds * launches_per_round;
  if (!(ref_hz > 0) || launches_per_round == 0 || parts[0].size() < need || parts[1].size() < need) return out;
  for (std::size_t k = 0; k < rounds; ++k)
    for (std::size_t part = 0; part < 3; ++part) {
      double mean[2] = {0, 0};
      for (int v = 0; v < 2; ++v)
        for (std::size_t l = 0; l < launches_per_round; ++l)
          mean[v] += parts[v][k * launches_per_round + l][part] / static_cast<double>(launches_per_round);
      out[part].push_back((mean[1] - mean[0]) / ref_hz);
    }
  return out;
}

Summary stats_of(std::vector<double> v) {
  Summary t;
  if (v.empty()) return t;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[static_cast<std::size_t>(std::lround(q * (v.size() - 1)))]; };
  t.median = at(0.5);
  t.p10 = at(0.1);
  t.p90 = at(0.9);
  return t;
}

}  // namespace xs::attention
