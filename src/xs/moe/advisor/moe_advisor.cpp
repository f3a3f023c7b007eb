// xstage moe host layer: the `xstage-predict moe` advisor (see moe_advisor.hpp): per-tile model, fluid
// whole-kernel times of both schedules on the emulated rank, and the recommendation with its reason.
#include "xs/moe/advisor/moe_advisor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "xs/common/error.hpp"
#include "xs/common/units.hpp"
#include "xs/model/burst_gap.hpp"
#include "xs/moe/point/problem.hpp"
#include "xs/moe/point/routing.hpp"

namespace xs::moe {
namespace {

namespace m = xs::model;

class Rows {
 public:
  explicit Rows(std::vector<AdvisorRow>& out) : out_(out) {}
  void seconds(const std::string& k, double x, const std::string& n) { value(k, RowKind::kSeconds, x, n); }
  void bytes(const std::string& k, double x, const std::string& n) { value(k, RowKind::kBytes, x, n); }
  void rate(const std::string& k, double x, const std::string& n) { value(k, RowKind::kRate, x, n); }
  void number(const std::string& k, double x, const std::string& n) { value(k, RowKind::kNumber, x, n); }
  void integer(const std::string& k, double x, const std::string& n) { value(k, RowKind::kInteger, x, n); }
  void flag(const std::string& k, bool x, const std::string& n) { out_.push_back({k, RowKind::kFlag, 0, x, "", n}); }
  void text(const std::string& k, const std::string& x, const std::string& n) {
    out_.push_back({k, RowKind::kText, 0, false, x, n});
  }

 private:
  void value(const std::string& k, RowKind kind, double x, const std::string& n) {
    out_.push_back({k, kind, x, false, "", n});
  }
  std::vector<AdvisorRow>& out_;
};

double ratio(double num, double den) { return den > 0 ? num / den : std::numeric_limits<double>::infinity(); }

constexpr double kReplayTie = 0.02;  // the replay picks D and overrides the schedule outside this band

// The recommendation from the per-tile model (eqs. 10, 14, 15), in the order that decides it.
void recommend(Advice& a, const AdvisorPlatform& platform) {
  const MoePrediction& p = a.tile;
  const std::string d =
      a.lead_rows == a.knee_lead_rows
          ? fmt::format("D = {} (= max(1, ceil(D_knee)), and the schedule replay finds no better D)", a.lead_rows)
          : fmt::format("D = {} (the schedule replay's smallest D within 2% of its best time, since eq. 16's "
                        "max(1, ceil(D_knee)) = {} replays {:.2f}x slower: CTAs wait on one another's Linear-1 tiles)",
                        a.lead_rows, a.knee_lead_rows, ratio(a.replay_interleaved_knee_s, a.replay_leads.makespan_s));
  if (p.wave_stall_per_l2_tile_s <= 0) {
    a.schedule = "either";
    a.reason = fmt::format(
        "either: no drain-bound wave stall predicted: T_L2 = {} covers the wave span max(T_iss^0, V/R) = {} (coarse "
        "experts), so interleaving has no modelled stall to remove and may cost weight locality",
        format_seconds(p.l2_mainloop_s), format_seconds(std::max(platform.tiss0_s, p.drain_time_s)));
    return;
  }
  a.schedule = "interleaved";
  const std::string cut = fmt::format("it cuts the modelled stall per L2 tile from {} to {}",
                                      format_seconds(p.wave_stall_per_l2_tile_s),
                                      format_seconds(p.interleaved_stall_per_l2_tile_s));
  if (!p.rate_bound_ok) {
    a.reason = fmt::format(
        "interleaved, {}, but eq. 14 fails (injection {} > R = {}): interleaving alone cannot reach the "
        "backpressure-free floor ({}); reduce the aggregate burst V (smaller K_SM or b_n, or fewer remote ranks)",
        d, format_rate(p.interleaved_injection_rate_bps), format_rate(platform.drain_rate_bps), cut);
  } else if (p.capacity_bound == BoundVerdict::kViolated) {
    a.reason = fmt::format(
        "interleaved, {}, but eq. 10's capacity bound fails (q_peak = {} > Q = {}): interleaving alone cannot reach "
        "the backpressure-free floor ({}); reduce the aggregate burst V (smaller K_SM or b_n)",
        d, format_bytes(p.peak_outstanding_bytes), format_bytes(platform.capacity_bytes.value_or(0)), cut);
  } else if (p.capacity_bound == BoundVerdict::kMet) {
    a.reason = fmt::format("interleaved, {}: eq. 14 and eq. 10's capacity bound hold, so "
                           "interleaving removes the modelled wave stall ({} per L2 tile)",
                           d, format_seconds(p.wave_stall_per_l2_tile_s));
  } else {
    a.reason = fmt::format("interleaved, {}: eq. 14 holds, so interleaving removes the modelled "
                           "rate-bound wave stall ({} per L2 tile); eq. 10's capacity bound is not decided (Q(K_SM) "
                           "not identified), so sufficiency is not decided",
                           d, format_seconds(p.wave_stall_per_l2_tile_s));
  }
}

// The schedule replay (schedule_sim.hpp) overrides a recommendation whose interleaved kernel it finds slower
// than the expert-wave one by more than the tie band: the dependency waits the per-tile model cannot see.
void apply_replay(Advice& a) {
  const double inter = a.replay_leads.makespan_s, wave = a.replay_wave_s;
  if (!(inter > wave * (1 + kReplayTie))) return;
  a.schedule = "expert_wave";
  a.reason = fmt::format("expert_wave: the schedule replay of this routing's tiles gives interleaved (best D = {}) {} "
                         "against expert-wave {} ({:.3f}x): with these tile times its dependency waits cost more than "
                         "the modelled wave stall it removes (per-tile model: {})",
                         a.lead_rows, format_seconds(inter), format_seconds(wave), ratio(wave, inter), a.reason);
}

std::string fluid_sentence(const Advice& a) {
  const double inter = a.fluid_no_limit.interleaved_s;
  if (a.fluid_at_capacity)
    return fmt::format("; fluid whole kernel: expert-wave {}, interleaved {} ({:.3f}x)",
                       format_seconds(a.fluid_at_capacity->wave_schedule_s), format_seconds(inter),
                       ratio(a.fluid_at_capacity->wave_schedule_s, inter));
  return fmt::format("; fluid whole kernel: expert-wave {} (Q = inf) to {} (slowest Q allowed), interleaved {} "
                     "({:.3f}x to {:.3f}x)",
                     format_seconds(a.fluid_no_limit.wave_schedule_s), format_seconds(a.fluid_worst.wave_schedule_s),
                     format_seconds(inter), ratio(a.fluid_no_limit.wave_schedule_s, inter),
                     ratio(a.fluid_worst.wave_schedule_s, inter));
}

// The advice's report rows (docs/predict-moe.md) of what it was made from: the configuration, the platform and the
// throughput.
void add_input_rows(Rows& r, const Advice& a, const AdvisorConfig& c, const AdvisorPlatform& platform,
                    const AdvisorThroughput& throughput, const MoeProblem& problem, int block_m) {
  const MoePrediction& p = a.tile;
  const bool target_known = !platform.calibration_target.empty();
  r.text("shape", c.shape.name.empty() ? "custom" : c.shape.name, "configs/moe/models.json name, or custom");
  r.integer("hidden", c.shape.hidden, "h");
  r.integer("intermediate", c.shape.intermediate, "I, expert intermediate");
  r.integer("experts", c.shape.num_experts, "E, routed experts");
  r.integer("top_k", c.shape.top_k, "experts per token");
  r.text("precision", c.precision, "GEMM precision (the Combine is bf16 in both)");
  r.integer("T", c.tokens_per_rank, "tokens per source rank");
  r.integer("P", c.num_ranks, "EP degree; (P-1)/P of the Combine rows are remote");
  r.integer("K_SM", c.num_sms, "participating SMs = aligned producers");
  r.integer("block_m", block_m, "b_m");
  r.integer("block_n", c.block_n, "b_n");
  r.text("routing", c.routing, "balanced (alpha 0) or skewed");
  r.number("zipf_alpha", c.zipf_alpha, "alpha, Zipf skew of expert popularity");
  r.number("gain", c.gain, "weight of the popularity bias");
  r.integer("routing_seed", static_cast<double>(c.routing_seed), "routing seed");
  r.text("target", c.target, "the target the prediction is meant for");
  r.text("calibration_target", target_known ? platform.calibration_target : "not known",
         "target the calibration measured (not known with --R/--tiss0)");
  if (target_known) r.flag("target_matches", platform.calibration_target == c.target, "calibration target == target");
  r.rate("R_Bps", platform.drain_rate_bps, "R, effective drain rate");
  r.seconds("tiss0_s", platform.tiss0_s, "T_iss^0(K_SM, K_SM V_t), backpressure-free issue time");
  r.bytes("tiss0_V_bytes", c.num_sms * p.tile_combine_bytes, "K_SM V_t, the volume T_iss^0 was looked up at");
  r.flag("tiss0_extrapolated", platform.tiss0_extrapolated, "(K, V) outside the model's T_iss^0 table");
  if (throughput.run) {
    const RunPoint& run = *throughput.run;
    r.text("throughput_from", "measured", "T_L1, T_L2 = the run's expert_wave mainloop medians");
    r.text("run_point", run.source + ": " + run.description, "the measured point used");
    std::string diffs;
    for (const auto& d : run.differences) diffs += (diffs.empty() ? "" : ", ") + d;
    r.text("run_differences", diffs.empty() ? "none" : diffs, "preferred axes the point does not match");
    if (run.wave_median_s) r.seconds("run_wave_s", *run.wave_median_s, "measured expert_wave median per launch");
    if (run.interleaved_median_s)
      r.seconds("run_interleaved_s", *run.interleaved_median_s, "measured interleaved median per launch");
    if (run.wave_median_s && run.interleaved_median_s)
      r.number("run_speedup", ratio(*run.wave_median_s, *run.interleaved_median_s), "measured wave / interleaved");
    if (run.same_routing && run.received_pairs && run.remote_pairs)
      r.flag("run_routing_matches",
             *run.received_pairs == double(problem.num_received_pairs) &&
                 *run.remote_pairs == double(problem.num_remote_pairs),
             "the run's received/remote pairs equal this routing's");
  } else {
    r.text("throughput_from", "--tensor-tflops", "T_L = 2 b_m b_n k / (F / device_sms)");
    r.number("tensor_flops_per_s", *throughput.tensor_flops_per_s, "F, device tensor throughput (FLOP/s)");
    r.integer("device_sms", c.device_sms, "SMs F is spread over");
  }
}

// The advice's report rows of the model's terms (eqs. 1-16), the schedule replay, the routing's work, the fluid
// estimate and the recommendation.
void add_model_rows(Rows& r, const Advice& a, const AdvisorPlatform& platform, const MoeProblem& problem,
                    const std::vector<WaveWork>& waves) {
  const MoePrediction& p = a.tile;
  r.seconds("T_L1_s", p.l1_mainloop_s, "T_L1^mma, Linear-1 tile mainloop");
  r.seconds("T_L2_s", p.l2_mainloop_s, "T_L2^mma, Linear-2 tile mainloop");
  r.number("n1_per_n2", p.l1_per_l2_tiles, "n1/n2 = 2I/h, L1 tiles per L2 tile");
  r.bytes("V_t_bytes", p.tile_combine_bytes, "V_t = b_m b_n 2 B, one L2 tile's Combine rows");
  r.bytes("V_bytes", p.burst_bytes, "V = K_SM V_t (P-1)/P, aligned remote burst");
  r.seconds("drain_time_s", p.drain_time_s, "V/R (eq. 1)");
  r.seconds("G_wave_s", p.wave_gap_s, "G_wave ~ T_L2");
  r.seconds("G_star_s", m::recovery_gap_s(platform.tiss0_s, p.burst_bytes, platform.drain_rate_bps),
            "G* = [V/R - T_iss^0]+ (eq. 5)");
  const double wave_rate = ratio(p.burst_bytes, platform.tiss0_s + p.wave_gap_s);
  r.rate("wave_injection_rate_Bps", wave_rate, "V / (T_iss^0 + G_wave) (eq. 10)");
  r.flag("wave_rate_bound_ok", wave_rate <= platform.drain_rate_bps, "eq. 10 rate bound at G_wave");
  r.bytes("q_peak_bytes", p.peak_outstanding_bytes, "[V - R T_iss^0]+ (eq. 6)");
  if (platform.capacity_bytes) {
    r.bytes("Q_bytes", *platform.capacity_bytes, "Q(K_SM)");
    r.flag("Q_is_lower_bound", platform.capacity_is_lower_bound, "Q(K) from the model is only a lower bound");
    r.flag("Q_extrapolated", platform.capacity_extrapolated, "K outside the model's Q table");
  }
  r.text("capacity_bound", bound_verdict_name(p.capacity_bound),
         p.capacity_bound != BoundVerdict::kNotDecided ? "q_peak <= Q (eq. 10)"
         : platform.capacity_unavailable.empty()     ? "q_peak <= Q (eq. 10): no Q given (--Q or a --model with Q)"
                                                     : platform.capacity_unavailable);
  r.seconds("dT_wave_s", p.wave_issue_overhead_s, "[V/R - G_wave - T_iss^0]+ (eq. 9)");
  r.seconds("wave_span_s", std::max(platform.tiss0_s, p.drain_time_s), "T_RS ~ max(T_iss^0, V/R), wave schedule");
  r.seconds("wave_stall_per_l2_tile_s", p.wave_stall_per_l2_tile_s, "[T_RS - T_L2]+ (eq. 15)");
  r.seconds("G_int_s", p.interleaved_gap_s, "T_L2 + (n1/n2) T_L1 (eq. 14)");
  r.seconds("dT_int_s", p.interleaved_issue_overhead_s, "[dT_wave - (n1/n2) T_L1]+ (eq. 13)");
  r.seconds("interleaved_stall_per_l2_tile_s", p.interleaved_stall_per_l2_tile_s, "[V/R - G_int]+");
  r.rate("injection_rate_Bps", p.interleaved_injection_rate_bps, "V / (T_iss^0 + G_int) (eq. 14)");
  r.flag("eq14_rate_bound_ok", p.rate_bound_ok, "eq. 14: injection <= R");
  r.text("interleaving_sufficient", bound_verdict_name(p.interleaving_sufficient), "eqs. 14 and 10 both hold");
  r.number("D_knee", p.lead_knee_rows, "b_n K_SM / (2I), scheduler rows (eq. 16)");
  r.integer("D_knee_lead", a.knee_lead_rows, "max(1, ceil(D_knee)), eq. 16's lead alone");
  r.seconds("replay_wave_s", a.replay_wave_s,
            "schedule replay (src/xs/kernels/moe/scheduler.cuh): expert-wave kernel time, L2 tiles T_L2 + wave stall");
  r.seconds("replay_interleaved_s", a.replay_leads.makespan_s,
            "schedule replay: interleaved kernel time at recommended_D, L2 tiles T_L2 + interleaved stall");
  r.seconds("replay_interleaved_at_D_knee_s", a.replay_interleaved_knee_s,
            "schedule replay: interleaved at D_knee_lead");
  r.number("replay_speedup", ratio(a.replay_wave_s, a.replay_leads.makespan_s),
           "replayed expert-wave / interleaved at recommended_D");
  r.integer("emulated_rank", problem.emulated_rank, "the most loaded rank, whose work is modelled");
  r.integer("received_pairs", double(problem.num_received_pairs), "(token, top-k) pairs it computes");
  r.integer("remote_pairs", double(problem.num_remote_pairs), "pairs whose Combine row goes to another rank");
  r.integer("num_waves", double(waves.size()), "expert waves (one local expert each)");
  double remote_bytes = 0;
  for (const WaveWork& w : waves) remote_bytes += w.remote_bytes;
  r.bytes("remote_bytes", remote_bytes, "remote Combine bytes of the launch");
  r.seconds("compute_s", a.fluid_no_limit.compute_s, "fluid: sum of tile mainloops / K_SM");
  r.seconds("drain_s", a.fluid_no_limit.drain_s, "fluid: remote bytes / R");
  r.seconds("t_interleaved_fluid_s", a.fluid_no_limit.interleaved_s, "fluid: max(compute, drain)");
  if (a.fluid_at_capacity) {
    r.seconds("t_wave_fluid_s", a.fluid_at_capacity->wave_schedule_s, "fluid expert-wave time at Q");
    r.number("fluid_speedup", ratio(a.fluid_at_capacity->wave_schedule_s, a.fluid_no_limit.interleaved_s),
             "fluid wave / interleaved");
  } else {
    r.seconds("t_wave_fluid_min_s", a.fluid_no_limit.wave_schedule_s, "fluid expert-wave time at Q = infinity");
    r.seconds("t_wave_fluid_max_s", a.fluid_worst.wave_schedule_s,
              platform.capacity_bytes ? "fluid expert-wave time at Q's lower bound"
                                      : "fluid expert-wave time at Q = 0");
    r.number("fluid_speedup_min", ratio(a.fluid_no_limit.wave_schedule_s, a.fluid_no_limit.interleaved_s),
             "fluid wave (Q = inf) / interleaved");
    r.number("fluid_speedup_max", ratio(a.fluid_worst.wave_schedule_s, a.fluid_no_limit.interleaved_s),
             "fluid wave (slowest Q) / interleaved");
  }
  r.text("recommended_schedule", a.schedule, "interleaved, either or expert_wave");
  r.integer("recommended_D", a.lead_rows,
            "the interleaved row lead: max(1, ceil(D_knee)) unless its replayed time is more than 2% "
            "above the best replayed D's, then the smallest replayed D within 2% of the best");
  r.text("reason", a.reason, "why");
}

}  // namespace

MoePrediction predict_with_mainloops(MoeModelInputs in, double l1_mainloop_s, double l2_mainloop_s) {
  if (!(std::isfinite(l1_mainloop_s) && l1_mainloop_s > 0 && std::isfinite(l2_mainloop_s) && l2_mainloop_s > 0))
    throw input_error("mainloop", "T_L1 and T_L2 must be finite times > 0");
  // The F that gives this T_L2: predict_megamoe then yields every quantity that does not involve T_L1. (Bad
  // shape fields make this F meaningless, but predict_megamoe checks them before F and names them.)
  in.tensor_flops_per_s = 2.0 * in.block_m * in.block_n * in.intermediate / l2_mainloop_s * in.device_sms;
  MoePrediction p = predict_megamoe(in);
  const double n1 = 2.0 * in.intermediate / in.block_n, n2 = double(in.hidden) / in.block_n;
  p.l1_mainloop_s = l1_mainloop_s;
  p.interleaved_gap_s = m::interleaved_gap_s(p.l2_mainloop_s, n1, n2, l1_mainloop_s);
  p.interleaved_issue_overhead_s = m::interleaved_issue_overhead_s(p.wave_issue_overhead_s, n1, n2, l1_mainloop_s);
  p.interleaved_stall_per_l2_tile_s = std::max(0.0, p.drain_time_s - p.interleaved_gap_s);
  p.interleaved_injection_rate_bps =
      m::interleaved_injection_rate_bps(p.burst_bytes, in.tiss0_s, p.l2_mainloop_s, l1_mainloop_s, n1, n2);
  p.rate_bound_ok = p.interleaved_injection_rate_bps <= in.drain_rate_bps;
  const bool violated = !p.rate_bound_ok || p.capacity_bound == BoundVerdict::kViolated;
  p.interleaving_sufficient = violated ? BoundVerdict::kViolated : p.capacity_bound;
  return p;
}

// The routing of the configuration (the runner builds the same one from the same fields).
AdvisorConfig advisor_config_of(const MoePointSpec& s) {
  AdvisorConfig c;
  c.shape = s.shape;
  c.precision = s.precision;
  c.tokens_per_rank = s.tokens_per_rank;
  c.num_ranks = s.num_ranks;
  c.num_sms = s.num_ctas;
  c.block_n = s.block_n;
  c.routing = s.routing;
  c.zipf_alpha = s.routing == "balanced" ? 0.0 : s.zipf_alpha;
  c.gain = s.gain;
  c.routing_seed = s.routing_seed;
  c.target = s.target;
  return c;
}

RoutingParams routing_params_of(const AdvisorConfig& c) {
  RoutingParams rp;
  rp.num_ranks = c.num_ranks;
  rp.tokens_per_rank = c.tokens_per_rank;
  rp.num_experts = c.shape.num_experts;
  rp.top_k = c.shape.top_k;
  rp.zipf_alpha = c.zipf_alpha;
  rp.gain = c.gain;
  rp.seed = c.routing_seed;
  return rp;
}

Advice advise(const AdvisorConfig& c, const AdvisorPlatform& platform, const AdvisorThroughput& throughput) {
  return advise(c, platform, throughput,
                build_problem(generate_routing(routing_params_of(c)), c.shape.hidden, c.shape.intermediate));
}

Advice advise(const AdvisorConfig& c, const AdvisorPlatform& platform, const AdvisorThroughput& throughput,
              const MoeProblem& problem) {
  if (c.precision != "bf16" && c.precision != "fp8")
    throw input_error("precision", "'" + c.precision + "' is not a precision; accepted: bf16, fp8");
  if (c.routing != "balanced" && c.routing != "skewed")
    throw input_error("routing", "'" + c.routing + "' is not a routing; accepted: balanced, skewed");
  if (c.block_n != 128 && c.block_n != 256) throw input_error("block_n", "b_n must be 128 or 256");
  if (bool(throughput.tensor_flops_per_s) == bool(throughput.run))
    throw input_error("throughput", "give exactly one of a tensor throughput F and a measured run");
  validate_tile_shape(c.shape.hidden, c.shape.intermediate, c.block_n);

  MoeModelInputs in;
  in.hidden = c.shape.hidden;
  in.intermediate = c.shape.intermediate;
  in.num_ranks = c.num_ranks;
  in.num_sms = c.num_sms;
  in.device_sms = c.device_sms;
  in.block_n = c.block_n;
  in.drain_rate_bps = platform.drain_rate_bps;
  in.tiss0_s = platform.tiss0_s;
  const auto predict = [&](const MoeModelInputs& x) {
    if (throughput.run) return predict_with_mainloops(x, throughput.run->l1_mainloop_s, throughput.run->l2_mainloop_s);
    MoeModelInputs with_f = x;
    with_f.tensor_flops_per_s = *throughput.tensor_flops_per_s;
    return predict_megamoe(with_f);
  };
  // A lower bound on Q decides the capacity bound only where q_peak stays below it.
  const bool q_identified = platform.capacity_bytes && !platform.capacity_is_lower_bound;
  Advice a;
  a.tile = predict(in);
  if (q_identified || (platform.capacity_bytes && a.tile.peak_outstanding_bytes <= *platform.capacity_bytes)) {
    in.capacity_bytes = platform.capacity_bytes;
    a.tile = predict(in);
  }
  const MoePrediction& p = a.tile;
  a.knee_lead_rows = m::knee_lead_rows(p.lead_knee_rows);

  // The emulated rank (the most loaded) of this routing, and its expert waves under ExpertWave{1}.
  if (problem.hidden != c.shape.hidden || problem.intermediate != c.shape.intermediate ||
      problem.num_ranks != c.num_ranks || problem.tokens_per_rank != c.tokens_per_rank || problem.top_k != c.shape.top_k)
    throw input_error("problem", "the given problem was not built from this configuration (h, I, P, T or top-k differ)");
  const std::vector<WaveWork> waves = expert_waves(problem, c.block_n, 1);
  const double inf = std::numeric_limits<double>::infinity();
  const auto fluid = [&](double q) {
    return fluid_kernel_estimate(waves, c.num_sms, p.l1_mainloop_s, p.l2_mainloop_s, platform.drain_rate_bps, q);
  };
  a.fluid_no_limit = fluid(inf);
  if (q_identified) a.fluid_at_capacity = fluid(*platform.capacity_bytes);
  a.fluid_worst = q_identified ? *a.fluid_at_capacity : fluid(platform.capacity_bytes.value_or(0.0));

  // The schedule replay: the kernel's own schedules over this routing's tiles, with the model's tile times
  // (each L2 tile carries its schedule's modelled stall). It picks D and can overrule the per-tile verdict.
  const TileDurations wave_tiles{p.l1_mainloop_s, p.l2_mainloop_s + p.wave_stall_per_l2_tile_s};
  const TileDurations inter_tiles{p.l1_mainloop_s, p.l2_mainloop_s + p.interleaved_stall_per_l2_tile_s};
  std::vector<int> leads = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 64};
  if (std::find(leads.begin(), leads.end(), a.knee_lead_rows) == leads.end()) leads.push_back(a.knee_lead_rows);
  a.replay_leads = choose_lead_rows(problem, c.block_n, c.num_sms, inter_tiles, leads, kReplayTie);
  for (const auto& [lead, span] : a.replay_leads.sweep)
    if (lead == a.knee_lead_rows) a.replay_interleaved_knee_s = span;
  // eq. 16's lead stands unless the replay finds it slower than its best by more than the tie band; then the
  // smallest D inside the band (a small lead keeps weight locality).
  if (a.replay_interleaved_knee_s <= a.replay_leads.best_makespan_s * (1 + kReplayTie)) {
    a.replay_leads.lead_rows = a.knee_lead_rows;
    a.replay_leads.makespan_s = a.replay_interleaved_knee_s;
  }
  a.lead_rows = a.replay_leads.lead_rows;
  a.replay_wave_s = simulate_schedule(problem, c.block_n, c.num_sms, "expert_wave", 1, wave_tiles).makespan_s;

  recommend(a, platform);
  apply_replay(a);
  a.reason += fluid_sentence(a);
  const bool target_known = !platform.calibration_target.empty();
  if (target_known && platform.calibration_target != c.target)
    a.reason += fmt::format("; the calibration measured target '{}', not '{}': the prediction is for the "
                            "calibration's path",
                            platform.calibration_target, c.target);

  // ---- report rows (docs/predict-moe.md) ----
  Rows r(a.rows);
  add_input_rows(r, a, c, platform, throughput, problem, in.block_m);
  add_model_rows(r, a, platform, problem, waves);
  return a;
}

}  // namespace xs::moe
