// xstage attention host layer: phase-aware burst and verdict checks (see fa_verdict.hpp).
#include "attention/fa_verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/error.hpp"

namespace xs::attention {
namespace {

double positive_part(double x) { return std::max(0.0, x); }

std::string us(double s) { return fmt::format("{:.1f} us", s * 1e6); }

std::string band_text(const ResidualBand& b) {
  return fmt::format("E_res {} (p10 {} .. p90 {})", us(b.median_s), us(b.p10_s), us(b.p90_s));
}

}  // namespace

WaveOutstanding aligned_wave_outstanding(int num_producers, double tile_bytes, double drain_rate_bps,
                                         double tiss0_s) {
  WaveOutstanding w;
  w.cluster_producers = num_producers;
  w.window_s = tiss0_s;
  w.cluster_bytes = positive_part(num_producers * tile_bytes - drain_rate_bps * tiss0_s);  // eq. 6
  w.wave_bytes = w.cluster_bytes;
  w.peak_bytes = w.cluster_bytes;
  return w;
}

WaveOutstanding phase_aware_wave_outstanding(int num_producers, double tile_bytes, double drain_rate_bps,
                                             double tiss0_s, const BurstAlignment& a, double tiss0_cluster_s) {
  if (a.phase_spread_s < 0 || a.peak_concurrent_storers < 0 || a.mean_concurrent_storers < 0)
    throw input_error("burst alignment", "phase spread and concurrent storers must be >= 0 (0: not measured)");
  WaveOutstanding w;
  w.alignment_measured = a.phase_spread_s > 0 || a.peak_concurrent_storers > 0;
  // A count is whole CTAs; more than K storing at once cannot happen within one wave's K producers.
  const int peak = static_cast<int>(std::ceil(a.peak_concurrent_storers));
  w.cluster_producers = peak > 0 ? std::min(num_producers, peak) : num_producers;
  w.window_s = a.phase_spread_s + tiss0_s;
  const double cluster_tiss0_s = tiss0_cluster_s >= 0 ? tiss0_cluster_s : tiss0_s;
  w.cluster_bytes = positive_part(w.cluster_producers * tile_bytes - drain_rate_bps * cluster_tiss0_s);  // (a)
  w.wave_bytes = positive_part(num_producers * tile_bytes - drain_rate_bps * w.window_s);        // (b)
  w.peak_bytes = std::max(w.cluster_bytes, w.wave_bytes);
  return w;
}

double mean_storers_if_uniform(int num_producers, double phase_spread_s, double store_span_s) {
  if (phase_spread_s <= 0 || store_span_s <= 0) return 0;
  return num_producers * store_span_s / (phase_spread_s + store_span_s);
}

BurstVerdict burst_verdict(const WaveOutstanding& wave, double capacity_bytes, double drain_rate_bps,
                           double num_bursts, bool rate_bound_ok, bool capacity_is_lower_bound) {
  const double lower = capacity_bytes > 0 ? capacity_bytes : 0;
  const double upper = capacity_bytes > 0 && !capacity_is_lower_bound ? capacity_bytes : INFINITY;
  return burst_verdict_bracketed(wave, lower, upper, drain_rate_bps, num_bursts, rate_bound_ok);
}

BurstVerdict burst_verdict_bracketed(const WaveOutstanding& wave, double capacity_lower_bytes,
                                     double capacity_upper_bytes, double drain_rate_bps, double num_bursts,
                                     bool rate_bound_ok) {
  if (!(capacity_lower_bytes >= 0) || !(capacity_upper_bytes >= capacity_lower_bytes))
    throw input_error("capacity", "a Q bracket needs 0 <= lower <= upper");
  BurstVerdict v;
  v.wave = wave;
  const double q = wave.peak_bytes;
  const bool met = q <= 0 || q <= capacity_lower_bytes;
  v.capacity_decided = met || q >= capacity_upper_bytes;
  if (v.capacity_decided) {
    v.capacity_bound_ok = met;
    // N_t [q - Q]+ / R at each end of the bracket
    v.e_cap_s = met ? 0 : num_bursts * positive_part(q - capacity_lower_bytes) / drain_rate_bps;
    v.e_cap_min_s = met ? 0 : num_bursts * positive_part(q - capacity_upper_bytes) / drain_rate_bps;
  }
  if (!rate_bound_ok || (v.capacity_decided && !v.capacity_bound_ok)) v.verdict = "reshape";
  else if (v.capacity_decided) v.verdict = "piggyback";
  else v.verdict = "undecided";
  return v;
}

std::string measured_state(const ResidualBand& b) {
  if (!b.measured) return "not_measured";
  if (b.p10_s > 0) return "exposed";
  if (b.p90_s < 0) return "negative";
  return "within_noise";
}

bool consistent_with_band(double x_s, const ResidualBand& b) {
  if (!b.measured || !std::isfinite(x_s)) return false;
  const double width_s = b.p90_s - b.p10_s;
  return x_s >= b.p10_s - width_s && x_s <= b.p90_s + width_s;
}

VerdictCheck check_verdict(const std::string& verdict, double predicted_exposure_s, const ResidualBand& b) {
  VerdictCheck c;
  c.state = measured_state(b);
  if (!b.measured) {
    c.result = "not decided";
    c.reason = "no paired E_res band at this boundary (none measured, or fewer than 3 rounds)";
    return c;
  }
  if (verdict != "piggyback" && verdict != "reshape") {
    c.result = "not decided";
    c.reason = fmt::format("the model gives no verdict ({}); measured {}", verdict, band_text(b));
    return c;
  }
  const bool piggyback = verdict == "piggyback";
  const bool effect_known = std::isfinite(predicted_exposure_s) && predicted_exposure_s > 0;
  const double effect_s = piggyback || !effect_known ? b.unhidden_s : predicted_exposure_s;
  const char* effect_name = piggyback || !effect_known ? "T_serial - T_FA" : "the predicted exposure";
  if (c.state == "exposed") {
    c.result = piggyback ? "disagrees" : "agrees";
    c.reason = fmt::format("{} predicted; measured {}: the band lies above zero", verdict, band_text(b));
  } else if (c.state == "negative") {
    c.result = piggyback ? "agrees" : "disagrees";
    c.reason = fmt::format("{} predicted; measured {}: fused is faster than FA-only in most rounds", verdict,
                           band_text(b));
  } else if (b.p90_s >= effect_s) {
    c.result = "not decided";
    c.reason = fmt::format("{} predicted; measured {}: the noise band holds both zero and {} ({}), so the "
                           "measurement cannot tell the verdicts apart", verdict, band_text(b), effect_name,
                           us(effect_s));
  } else {
    c.result = piggyback ? "agrees" : "disagrees";
    c.reason = fmt::format("{} predicted; measured {}: the band holds zero and stays below {} ({})", verdict,
                           band_text(b), effect_name, us(effect_s));
  }
  return c;
}

}  // namespace xs::attention
