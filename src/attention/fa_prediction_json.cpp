// xstage attention host layer: fa_a2a prediction block and verdict checks (see fa_prediction_json.hpp).
#include "attention/fa_prediction_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "attention/config.hpp"
#include "attention/fa_model.hpp"
#include "attention/fa_report.hpp"
#include "attention/fa_verdict.hpp"
#include "model/burst_gap.hpp"

namespace xs::attention {
namespace {

using nlohmann::json;

json number(double x) { return std::isfinite(x) ? json(x) : json(); }
std::string us(double s) { return fmt::format("{:.1f} us", s * 1e6); }
std::string mib(double bytes) { return fmt::format("{:.2f} MiB", bytes / 1048576.0); }

// The measured E_res band at one boundary. A band needs the paired p10 <= median <= p90 (all zero: not
// measured) and, where the samples are kept, at least 3 rounds: fewer give no estimate of the noise.
ResidualBand band_of(const FaBoundary& b) {
  const TimeStats& e = *b.e_res;
  ResidualBand band;
  band.measured = (e.median_s != 0 || e.p10_s != 0 || e.p90_s != 0) && e.p10_s <= e.median_s &&
                  e.median_s <= e.p90_s && (e.samples_s.empty() || e.samples_s.size() >= 3);
  band.median_s = e.median_s;
  band.p10_s = e.p10_s;
  band.p90_s = e.p90_s;
  band.unhidden_s = b.serial->median_s > 0 ? b.serial->median_s - b.fa->median_s : 0;
  return band;
}

// Q(K) only where the calibration identified it: never a neighbour's Q across an unidentified K (the
// table leaves unidentified rows out, so a plain lookup would interpolate over them).
std::optional<model::Lookup> identified_capacity(const model::PlatformModel& platform, int k) {
  if (!platform.has_capacity()) return std::nullopt;
  const auto& rows = platform.capacity_table();
  int below = 0, above = 1 << 30;  // the identified rows around k (or open ends)
  for (const auto& row : rows) {
    if (row.num_producers <= k) below = std::max(below, row.num_producers);
    if (row.num_producers >= k) above = std::min(above, row.num_producers);
  }
  for (int u : platform.unidentified_capacity_k())
    if (u == k || (u > below && u < above)) return std::nullopt;
  return platform.capacity_bytes(k);
}

struct Explanation {
  std::string text;
  bool explained = false;
  std::vector<std::string> by;  // which measured quantities explain it (explained_by in the file)
  void because(bool accounts, const char* what) {
    if (!accounts) return;
    explained = true;
    by.push_back(what);
  }
};

bool critical_path_measured(const FaA2aPointResult& r) {
  return has_values(r.critical_qloop_paired) && has_values(r.critical_epilogue_paired) &&
         has_values(r.critical_other_paired);
}

// The clock-normalized E_res band (each launch in its own SM cycles, what the critical path's parts are in);
// the judged band where the rounds' clocks were not measured.
ResidualBand cycles_band_of(const FaA2aPointResult& r, const ResidualBand& judged) {
  const TimeStats& e = r.e_res_sender_cycles_paired;
  if (!has_values(e)) return judged;
  ResidualBand band = judged;
  band.measured = judged.measured && e.p10_s <= e.median_s && e.median_s <= e.p90_s;
  band.median_s = e.median_s;
  band.p10_s = e.p10_s;
  band.p90_s = e.p90_s;
  return band;
}

// A launch lasts as long as its slowest warpgroup. Its critical path (fa_timeline.hpp CriticalPath, per round
// fused - FA-only, clock-normalized) decomposes E_res: Q-loop growth (the compute and its K/V loads, which the
// Burst-Gap model does not describe: issue 13 item 4), epilogue growth (the stores' issue with any X-Stage stall
// in it) and the rest (late starts, gaps between tiles). This is a measured decomposition, not a prediction. A
// piggyback verdict that disagrees with an exposed measurement is explained by it when (a) the epilogue growth
// stays within the X-Stage cost the model predicts for this case (E_issue + max(E_drain, E_cap); where the
// capacity bound is undecided, the capacity-met cost E_issue + E_drain) plus the epilogue growth's own p10-p90
// spread: the stores did not stall their issuer beyond what the verdict allows; and (b) the Q-loop growth plus
// that predicted X-Stage cost is within the clock-normalized band's own width of its median: the rest of the
// exposure sits in the Q-loops, not in gaps or stalls. The aligned case takes the E_issue of the CTAs that store
// together where the measured alignment says they do not align.
void explain_by_critical_path(bool aligned_case, const FaA2aPrediction& p, const ResidualBand& judged,
                              const FaA2aPointResult& r, std::vector<std::string>& parts, Explanation& ex) {
  const ResidualBand band = cycles_band_of(r, judged);
  const bool unaligned = aligned_case && p.phase_aware.wave.alignment_measured &&
                         p.phase_aware.wave.cluster_producers < p.num_producers;
  const bool own = aligned_case && !unaligned;
  const BurstVerdict& v = own ? p.aligned : p.phase_aware;
  const double issue_s = own ? p.e_issue_s : p.e_issue_phase_aware_s;
  const TimeStats& q = r.critical_qloop_paired;
  const TimeStats& e = r.critical_epilogue_paired;
  const double stalls_s = v.capacity_decided ? std::max(p.e_drain_s, v.e_cap_s) : p.e_drain_s;
  const double x_stage_s = issue_s + stalls_s;  // predicted; capacity met where the bound is undecided
  const double epilogue_spread_s = std::max(0.0, e.p90_s - e.p10_s);
  const bool issuer_not_stalled = e.median_s <= x_stage_s + epilogue_spread_s;
  const double with_cp_s = q.median_s + x_stage_s;
  const double width_s = band.p90_s - band.p10_s;
  const bool in_qloops = band.measured && std::abs(with_cp_s - band.median_s) <= width_s;
  const bool accounts = issuer_not_stalled && in_qloops;
  const std::string whose = unaligned ? fmt::format("of the {} CTAs storing at once", p.phase_aware.wave.cluster_producers)
                                      : std::string("of this case");
  parts.push_back(fmt::format(
      "decomposed on the critical path (the warpgroup whose last store ends the launch; fused - FA-only per round, "
      "clock-normalized, median over rounds: measured, not predicted): Q-loops (compute and K/V loads) +{}, "
      "epilogues (stores issued, any X-Stage stall included) +{} (p10..p90 {}..{}), the rest +{}; the X-Stage cost "
      "predicted {}: E_issue {} + {} {} = {}, which the epilogue growth {} (by more than its own spread); Q-loop "
      "growth + that cost = {} against the clock-normalized E_res {} (p10..p90 {}..{}): {}",
      us(q.median_s), us(e.median_s), us(e.p10_s), us(e.p90_s), us(r.critical_other_paired.median_s), whose,
      us(issue_s), v.capacity_decided ? "stalls" : "E_drain (capacity bound undecided: were it met)", us(stalls_s),
      us(x_stage_s), issuer_not_stalled ? "does not exceed" : "exceeds", us(with_cp_s), us(band.median_s),
      us(band.p10_s), us(band.p90_s),
      in_qloops ? "the exposure sits in the Q-loops" : "the Q-loops do not hold the exposure within the band's width"));
  ex.because(accounts, "critical_path_decomposition");
  if (accounts && unaligned) ex.by.push_back("measured_alignment");
}

// The measured quantities that account for a disagreement, and whether they do (consistent_with_band).
Explanation explain(bool aligned_case, const VerdictCheck& check, const ResidualBand& band,
                    const FaA2aPrediction& applied, const std::optional<FaA2aPrediction>& under_load,
                    const SigmaChoice& sigma, const FaA2aPointResult& r) {
  Explanation ex;
  if (check.result != "disagrees") return ex;
  const BurstVerdict& v = aligned_case ? applied.aligned : applied.phase_aware;
  std::vector<std::string> parts;
  if (v.verdict == "piggyback") {  // measured exposed
    if (under_load && sigma.ratio > 0) {
      const double with_load_s = aligned_case ? under_load->e_res_aligned_s : under_load->e_res_phase_aware_s;
      const bool accounts = consistent_with_band(with_load_s, band);
      parts.push_back(fmt::format(
          "Q-loop under store load: sigma_fused / sigma_FA = {:.3f}, E_load = N_t ceil(M/b_n) (sigma_fused - "
          "sigma_FA) = {}; {}", sigma.ratio, us(under_load->e_load_s),
          std::isfinite(with_load_s)
              ? fmt::format("predicted E_res with it {} {} the measured band", us(with_load_s),
                            accounts ? "accounts for" : "does not account for")
              : std::string("no E_res predicted with it (capacity bound undecided)")));
      ex.because(accounts, "sigma_under_load");
      // The aligned case's E_issue assumes all K CTAs issue at once. Where the measured alignment says fewer
      // do (and the phase-aware case also predicts piggyback), each CTA issues beside its cluster only: the
      // phase-aware E_res with the same load term is the magnitude to compare.
      const double phase_s = under_load->e_res_phase_aware_s;
      if (aligned_case && !accounts && under_load->phase_aware.wave.alignment_measured &&
          under_load->phase_aware.wave.cluster_producers < under_load->num_producers &&
          under_load->phase_aware.verdict == "piggyback" && std::isfinite(phase_s)) {
        const bool phase_accounts = consistent_with_band(phase_s, band);
        parts.push_back(fmt::format(
            "the CTAs do not align (at most {} of K = {} store at once): with each CTA's issue time that of its "
            "cluster, E_issue = {}, the predicted E_res {} {} the measured band", under_load->phase_aware.wave
            .cluster_producers, under_load->num_producers, us(under_load->e_issue_phase_aware_s), us(phase_s),
            phase_accounts ? "accounts for" : "does not account for"));
        // The same fact as the phase-aware case's explanation (its E_res), reached from the aligned verdict.
        ex.because(phase_accounts, "sigma_under_load_with_the_measured_alignment");
      } else if (aligned_case && !accounts && under_load->phase_aware.wave.alignment_measured &&
                 under_load->phase_aware.wave.cluster_producers < under_load->num_producers &&
                 under_load->phase_aware.verdict == "undecided") {
        // The same magnitude check, but the cluster's capacity bound is undecided: say what it would give,
        // and leave the disagreement unexplained.
        const double met_s = under_load->e_res_capacity_met_phase_aware_s;
        parts.push_back(fmt::format(
            "the CTAs do not align (at most {} of K = {} store at once): were the cluster's capacity bound met "
            "(the calibration leaves it undecided at K_c = {}), E_issue = {} and E_res = {}, {} the band widened by "
            "its width",
            under_load->phase_aware.wave.cluster_producers, under_load->num_producers,
            under_load->phase_aware.wave.cluster_producers, us(under_load->e_issue_phase_aware_s), us(met_s),
            consistent_with_band(met_s, band) ? "within" : "outside"));
      }
      if (!ex.explained && critical_path_measured(r)) explain_by_critical_path(aligned_case, *under_load, band, r, parts, ex);
    }
    if (r.fa_only_layout != "ulysses")
      parts.push_back(fmt::format("FA-only writes the '{}' layout, fused the Ulysses one: E_res also holds the "
                                  "layout difference", r.fa_only_layout));
  } else {  // reshape, measured not exposed
    if (aligned_case && applied.phase_aware.verdict == "piggyback") {
      parts.push_back(fmt::format(
          "the CTAs do not align: at most {} of K = {} store at once, store starts spread {} per wave; phase-aware "
          "peak outstanding {} against the aligned {}", applied.phase_aware.wave.cluster_producers,
          applied.num_producers, us(r.store_phase_spread_median_s), mib(applied.phase_aware.wave.peak_bytes),
          mib(applied.aligned.wave.peak_bytes)));
      ex.because(true, "measured_alignment");
    } else if (aligned_case && applied.phase_aware.verdict == "undecided" && applied.phase_aware.wave.alignment_measured &&
               applied.phase_aware.wave.cluster_producers < applied.num_producers && critical_path_measured(r) &&
               applied.aligned.capacity_decided) {
      // The CTAs that store together have an undecided capacity bound; whether their bursts stalled is measured:
      // a stall holds the issuing warpgroup in its epilogue, on the critical path too. Explained only where the
      // epilogue growth (with its own spread) stays within the cluster's E_issue and well below the stall the
      // aligned case predicts.
      const TimeStats& e = r.critical_epilogue_paired;
      const double spread_s = std::max(0.0, e.p90_s - e.p10_s);
      const double aligned_stall_s = std::max(applied.e_drain_s, applied.aligned.e_cap_s);
      const bool no_stall = e.median_s <= applied.e_issue_phase_aware_s + spread_s &&
                            e.p90_s < 0.5 * aligned_stall_s;
      parts.push_back(fmt::format(
          "the CTAs do not align: at most {} of K = {} store at once, store starts spread {} per wave; their "
          "capacity bound is undecided by the calibration, but on the critical path the epilogues grew by {} "
          "(p10..p90 {}..{}; stores issued, any X-Stage stall included) against their E_issue {} and the aligned "
          "case's predicted stall {}: {}",
          applied.phase_aware.wave.cluster_producers, applied.num_producers, us(r.store_phase_spread_median_s),
          us(e.median_s), us(e.p10_s), us(e.p90_s), us(applied.e_issue_phase_aware_s), us(aligned_stall_s),
          no_stall ? "the stores did not stall their issuer" : "not shown that the stores did not stall their issuer"));
      if (no_stall) {
        ex.because(true, "measured_alignment");
        ex.by.push_back("critical_path_epilogue");
      }
    }
    if (!applied.design.rate_bound_ok && under_load && under_load->design.rate_bound_ok) {
      parts.push_back(fmt::format("with the fused launch's sigma the Q-loop gap {} reaches G* = {}: the rate "
                                  "bound holds under load", us(under_load->qloop_gap_s),
                                  us(under_load->recovery_gap_s)));
      ex.because(true, "sigma_under_load_rate_bound");
    }
    const double pred_s = aligned_case ? applied.e_res_aligned_s : applied.e_res_phase_aware_s;
    if (consistent_with_band(pred_s, band)) {
      parts.push_back(fmt::format("the predicted E_res {} is within the band widened by its own width",
                                  us(pred_s)));
      ex.because(true, "predicted_magnitude");
    }
  }
  if (!ex.explained) parts.push_back("not explained by a measured quantity in this file");
  for (std::size_t i = 0; i < parts.size(); ++i) ex.text += (i ? "; " : "") + parts[i];
  return ex;
}

json wave_json(const BurstVerdict& v, double tile_bytes, double e_issue_s, double e_res_pred_s,
               double e_res_pred_min_s, double e_res_capacity_met_s) {
  return {{"K_cluster", v.wave.cluster_producers}, {"V_bytes", v.wave.cluster_producers * tile_bytes},
          {"E_issue_s", e_issue_s}, {"E_res_pred_capacity_met_s", number(e_res_capacity_met_s)},
          {"window_s", v.wave.window_s}, {"q_cluster_bytes", v.wave.cluster_bytes},
          {"q_wave_bytes", v.wave.wave_bytes}, {"q_peak_bytes", v.wave.peak_bytes},
          {"capacity_bound_ok", v.capacity_decided ? json(v.capacity_bound_ok) : json()},
          {"E_cap_s", v.capacity_decided ? number(v.e_cap_s) : json()},
          {"E_cap_min_s", v.capacity_decided ? number(v.e_cap_min_s) : json()},
          {"E_res_pred_s", number(e_res_pred_s)}, {"E_res_pred_min_s", number(e_res_pred_min_s)},
          {"verdict", v.verdict}};
}

// Where Q(K) was not identified: the bracket that decided (or left undecided) the capacity bound.
json bracket_json(const model::CapacityBracket& b, bool used) {
  if (!used) return json();
  return {{"lower_bytes", b.lower_bytes}, {"upper_bytes", number(b.upper_bytes)},
          {"lower_from_K", b.lower_from_k}, {"upper_from_K", b.upper_from_k}, {"consistent", b.consistent},
          {"note", "Q not identified: a floor burst of K' <= K producers bounds it below, a drained burst of K' >= "
                   "K above (Q nondecreasing in K); met if q_peak <= lower, violated if q_peak >= upper; "
                   "inconsistent (lower >= upper): nothing decided by it"}};
}

// The predicted E_res range [lo, hi] against the band widened by its own width (consistent_with_band).
bool range_consistent_with_band(double lo_s, double hi_s, const ResidualBand& b) {
  if (!b.measured || !std::isfinite(lo_s) || !std::isfinite(hi_s)) return false;
  const double width_s = b.p90_s - b.p10_s;
  return hi_s >= b.p10_s - width_s && lo_s <= b.p90_s + width_s;
}

// The verdict is binary; `E_res_pred_within_band` adds whether the predicted magnitude is consistent with the
// measured band (a "reshape ... agrees" may still predict far more exposure than measured).
json check_json(const VerdictCheck& c, const Explanation& ex, double e_res_pred_s, double e_res_pred_min_s,
                const ResidualBand& band) {
  const bool disagrees = c.result == "disagrees";
  const double lo_s = std::isfinite(e_res_pred_min_s) ? e_res_pred_min_s : e_res_pred_s;
  return {{"result", c.result}, {"measured_state", c.state}, {"reason", c.reason},
          {"explanation", disagrees ? json(ex.text) : json()}, {"explained", disagrees ? json(ex.explained) : json()},
          {"explained_by", disagrees ? json(ex.by) : json()},
          {"E_res_pred_within_band", std::isfinite(e_res_pred_s) && band.measured
                                         ? json(range_consistent_with_band(lo_s, e_res_pred_s, band)) : json()}};
}

json by_sigma_json(const std::optional<FaA2aPrediction>& p, double sigma_s) {
  if (!p) return json();
  return {{"sigma_s_per_kv_tile", sigma_s}, {"G_qloop_s", p->qloop_gap_s}, {"rate_bound_ok", p->design.rate_bound_ok},
          {"E_drain_s", p->e_drain_s}, {"E_load_s", p->e_load_s},
          {"aligned", {{"verdict", p->aligned.verdict}, {"E_res_pred_s", number(p->e_res_aligned_s)}}},
          {"phase_aware", {{"verdict", p->phase_aware.verdict}, {"E_res_pred_s", number(p->e_res_phase_aware_s)}}}};
}

// The prediction with the lone instrumented launches' sigmas (cycles at the reference clock); null where the
// rounds' sigmas were not used or a lone launch's clock is missing.
json lone_json(const std::optional<FaA2aPrediction>& p, double sigma_fa_s, double sigma_fused_s,
               const ResidualBand& band) {
  if (!p) return json();
  json j = by_sigma_json(p, sigma_fused_s);
  j["sigma_compute_only_s_per_kv_tile"] = sigma_fa_s;
  j["ratio_under_load_over_compute_only"] = sigma_fused_s / sigma_fa_s;
  j["phase_aware"]["E_res_pred_within_band"] =
      std::isfinite(p->e_res_phase_aware_s) && band.measured ? json(consistent_with_band(p->e_res_phase_aware_s, band))
                                                             : json();
  j["note"] = "sigmas of the lone instrumented FA-only and fused launches (not part of the judged rounds), each in "
              "its own clock's cycles, in seconds at the reference clock";
  return j;
}

}  // namespace

void add_prediction_json(const FaA2aPointSpec& spec, const FaA2aPointResult& r, const model::PlatformModel& platform,
                         json& j) {
  // Sigma from the sender-side rounds (the regime E_res is measured in; cycles, at the FA-only rounds' median
  // clock) where measured; else from the single instrumented launches (each in seconds at its own clock).
  double sigma_fa_s = r.sigma_fa_s_per_kv_tile, sigma_fused_s = r.sigma_s_per_kv_tile;
  const double ref_hz = r.clock_fa_hz.median_s;
  const bool from_rounds =
      r.sigma_rounds_fa_cycles.median_s > 0 && r.sigma_rounds_fused_cycles.median_s > 0 && ref_hz > 0;
  if (from_rounds) {
    sigma_fa_s = r.sigma_rounds_fa_cycles.median_s / ref_hz;
    sigma_fused_s = r.sigma_rounds_fused_cycles.median_s / ref_hz;
  }
  const SigmaChoice sigma = choose_sigma(sigma_fa_s, sigma_fused_s, r.qloop_fused.median_s, r.qloop_fused.p10_s,
                                         r.qloop_fused.p90_s);
  if (sigma.applied_s <= 0) return;
  // The aligned burst of the model: K CTAs x one output tile each.
  const int k = std::min(r.num_ctas, std::max(r.num_tiles, 1));
  const int head_dim = spec.head_dim > 0 ? spec.head_dim : kernels::attention::TileShape::kHeadDim;
  const double tile_bytes = model::fa_tile_bytes(kernels::attention::TileShape::kBlockM, head_dim,
                                                 kernels::attention::TileShape::kElemBytes);
  const auto tiss0 = platform.tiss0_s(k, k * tile_bytes);
  const std::optional<model::Lookup> q_of_k = identified_capacity(platform, k);
  const bool q_known = q_of_k.has_value();
  const model::Lookup capacity = q_of_k.value_or(model::Lookup{});
  FaA2aModelInputs in;
  in.seq_len = spec.seq_len;
  in.num_heads = spec.num_heads;
  in.num_ctas = r.num_ctas;
  in.head_dim = head_dim;
  in.drain_rate_bps = platform.drain_rate_bps();
  in.tiss0_s = tiss0.value;
  in.capacity_bytes = q_known ? capacity.value : 0;
  in.capacity_is_lower_bound = capacity.is_lower_bound;
  // Q(K) not identified, or only a lower bound: the bracket the isolated bursts of every K give it
  // (model::CapacityBracket), which decides the capacity bound wherever the burst lies outside it.
  const model::CapacityBracket bracket = platform.capacity_bracket(k);
  const bool use_bracket = !q_known || capacity.is_lower_bound;
  if (use_bracket) {  // a contradictory bracket decides nothing (q = 0 aside)
    in.capacity_bytes = bracket.consistent ? bracket.lower_bytes : 0;
    in.capacity_is_lower_bound = true;
    in.capacity_upper_bytes = bracket.consistent ? bracket.upper_bytes : INFINITY;
    in.capacity_bracketed = true;
  }
  in.alignment = {r.store_phase_spread_median_s, r.peak_concurrent_storers, r.mean_concurrent_storers};
  // The phase-aware case checks against Q(K_c) of the CTAs storing at once (fa_verdict.hpp).
  const int k_cluster = phase_aware_wave_outstanding(k, tile_bytes, in.drain_rate_bps, in.tiss0_s, in.alignment)
                            .cluster_producers;
  in.tiss0_cluster_s = platform.tiss0_s(k_cluster, k_cluster * tile_bytes).value;
  const std::optional<model::Lookup> q_of_cluster = identified_capacity(platform, k_cluster);
  in.phase_capacity_bytes = q_of_cluster ? q_of_cluster->value : 0;
  in.phase_capacity_is_lower_bound = q_of_cluster && q_of_cluster->is_lower_bound;
  const model::CapacityBracket cluster_bracket = platform.capacity_bracket(k_cluster);
  const bool use_cluster_bracket = !q_of_cluster || q_of_cluster->is_lower_bound;
  if (use_cluster_bracket) {  // the design test (eq. 10) reads Q(K) only: capacity_bracketed is not set here
    in.phase_capacity_bytes = cluster_bracket.consistent ? cluster_bracket.lower_bytes : 0;
    in.phase_capacity_is_lower_bound = true;
    in.phase_capacity_upper_bytes = cluster_bracket.consistent ? cluster_bracket.upper_bytes : INFINITY;
  }
  auto predict_with = [&](double sigma_s, double compute_only_s) {
    FaA2aModelInputs x = in;
    x.sigma_s_per_kv_tile = sigma_s;
    x.sigma_compute_only_s_per_kv_tile = compute_only_s;
    return predict_fa_a2a(x);
  };
  std::optional<FaA2aPrediction> compute_only, under_load;
  if (sigma.compute_only_s > 0) compute_only = predict_with(sigma.compute_only_s, 0);
  // E_load needs both sigmas; with only the fused one the prediction has no load term.
  if (sigma.under_load_s > 0) under_load = predict_with(sigma.under_load_s, sigma.compute_only_s);
  const FaA2aPrediction& p = sigma.applied == "under_load" ? *under_load : *compute_only;
  // The rounds' sigmas come from the very launches whose fused - FA-only difference is E_res, so where E_load
  // carries the prediction it decomposes the residual rather than predicting it. Beside it: the same
  // prediction with the lone instrumented launches' sigmas (each in its own clock's cycles, at the same
  // reference clock), which are not part of the judged rounds.
  std::optional<FaA2aPrediction> lone;
  double lone_fa_s = 0, lone_fused_s = 0;
  if (from_rounds && r.sm_clock_fa_hz > 0 && r.sm_clock_hz > 0 && r.sigma_fa_s_per_kv_tile > 0 &&
      r.sigma_s_per_kv_tile > 0) {
    lone_fa_s = r.sigma_fa_s_per_kv_tile * r.sm_clock_fa_hz / ref_hz;
    lone_fused_s = r.sigma_s_per_kv_tile * r.sm_clock_hz / ref_hz;
    lone = predict_with(lone_fused_s, lone_fa_s);
  }

  const FaBoundary boundary = judged_boundary(r);
  const ResidualBand band = band_of(boundary);
  VerdictCheck aligned_check = check_verdict(p.aligned.verdict, p.e_res_aligned_s, band);
  VerdictCheck phase_check = check_verdict(p.phase_aware.verdict, p.e_res_phase_aware_s, band);
  // An undecided capacity bound still leaves what the model predicts if it holds (E_load can be most of it).
  for (auto [c, v, met_s] : {std::tuple{&aligned_check, &p.aligned, p.e_res_capacity_met_s},
                             std::tuple{&phase_check, &p.phase_aware, p.e_res_capacity_met_phase_aware_s}})
    if (v->verdict == "undecided" && band.measured)
      c->reason += fmt::format("; were the capacity bound met, E_res would be {}, {} the band widened by its width",
                               us(met_s), consistent_with_band(met_s, band) ? "within" : "outside");
  const Explanation aligned_ex = explain(true, aligned_check, band, p, under_load, sigma, r);
  const Explanation phase_ex = explain(false, phase_check, band, p, under_load, sigma, r);

  const double iso_s = model::isolated_issue_time_s(in.tiss0_s, p.burst_bytes, in.drain_rate_bps,
                                                    q_known ? capacity.value : INFINITY);
  json aligned = wave_json(p.aligned, p.tile_bytes, p.e_issue_s, p.e_res_aligned_s, p.e_res_aligned_min_s,
                           p.e_res_capacity_met_s);
  aligned["check"] = check_json(aligned_check, aligned_ex, p.e_res_aligned_s, p.e_res_aligned_min_s, band);
  aligned["Q_bracket"] = bracket_json(bracket, use_bracket);
  json phase = wave_json(p.phase_aware, p.tile_bytes, p.e_issue_phase_aware_s, p.e_res_phase_aware_s,
                         p.e_res_phase_aware_min_s, p.e_res_capacity_met_phase_aware_s);
  phase["Q_bracket"] = bracket_json(cluster_bracket, use_cluster_bracket);
  phase["alignment_measured"] = p.phase_aware.wave.alignment_measured;
  phase["tiss0_cluster_s"] = in.tiss0_cluster_s;
  phase["Q_bytes"] = q_of_cluster ? json(q_of_cluster->value) : json();
  phase["Q_is_lower_bound"] = q_of_cluster && q_of_cluster->is_lower_bound;
  phase["phase_spread_s"] = r.store_phase_spread_median_s;
  phase["peak_concurrent_storers"] = r.peak_concurrent_storers;
  phase["mean_concurrent_storers"] = r.mean_concurrent_storers;
  const double uniform = mean_storers_if_uniform(p.num_producers, r.store_phase_spread_median_s,
                                                 r.store_span_fused.median_s);
  phase["mean_storers_if_uniform"] = uniform > 0 ? json(uniform) : json();
  phase["check"] = check_json(phase_check, phase_ex, p.e_res_phase_aware_s, p.e_res_phase_aware_min_s, band);
  j["prediction"] = {
      {"K", p.num_producers}, {"tile_bytes", p.tile_bytes}, {"V_bytes", p.burst_bytes}, {"N_t", p.num_bursts},
      {"R_Bps", in.drain_rate_bps}, {"tiss0_s", in.tiss0_s}, {"tiss0_extrapolated", tiss0.extrapolated},
      {"Q_bytes", q_known ? json(capacity.value) : json()},
      {"Q_is_lower_bound", capacity.is_lower_bound}, {"Q_identified", q_known},
      {"G_qloop_s", p.qloop_gap_s}, {"G_star_s", p.recovery_gap_s}, {"M_ub_tokens", p.seq_len_bound_tokens},
      {"dt_s", p.drain_stall_s}, {"dt_prime_s", p.critical_stall_s}, {"E_drain_s", p.e_drain_s},
      {"dt_cc_s", p.dt_cc_s}, {"E_cc_s", p.e_cc_s},
      {"T_iss_iso_s", q_known ? json(iso_s) : json()},
      {"E_cap_aligned_s", p.aligned.capacity_decided ? number(p.aligned.e_cap_s) : json()},
      {"rate_bound_ok", p.design.rate_bound_ok},
      {"capacity_bound_ok", p.aligned.capacity_decided ? json(p.aligned.capacity_bound_ok) : json()},
      {"q_peak_bytes", p.design.peak_outstanding_bytes}, {"verdict", p.aligned.verdict},
      {"verdict_phase_aware", p.phase_aware.verdict},
      {"sigma", {{"compute_only_s_per_kv_tile", sigma.compute_only_s}, {"under_load_s_per_kv_tile", sigma.under_load_s},
                 {"ratio_under_load_over_compute_only", sigma.ratio > 0 ? json(sigma.ratio) : json()},
                 {"qloop_relative_spread", sigma.relative_spread}, {"applied", sigma.applied},
                 {"applied_s_per_kv_tile", sigma.applied_s}, {"why", sigma.why},
                 {"source", from_rounds ? "sender_side_rounds" : "instrumented_launches"},
                 {"reference_clock_hz", from_rounds ? json(ref_hz) : json()},
                 {"e_load_from_judged_launches", from_rounds}}},
      {"by_sigma", {{"compute_only", by_sigma_json(compute_only, sigma.compute_only_s)},
                    {"under_load", by_sigma_json(under_load, sigma.under_load_s)},
                    {"lone_launches", lone_json(lone, lone_fa_s, lone_fused_s, band)}}},
      {"E_issue_s", p.e_issue_s}, {"E_load_s", p.e_load_s}, {"E_res_pred_capacity_met_s", p.e_res_capacity_met_s},
      {"judged_at", boundary.name},
      {"noise_band", {{"measured", band.measured}, {"median_s", band.median_s}, {"p10_s", band.p10_s},
                      {"p90_s", band.p90_s}, {"T_serial_minus_T_FA_s", band.unhidden_s}}},
      {"aligned", aligned}, {"phase_aware", phase}};
  std::string summary = fmt::format("aligned-case test (paper): {} -> {}; phase-aware: {} -> {} (judged at {}). {}",
                                    p.aligned.verdict, aligned_check.result, p.phase_aware.verdict,
                                    phase_check.result, boundary.name, aligned_check.reason);
  if (!q_known)
    summary += fmt::format(". Q(K={}) is not identified by the calibration; its isolated bursts bracket it in [{}, {})",
                           k, mib(bracket.lower_bytes),
                           std::isfinite(bracket.upper_bytes) ? mib(bracket.upper_bytes) : std::string("inf"));
  for (const auto* ex : {&aligned_ex, &phase_ex})
    if (!ex->text.empty()) summary += fmt::format(". {}: {}", ex == &aligned_ex ? "aligned" : "phase-aware", ex->text);
  j["agreement"] = summary;
}

}  // namespace xs::attention
