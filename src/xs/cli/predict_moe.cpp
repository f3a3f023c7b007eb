// xstage cli layer: `xstage-predict moe` flags and their resolution (see predict_moe.hpp). The advice itself
// (model, fluid estimate, recommendation) is moe::advise; this file only turns flags into its inputs.
#include "xs/cli/predict_moe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "xs/common/error.hpp"
#include "xs/fit/calibration_file.hpp"
#include "xs/model/platform_model.hpp"
#include "xs/moe/advisor/frozen_prediction.hpp"
#include "xs/moe/advisor/moe_advisor.hpp"
#include "xs/moe/point/moe_run_point.hpp"
#include "xs/moe/point/problem.hpp"
#include "xs/moe/point/routing.hpp"
#include "xs/moe/point/shapes.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/result_file.hpp"

namespace xs::cli {
namespace {


// Realistic caps, checked before anything is allocated: the largest released MoE models have a few hundred
// routed experts, hidden and intermediate sizes in the tens of thousands, and a GPU has a few hundred SMs at
// most. Each knob alone can still ask for hours, so the advisor's work is capped too (docs/exit-codes.md), each
// product checked from the flags before any of it is done; together they keep a prediction within seconds and
// a few hundred MB:
//   - the routing draws one score per (rank, token, expert): P x T x E <= 2^28;
//   - it keeps one expert and weight per (rank, token, k) pair: P x T x k <= 2^25;
//   - the schedule replays (15 of them) walk every tile of the emulated rank, at most
//     (ceil(P T min(k, E/P) / 128) + E/P) row blocks of 2I/b_n + h/b_n tiles: <= 2^22 tiles.
// Every configs/moe/models.json shape fits all three up to T = 65,536 at P = 8 (and at P = 64, T = 8,192).
constexpr long long kMaxHidden = 65'536, kMaxIntermediate = 65'536, kMaxExperts = 4'096, kMaxTopK = 64;
constexpr long long kMaxTokensPerRank = 1 << 20, kMaxRanks = 1'024, kMaxSms = 1'024;
constexpr double kMaxRoutingDraws = 1 << 28;  // P x T x E scores
constexpr double kMaxRoutedPairs = 1 << 25;   // P x T x k (rank, token, expert) pairs
constexpr double kMaxReplayTiles = 1 << 22;   // tiles of the emulated rank, bounded from the flags
// R the advisor accepts: every drain time V/R and injection rate stays finite and meaningful within it.
constexpr double kMinDrainRateBps = 1e6, kMaxDrainRateBps = 1e15;
constexpr const char* kDrainRateRange = "1MB/s to 1000TB/s (1e6 to 1e15 B/s), e.g. --R 717GB/s";
bool drain_rate_in_range(double bps) { return bps >= kMinDrainRateBps && bps <= kMaxDrainRateBps; }

// The advisor's work from the flags alone (see the caps above): input_error naming the knobs to lower otherwise.
void check_advisor_work(const moe::AdvisorConfig& c) {
  const double num_ranks = c.num_ranks, tokens = c.tokens_per_rank, experts = c.shape.num_experts,
               top_k = c.shape.top_k;
  const std::string knobs = fmt::format("P x T = {} x {} (--P, --T), E = {}, k = {} (--experts, --top-k or the "
                                        "--shape)", c.num_ranks, c.tokens_per_rank, c.shape.num_experts,
                                        c.shape.top_k);
  const double draws = num_ranks * tokens * experts;
  if (draws > kMaxRoutingDraws)
    throw input_error("--T", fmt::format("P x T x E = {:.4g} routing scores is over the limit of 2^28 = {:.4g} (the "
                                         "advisor draws one per rank, token and expert; {}): lower --T, --P or E",
                                         draws, kMaxRoutingDraws, knobs));
  const double pairs = num_ranks * tokens * top_k;
  if (pairs > kMaxRoutedPairs)
    throw input_error("--T", fmt::format("P x T x k = {:.4g} routed pairs is over the limit of 2^25 = {:.4g} ({}): "
                                         "lower --T, --P or k", pairs, kMaxRoutedPairs, knobs));
  const double local_experts = std::max(1.0, std::floor(experts / num_ranks));
  const double row_blocks = std::ceil(num_ranks * tokens * std::min(top_k, local_experts) / 128) + local_experts;
  const double tiles_per_row = (2.0 * c.shape.intermediate + c.shape.hidden) / c.block_n;
  const double tiles = row_blocks * tiles_per_row;
  if (tiles > kMaxReplayTiles)
    throw input_error("--T", fmt::format("the schedule replay could walk {:.4g} tiles ({:.4g} row blocks of 128 "
                                         "received rows x (2I + h)/b_n = {:.4g} tiles), over the limit of 2^22 = "
                                         "{:.4g}; {}, h = {}, I = {}, b_n = {}: lower --T, --P, k, h or I{}",
                                         tiles, row_blocks, tiles_per_row, kMaxReplayTiles, knobs, c.shape.hidden,
                                         c.shape.intermediate, c.block_n,
                                         c.block_n < 256 ? ", or use --block-n 256" : ""));
}

// The advisor names its fields (block_n, precision, ...); point at the flag that sets them.
[[noreturn]] void rethrow_for_flag(const Error& e) {
  static const std::pair<const char*, const char*> kFlags[] = {
      {"block_n", "--block-n"},  {"precision", "--precision"},     {"routing", "--routing"},
      {"hidden", "--hidden"},    {"intermediate", "--intermediate"}, {"num_ranks", "--P"},
      {"num_experts", "--experts"}, {"top_k", "--top-k"},           {"gain", "--gain"},
      {"num_sms", "--ksm"}};
  for (const auto& [field, flag] : kFlags)
    if (e.field() == field) throw input_error(flag, report::bare_message(e));
  throw;  // called from a handler: the error as it was
}

moe::MoeShape resolve_shape(const PredictMoeOptions& o) {
  const bool any_dim = o.hidden || o.intermediate || o.experts || o.top_k;
  if (!o.shape.empty()) {
    if (any_dim)
      throw input_error("--shape", "give either --shape NAME or --hidden --intermediate --experts --top-k, not both");
    const auto shapes = moe::load_moe_shapes(moe::find_models_file(o.models_file));
    try {
      return moe::find_moe_shape(shapes, o.shape);
    } catch (const Error& e) {
      throw input_error("--shape", report::bare_message(e));
    }
  }
  const std::string why = "the shape: --shape NAME (configs/moe/models.json) or all of --hidden --intermediate "
                          "--experts --top-k";
  moe::MoeShape s;
  s.hidden = static_cast<int>(require(o.hidden, "--hidden", why));
  s.intermediate = static_cast<int>(require(o.intermediate, "--intermediate", why));
  s.num_experts = static_cast<int>(require(o.experts, "--experts", why));
  s.top_k = static_cast<int>(require(o.top_k, "--top-k", why));
  if (s.top_k > s.num_experts) throw input_error("--top-k", "must not exceed --experts");
  return s;
}

}  // namespace

void add_predict_moe(CLI::App& app, PredictMoeOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "moe", "MegaMoE schedule advisor: per-tile eqs. 9-16, fluid kernel time of both schedules, a recommendation.");
  cmd->footer(
      "Keys (SI; docs/predict-moe.md): shape hidden intermediate experts top_k precision T P K_SM block_m block_n\n"
      "routing zipf_alpha gain routing_seed target calibration_target target_matches R_Bps tiss0_s tiss0_V_bytes\n"
      "tiss0_extrapolated throughput_from; --tensor-tflops: tensor_flops_per_s device_sms; --from-run: run_point\n"
      "run_differences run_wave_s run_interleaved_s run_speedup run_routing_matches; T_L1_s T_L2_s n1_per_n2\n"
      "V_t_bytes V_bytes drain_time_s G_wave_s G_star_s wave_injection_rate_Bps wave_rate_bound_ok (eq. 10)\n"
      "q_peak_bytes [Q_bytes Q_is_lower_bound Q_extrapolated] capacity_bound (met|violated|not decided)\n"
      "dT_wave_s (eq. 9) wave_span_s wave_stall_per_l2_tile_s (eq. 15) G_int_s dT_int_s (eq. 13)\n"
      "interleaved_stall_per_l2_tile_s injection_rate_Bps eq14_rate_bound_ok interleaving_sufficient D_knee\n"
      "(eq. 16) D_knee_lead emulated_rank received_pairs remote_pairs num_waves remote_bytes compute_s drain_s\n"
      "t_interleaved_fluid_s; Q identified: t_wave_fluid_s fluid_speedup; else t_wave_fluid_min_s\n"
      "t_wave_fluid_max_s fluid_speedup_min fluid_speedup_max; schedule replay: replay_wave_s\n"
      "replay_interleaved_s replay_interleaved_at_D_knee_s replay_speedup; recommended_schedule\n"
      "(interleaved|either) recommended_D reason. A calibration that gives R or T_iss^0 only as a bound or\n"
      "bracket adds point_prediction (false), not_point (why), recommendation (decided|not decided) and\n"
      "recommendation_why.\n"
      "Limits (exit 2 before any work; docs/exit-codes.md): P x T x E <= 2^28 routing scores, P x T x k <= 2^25\n"
      "routed pairs, and at most 2^22 tiles for the schedule replay, (ceil(P T min(k, E/P) / 128) + E/P) x (2I + h)/b_n.");
  add_platform_flags(*cmd, o.platform, true, false);
  cmd->add_option("--shape", o.shape, "model shape by name from --models-file (e.g. dsv4_flash); or give --hidden "
                                      "--intermediate --experts --top-k")
      ->type_name("NAME");
  cmd->add_option("--models-file", o.models_file, "shapes file (default configs/moe/models.json)")->type_name("FILE");
  add_count_option(*cmd, "--hidden", o.hidden,
                   help_text("h, hidden size", "integer in [1, 65536], a multiple of b_n (--block-n); e.g. 7168",
                             "without --shape"),
                   1, kMaxHidden);
  add_count_option(*cmd, "--intermediate", o.intermediate,
                   help_text("I, expert intermediate size",
                             "integer in [1, 65536], 2I a multiple of b_n (--block-n); e.g. 2048", "without --shape"),
                   1, kMaxIntermediate);
  add_count_option(*cmd, "--experts", o.experts,
                   help_text("E, routed experts", "integer in [1, 4096]", "without --shape"), 1, kMaxExperts);
  add_count_option(*cmd, "--top-k", o.top_k, help_text("experts per token", "integer in [1, 64]", "without --shape"),
                   1, kMaxTopK);
  add_count_option(*cmd, "--T", o.tokens,
                   help_text("T, tokens per source rank", "integer in [1, 1048576]", "default 6976"), 1,
                   kMaxTokensPerRank);
  add_count_option(*cmd, "--P", o.ranks, help_text("P, EP degree", "integer in [1, 1024]", "default 8"), 1, kMaxRanks);
  add_count_option(*cmd, "--ksm", o.num_sms,
                   help_text("K_SM, participating SMs", "integer in [1, 1024]", "default 66; V = K_SM V_t (P-1)/P"),
                   1, kMaxSms);
  cmd->add_option("--precision", o.precision, "bf16 (default) or fp8 (W8A8); the Combine is bf16 in both")
      ->type_name("bf16|fp8");
  add_count_option(*cmd, "--block-n", o.block_n,
                   help_text("b_n, N-tile width", "128 or 256",
                             "default: 256 where it runs (bf16, h and 2I multiples of 256), else 128, as xstage-bench "
                             "megamoe's auto"));
  cmd->add_option("--routing", o.routing, "balanced (alpha 0) or skewed (default)")->type_name("balanced|skewed");
  add_number_option(*cmd, "--alpha", o.alpha, help_text("Zipf alpha of skewed routing", "number >= 0", "default 0.5"),
                    Sign::kNonNegative);
  add_number_option(*cmd, "--gain", o.gain, help_text("popularity gain", "number >= 0", "default 1"),
                    Sign::kNonNegative);
  add_count_option(*cmd, "--routing-seed", o.routing_seed, help_text("routing seed", "integer >= 0", "default 1"), 0);
  add_number_option(*cmd, "--tensor-tflops", o.tensor_tflops,
                    help_text("F, device tensor throughput in TFLOP/s", "number in [0.001, 1000000]; e.g. 600",
                              "T_L = 2 b_m b_n k / (F/132); or --from-run"));
  cmd->add_option("--from-run", o.from_run,
                  "megamoe result file: T_L1/T_L2 from the matching point's expert_wave mainloop medians (shape, "
                  "precision, K_SM, b_n, target must match); or --tensor-tflops")
      ->type_name("RESULT.json");
  cmd->add_option("--target", o.target, "target the prediction is for (default: the calibration's, else host)")
      ->type_name("NAME");
  cmd->add_flag("--json", o.json, "print one JSON object (SI units: bytes, seconds, bytes/s)");
}

namespace {
// The advisor's configuration from the flags (defaults filled in), its tile shape checked first: the work bound
// that follows divides by b_n.
moe::AdvisorConfig config_of(const PredictMoeOptions& o) {
  moe::AdvisorConfig c;
  c.shape = resolve_shape(o);
  c.precision = o.precision;
  c.tokens_per_rank = static_cast<int>(o.tokens.value_or(6976));
  c.num_ranks = static_cast<int>(o.ranks.value_or(8));
  c.num_sms = static_cast<int>(o.num_sms.value_or(66));
  c.block_n = o.block_n ? static_cast<int>(*o.block_n)
                        : moe::default_block_n(c.shape.hidden, c.shape.intermediate, c.precision);
  c.routing = o.routing;
  if (o.routing == "balanced" && o.alpha && *o.alpha != 0)
    throw input_error("--alpha", "balanced routing has alpha 0; drop --alpha or use --routing skewed");
  c.zipf_alpha = o.routing == "balanced" ? 0.0 : o.alpha.value_or(0.5);
  c.gain = o.gain.value_or(1.0);
  c.routing_seed = static_cast<std::uint64_t>(o.routing_seed.value_or(1));
  try {  // the tile shape first: the work bound below divides by b_n
    moe::validate_tile_and_precision(c.shape.hidden, c.shape.intermediate, c.block_n, c.precision);
  } catch (const Error& e) {
    rethrow_for_flag(e);
  }
  return c;
}
}  // namespace

std::vector<moe::AdvisorRow> run_predict_moe(const PredictMoeOptions& o) {
  moe::AdvisorConfig c = config_of(o);
  check_advisor_work(c);
  if (o.tensor_tflops && !o.from_run.empty())
    throw input_error("--from-run", "give either --tensor-tflops or --from-run, not both");
  if (!o.tensor_tflops && o.from_run.empty())
    throw_missing("--tensor-tflops", "the tile mainloop times need a throughput: --tensor-tflops F (TFLOP/s, e.g. "
                                     "600) or --from-run RESULT.json (a measured megamoe point)");

  moe::AdvisorPlatform p;
  if (!o.platform.model_path.empty()) p.calibration_target = calibration_target(o.platform.model_path);
  c.target = !o.target.empty() ? o.target : !p.calibration_target.empty() ? p.calibration_target : "host";
  // T_iss^0 at K_SM producers of V_t = b_m b_n 2 B each: the aggregate issued burst, local rows included.
  const double issued_bytes = double(c.num_sms) * 128.0 * c.block_n * 2;
  const Platform platform = resolve_platform(o.platform, c.num_sms, issued_bytes, false);
  // An R far from any link (a tiny R_Bps in the calibration) makes every drain time overflow ('inf x', a NaN that
  // names no input): refused, naming where R came from and the accepted range.
  if (!drain_rate_in_range(platform.drain_rate_bps)) {
    const bool from_flag = o.platform.drain_rate_bps.has_value() || o.platform.model_path.empty();
    throw input_error(from_flag ? "--R" : "--model",
                      fmt::format("R = {:.6g} B/s{} is outside the accepted range {}", platform.drain_rate_bps,
                                  from_flag ? "" : fmt::format(" (model.R_Bps of {})", o.platform.model_path),
                                  kDrainRateRange));
  }
  p.drain_rate_bps = platform.drain_rate_bps;
  p.tiss0_s = platform.tiss0_s;
  p.tiss0_extrapolated = platform.tiss0_extrapolated;
  p.capacity_bytes = platform.capacity_bytes;
  p.capacity_is_lower_bound = platform.capacity_is_lower_bound;
  p.capacity_extrapolated = platform.capacity_extrapolated;
  p.capacity_unavailable = platform.capacity_unavailable;

  moe::AdvisorThroughput t;
  if (o.tensor_tflops) {
    // A tensor rate from 1 GFLOP/s to 1 EFLOP/s: outside it the tile times under- or overflow (a hostile review
    // gave 1e300 and was told an internal key must be finite, and 1e-300 printed 300-digit times).
    if (!(*o.tensor_tflops >= 1e-3 && *o.tensor_tflops <= 1e6))
      throw input_error("--tensor-tflops", fmt::format("F = {:.6g} TFLOP/s is outside the accepted range 0.001 to "
                                                       "1000000 TFLOP/s (e.g. --tensor-tflops 600)",
                                                       *o.tensor_tflops));
    t.tensor_flops_per_s = *o.tensor_tflops * 1e12;
  } else {
    moe::RunPointQuery q;
    q.shape = c.shape;
    q.precision = c.precision;
    q.num_sms = c.num_sms;
    q.block_n = c.block_n;
    q.target = c.target;
    q.tokens_per_rank = c.tokens_per_rank;
    q.num_ranks = c.num_ranks;
    q.routing = c.routing;
    q.zipf_alpha = c.zipf_alpha;
    q.gain = c.gain;
    q.routing_seed = c.routing_seed;
    t.run = moe::load_run_point(o.from_run, q);
  }
  try {
    // One routing and its problem for every advice below (the bracket ends reuse them): the routing is the costly
    // part, and it is freed once the emulated rank's problem is built.
    const moe::MoeProblem problem =
        moe::build_problem(moe::generate_routing(moe::routing_params_of(c)), c.shape.hidden, c.shape.intermediate);
    moe::Advice advice = moe::advise(c, p, t, problem);
    // Without --model every parameter is a flag's point value. With it, R and T_iss^0 are the calibration's
    // brackets as moe-score's frozen predictions read them (moe::calibration_inputs), a flag given beside --model
    // replacing its parameter by that point.
    if (o.platform.model_path.empty()) return advice.rows;
    moe::CalibrationInputs cal = moe::calibration_inputs(report::read_json_file(o.platform.model_path),
                                                         fit::load_platform_model(o.platform.model_path),
                                                         o.platform.model_path, "", c.num_sms, c.block_n);
    cal.platform = p;
    const auto given = [](moe::InputBracket& b, double v, const char* flag) { b = {v, v, v, "", flag}; };
    if (o.platform.drain_rate_bps) given(cal.drain_rate_bps, p.drain_rate_bps, "--R");
    if (o.platform.tiss0_s) given(cal.tiss0_s, p.tiss0_s, "--tiss0");
    if (!moe::has_flag(cal)) return advice.rows;
    // A flagged R or T_iss^0 (issue 27 item 4): the rows are computed at the looked-up values, which no answer may
    // rest on alone. The recommendation stands only where it is the same at every end of their brackets.
    using moe::AdvisorRow;
    using moe::RowKind;
    std::string flags;
    for (const auto& [name, b] : {std::pair<const char*, const moe::InputBracket*>{"R", &cal.drain_rate_bps},
                                  {"T_iss^0", &cal.tiss0_s}})
      if (!b->flag.empty())
        flags += fmt::format("{}{}: {} [{:.4g}, {:.4g}]", flags.empty() ? "" : "; ", name, b->flag, b->low, b->high);
    std::vector<AdvisorRow> rows;
    rows.push_back({"point_prediction", RowKind::kFlag, 0, false, "",
                    "the calibration gives R or T_iss^0 only as a bound or a bracket: the rows below are at its "
                    "looked-up values, not a point prediction"});
    rows.push_back({"not_point", RowKind::kText, 0, false, flags, "why"});
    // A bracket end of R below the accepted range is not read (the advisor's times would overflow).
    const std::string differs =
        !drain_rate_in_range(std::min(cal.drain_rate_bps.low, cal.drain_rate_bps.value))
            ? fmt::format("a bracket end of R, {:.6g} B/s, is outside {}", cal.drain_rate_bps.low, kDrainRateRange)
            : moe::advice_differs_at_bracket_ends(c, cal, t, problem, advice);
    const std::string verdict = differs.empty() ? "decided" : "not decided";
    const std::string why = differs.empty() ? "the same schedule and D at every end of the brackets" : differs;
    rows.push_back({"recommendation", RowKind::kText, 0, false, verdict, "decided | not decided"});
    rows.push_back({"recommendation_why", RowKind::kText, 0, false, why, "why"});
    rows.insert(rows.end(), advice.rows.begin(), advice.rows.end());
    return rows;
  } catch (const Error& e) {
    rethrow_for_flag(e);
  }
}

}  // namespace xs::cli
