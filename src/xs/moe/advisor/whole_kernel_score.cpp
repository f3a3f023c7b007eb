// xstage moe judge layer: whole-kernel MegaMoE predictions and their score (see whole_kernel_score.hpp).
#include "xs/moe/advisor/whole_kernel_score.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"
#include "xs/moe/point/routing.hpp"
#include "xs/moe/model/time_model.hpp"

namespace xs::moe {
namespace {

using json = nlohmann::json;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTransferSharpRelative = 0.05;  // the bar's tolerance: a sharp transfer interval is within +-5%

// The reference fit's grid: s = 1 + a [offered / R - b]+. (a, b) = (0, 0) is the identity.
const std::vector<double> kGridA = {0.0, 0.25, 0.5, 1.0, 2.0, 4.0};
const std::vector<double> kGridB = {0.25, 0.5, 0.75, 1.0};

model::SlowdownSource knee_term(double a, double b) {
  model::SlowdownSource s;
  s.status = model::InterferenceStatus::kIdentified;
  s.label = fmt::format("application-data reference s = 1 + {} [offered/R - {}]+", a, b);
  s.slowdown = [a, b](const model::LoadState& l) {
    const double x = 1.0 + a * std::max(0.0, l.offered_rate_bps / l.drain_rate_bps - b);
    return model::SlowdownBracket{x, x, x};
  };
  return s;
}

double number_field(const json& row, const char* key, const std::string& path) {
  if (!row.contains(key) || !row[key].is_number()) throw input_error(path + "." + key, "missing or not a number");
  const double x = row[key].get<double>();
  if (!(x > 0) || !std::isfinite(x)) throw input_error(path + "." + key, "must be a finite number > 0");
  return x;
}

// Where the term is used below its calibrated range it is a bracket, not a law: the time is a point only where those
// loads cannot add more than the outcomes resolve (1%, as for Q). The reason, else "".
std::string below_range_reason(const TimeModelResult& r) {
  if (!(r.term_below_extra_s > 0.01 * r.kernel_s)) return "";
  return fmt::format("the interference term is used below its calibrated range at {} loads, where it is only the "
                     "bracket [1, its high end at the calibrated minimum]: they may add up to {:.4g} s, over 1% of the "
                     "replayed {:.4g} s (no point)", r.term_below_loads, r.term_below_extra_s, r.kernel_s);
}

struct Replayer {
  const MoeProblem& problem;
  const AdvisorConfig& config;
  // The kernel time, or NaN with why_not where the replay could not run. extrapolated: where the term was used
  // outside its calibration, the time is still returned and *extrapolated says why (empty otherwise).
  double run(const ScheduleOption& o, const TimeModelInputs& in, const model::SlowdownSource& term,
             BracketSide side, std::string* why_not = nullptr, std::string* extrapolated = nullptr) const {
    const TimeModelResult r = time_model(problem, config.block_n, config.num_sms, o.schedule,
                                         std::max(1, o.lead_rows), std::max(1, o.experts_per_wave), in, term, side);
    if (!r.computed) {
      if (why_not) *why_not = r.why_not;
      return NAN;
    }
    if (extrapolated) *extrapolated = !r.term_outside_calibration.empty() ? r.term_outside_calibration : below_range_reason(r);
    return r.kernel_s;
  }
};

// Q(K_SM) where the calibration gives no point: the replay at its bracket's low end (the high end is what the
// point was replayed at). A gap over kCapacityPointRelative of the time (the +-1% the outcomes resolve) means Q decides
// the time, and the time is no point: the reason, else "".
constexpr double kCapacityPointRelative = 0.01;  // the outcomes' own resolution (+-1% of the median)
std::string capacity_dependence(const Replayer& rp, const ScheduleOption& o, const TimeModelInputs& at_hi,
                                const PathInputs& path, const model::SlowdownSource& term, double time_at_hi_s) {
  if (!std::isfinite(time_at_hi_s)) return "";
  if (path.capacity_is_point && path.capacity_lo_bytes == path.capacity_hi_bytes) return "";
  TimeModelInputs at_lo = at_hi, at_top = at_hi;
  at_lo.capacity_bytes = std::max(1.0, path.capacity_lo_bytes);
  at_top.capacity_bytes = path.capacity_hi_bytes;
  const double t_lo = rp.run(o, at_lo, term, BracketSide::kMid);
  // An identified Q was replayed at its point: its ci95's ends must both stay within the resolution of it.
  const double t_top = path.capacity_is_point ? rp.run(o, at_top, term, BracketSide::kMid) : time_at_hi_s;
  const auto close = [&](double t) {
    return std::isfinite(t) && std::fabs(t - time_at_hi_s) <= kCapacityPointRelative * time_at_hi_s;
  };
  if (close(t_lo) && close(t_top)) return "";
  return fmt::format("{}, and the replay depends on it: {:.4g} s at Q's low end {:.4g} B, {:.4g} s at its high end "
                     "{:.4g} B (no point; the interval spans Q's bracket)", path.capacity_text, t_lo,
                     at_lo.capacity_bytes, time_at_hi_s, at_hi.capacity_bytes);
}

// The transfer of one option: the local control's measured time (base = measured - the local replay) plus the host
// replay (h: the host path with the local control's tile times), its interval over R's ci95, Q's bracket and the
// term's sides; no point where the term is extrapolated or Q decides the time (the why says which).
void predict_transfer(const Replayer& rp, const ScheduleOption& o, const TimeModelInputs& h, double base,
                      const WholeKernelSettings& s, const model::SlowdownSource& identity, WholeKernelOption& wo) {
  // The replay without the term is a prediction too: no point where Q decides its time either.
  if (const double t = rp.run(o, h, identity, BracketSide::kMid); capacity_dependence(rp, o, h, s.path, identity, t).empty())
    wo.transfer_no_term_s = base + t;
  const TimeModelResult mid_r =
      time_model(rp.problem, rp.config.block_n, rp.config.num_sms, o.schedule,
                 std::max(1, o.lead_rows), std::max(1, o.experts_per_wave), h, s.term);
  const std::string extrapolated = !mid_r.computed ? std::string()
                                   : !mid_r.term_outside_calibration.empty() ? mid_r.term_outside_calibration
                                                                             : below_range_reason(mid_r);
  if (!extrapolated.empty()) {
    // An extrapolation of the term is no point prediction (issue 27 item 4): not decided, the time a diagnostic.
    wo.transfer_why_not = extrapolated;
    wo.transfer_extrapolated_s = base + mid_r.kernel_s;
  } else if (mid_r.computed) {
    const double mid = mid_r.kernel_s;
    wo.replay_host_s = mid;
    wo.mean_slowdown_l2 = mid_r.mean_slowdown_l2;
    wo.transfer_why_not = capacity_dependence(rp, o, h, s.path, s.term, mid);
    if (wo.transfer_why_not.empty()) wo.transfer_s = base + mid;
    TimeModelInputs lo = h, hi = h;  // the interval: R's ci95, Q's bracket and the term's sides
    lo.drain_rate_bps = s.path.drain_rate_hi_bps;
    lo.capacity_bytes = s.path.capacity_hi_bytes;
    hi.drain_rate_bps = s.path.drain_rate_lo_bps;
    hi.capacity_bytes = std::max(1.0, s.path.capacity_lo_bytes);
    wo.transfer_lo_s = base + rp.run(o, lo, s.term, BracketSide::kLow);
    wo.transfer_hi_s = base + rp.run(o, hi, s.term, BracketSide::kHigh);
  } else {
    wo.transfer_why_not = mid_r.why_not;
  }
}


std::optional<double> opt(double x) { return std::isfinite(x) ? std::optional<double>(x) : std::nullopt; }

const MeasuredOption* find_option(const std::vector<MeasuredOption>& v, const ScheduleOption& o) {
  for (const MeasuredOption& m : v)
    if (m.option == o) return &m;
  return nullptr;
}

TileTimeInputs tiles_from_gemm_rate(const AdvisorConfig& c, const GemmRate& g) {
  AdvisorConfig cc = c;
  cc.device_sms = g.device_sms;
  TileTimeInputs a = tile_times_from_rate(cc, g.l1_flops_per_s, g.source);
  const TileTimeInputs b = tile_times_from_rate(cc, g.l2_flops_per_s, g.source);
  a.l2_s = b.l2_s;
  return a;
}

double abs_err(double pred, double meas) { return std::fabs(pred / meas - 1.0); }

// Per option with a local control: the replays the reference fit needs, per grid point.
struct RefRow {
  std::size_t config = 0, option = 0;
  double local_measured = 0, host_measured = 0, replay_local = 0;
  std::vector<double> replay_host;  // per grid point
};

// The reference fit's inputs gathered while predicting: its grid of (a, b), the identity first, and the rows.
struct ReferenceReplays {
  std::vector<std::pair<double, double>> grid;
  std::vector<RefRow> rows;
  ReferenceReplays() {
    grid.emplace_back(0.0, 0.0);
    for (double a : kGridA)
      for (double b : kGridB)
        if (a > 0) grid.emplace_back(a, b);
  }
};

// One configuration being predicted: its inputs, its replayer and the host path's inputs (no tile times yet).
struct ConfigContext {
  const ScoreConfigInputs& in;
  const Replayer& rp;
  const TimeModelInputs& host_in;
  const WholeKernelSettings& s;
  const model::SlowdownSource& identity;
  std::size_t config_idx = 0;  // its index in WholeKernelResult::configs
};

// The host path's replay inputs of a configuration: R, Q (its point, else its bracket's high end) and the k blocks.
TimeModelInputs host_inputs(const ScoreConfigInputs& in, const PathInputs& path) {
  TimeModelInputs host_in;
  host_in.drain_rate_bps = path.drain_rate_bps;
  host_in.capacity_bytes = path.capacity_is_point ? path.capacity_bytes : path.capacity_hi_bytes;
  host_in.l1_k_blocks = in.config.shape.hidden / 64;        // L1: k = h
  host_in.l2_k_blocks = in.config.shape.intermediate / 64;  // L2: k = I
  return host_in;
}

// The ab initio tile times: a measured per-shape GEMM rate, else the spec-sheet F the host point recorded
// before its run; none where neither is there.
std::optional<TileTimeInputs> abinitio_tiles(const ScoreConfigInputs& in, const WholeKernelSettings& s) {
  std::optional<TileTimeInputs> ab_tiles;
  for (const GemmRate& g : s.gemm_rates)
    if (g.shape == in.config.shape.name && g.precision == in.config.precision) ab_tiles = tiles_from_gemm_rate(in.config, g);
  if (!ab_tiles && in.tensor_flops_per_s) {
    GemmRate g{in.config.shape.name, in.config.precision, *in.tensor_flops_per_s, *in.tensor_flops_per_s,
               in.config.device_sms, "spec-sheet F (" + in.flops_source + "), not a measured GEMM rate"};
    ab_tiles = tiles_from_gemm_rate(in.config, g);
  }
  return ab_tiles;
}

// The transfer prediction of one option from its local control (none without one), and where the reference fit
// runs (K_SM = 66), the option's replays per grid point for it.
void predict_option_transfer(const ConfigContext& cx, const MeasuredOption& hm, std::size_t option_idx,
                             WholeKernelOption& wo, ReferenceReplays& ref) {
  if (!cx.in.local_tiles) {
    wo.transfer_why_not = "no local control of this configuration";
    return;
  }
  if (!wo.local_measured_s) {
    wo.transfer_why_not = "the local control did not run " + hm.option.key();
    return;
  }
  TimeModelInputs local_in;
  local_in.l1_s = cx.in.local_tiles->l1_s.value;
  local_in.l2_s = cx.in.local_tiles->l2_s.value;
  TimeModelInputs h = cx.host_in;
  h.l1_s = local_in.l1_s;
  h.l2_s = local_in.l2_s;
  wo.replay_local_s = cx.rp.run(hm.option, local_in, cx.identity, BracketSide::kMid);
  const double base = *wo.local_measured_s - wo.replay_local_s;
  predict_transfer(cx.rp, hm.option, h, base, cx.s, cx.identity, wo);
  if (cx.s.reference_fit && cx.in.config.num_sms == 66) {
    RefRow row;
    row.config = cx.config_idx;
    row.option = option_idx;
    row.local_measured = *wo.local_measured_s;
    row.host_measured = hm.median_s;
    row.replay_local = wo.replay_local_s;
    for (const auto& [a, b] : ref.grid)
      row.replay_host.push_back(cx.rp.run(hm.option, h, knee_term(a, b), BracketSide::kMid));
    ref.rows.push_back(std::move(row));
  }
}

// The ab initio prediction of one option from the GEMM-rate tile times: the local and host replays (no host point
// where the term is extrapolated or Q decides the time) and the schedule-free constant.
void predict_option_abinitio(const ConfigContext& cx, const MeasuredOption& hm, const TileTimeInputs& ab_tiles,
                             WholeKernelOption& wo) {
  TimeModelInputs local_in;
  local_in.l1_s = ab_tiles.l1_s.value;
  local_in.l2_s = ab_tiles.l2_s.value;
  TimeModelInputs h = cx.host_in;
  h.l1_s = local_in.l1_s;
  h.l2_s = local_in.l2_s;
  wo.abinitio_local_s = cx.rp.run(hm.option, local_in, cx.identity, BracketSide::kMid);
  std::string why, extrapolated;
  wo.abinitio_host_s = opt(cx.rp.run(hm.option, h, cx.s.term, BracketSide::kMid, &why, &extrapolated));
  if (!wo.abinitio_host_s) wo.abinitio_why_not = why;
  if (wo.abinitio_host_s && extrapolated.empty())
    if (std::string q = capacity_dependence(cx.rp, hm.option, h, cx.s.path, cx.s.term, *wo.abinitio_host_s); !q.empty()) {
      wo.abinitio_host_s.reset();
      wo.abinitio_why_not = q;
    }
  if (!extrapolated.empty()) {
    wo.abinitio_host_extrapolated_s = wo.abinitio_host_s;
    wo.abinitio_host_s.reset();
    wo.abinitio_why_not = extrapolated;
  }
  const auto tiles = cx.rp.problem.tile_space(cx.in.config.block_n);
  wo.abinitio_constant_s =
      (double(tiles.num_l1_tiles()) * local_in.l1_s + double(tiles.num_l2_tiles()) * local_in.l2_s) /
      cx.in.config.num_sms;
}

// Every judged option of one configuration predicted (transfer and ab initio); the reference fit's replays are
// added to `ref`.
WholeKernelConfig predict_config(const ScoreConfigInputs& in, const WholeKernelSettings& s,
                                 const model::SlowdownSource& identity, std::size_t config_idx, ReferenceReplays& ref) {
  WholeKernelConfig wc;
  wc.label = in.judged.label;
  wc.shape = in.config.shape.name;
  wc.num_sms = in.config.num_sms;
  wc.pairs = in.judged.pairs;
  const MoeProblem problem = build_problem(generate_routing(routing_params_of(in.config)), in.config.shape.hidden,
                                           in.config.shape.intermediate);
  const Replayer rp{problem, in.config};
  const TimeModelInputs host_in = host_inputs(in, s.path);
  const std::optional<TileTimeInputs> ab_tiles = abinitio_tiles(in, s);
  const std::string ab_why = "no GEMM rate: neither --gemm-rates nor a recorded tensor_flops_per_s";
  const ConfigContext cx{in, rp, host_in, s, identity, config_idx};
  for (const MeasuredOption& hm : in.judged.options) {
    WholeKernelOption wo;
    wo.option = hm.option;
    wo.host_measured_s = hm.median_s;
    if (const MeasuredOption* lm = find_option(in.local_options, hm.option)) wo.local_measured_s = lm->median_s;
    predict_option_transfer(cx, hm, wc.options.size(), wo, ref);
    if (ab_tiles) predict_option_abinitio(cx, hm, *ab_tiles, wo);
    else wo.abinitio_why_not = ab_why;
    wc.options.push_back(wo);
  }
  return wc;
}

// The trivial transfer: host = local x the median host/local ratio, per schedule, of the other shapes.
void add_constant_transfers(std::vector<WholeKernelConfig>& configs) {
  for (WholeKernelConfig& c : configs)
    for (WholeKernelOption& o : c.options) {
      if (!o.local_measured_s) continue;
      std::vector<double> ratios;
      for (const WholeKernelConfig& d : configs)
        if (d.shape != c.shape && d.num_sms == c.num_sms)
          for (const WholeKernelOption& p : d.options)
            if (p.option.schedule == o.option.schedule && p.local_measured_s && p.host_measured_s)
              ratios.push_back(*p.host_measured_s / *p.local_measured_s);
      if (!ratios.empty()) o.transfer_constant_s = *o.local_measured_s * median(ratios);
    }
}

// The application-data reference for one shape left out: the grid point with the smallest median |error| on the
// other shapes, and the left-out shape's options predicted with it (their transfer_reference_s).
ReferenceFit fit_reference_for_shape(const std::string& shape, const ReferenceReplays& ref,
                                     std::vector<WholeKernelConfig>& configs) {
  ReferenceFit best;
  best.left_out_shape = shape;
  best.train_median_error = kInf;
  bool any_other_shape = false;
  for (std::size_t gi = 0; gi < ref.grid.size(); ++gi) {
    std::vector<double> errs;
    for (const RefRow& r : ref.rows) {
      if (configs[r.config].shape == shape) continue;
      any_other_shape = true;
      const double e = abs_err(r.local_measured - r.replay_local + r.replay_host[gi], r.host_measured);
      if (std::isfinite(e)) errs.push_back(e);  // a replay that is not finite trains nothing
    }
    if (errs.empty()) continue;
    const double m = median(errs);
    if (m < best.train_median_error) {
      best.identified = true;
      best.train_median_error = m;
      best.a = ref.grid[gi].first;
      best.b = ref.grid[gi].second;
      for (const RefRow& r : ref.rows) {
        if (configs[r.config].shape != shape) continue;
        const double t = r.local_measured - r.replay_local + r.replay_host[gi];
        auto& slot = configs[r.config].options[r.option].transfer_reference_s;
        if (std::isfinite(t)) slot = t; else slot.reset();
      }
    }
  }
  if (!best.identified)
    best.why_not = any_other_shape
                       ? "not identified: no grid point gives a finite error on the other shapes' host K_SM=66 transfers"
                       : "not identified: no other shape with a host K_SM=66 transfer to fit on (leave-one-shape-out "
                         "needs two shapes)";
  return best;
}

}  // namespace

std::vector<GemmRate> read_gemm_rates(const json& doc, const std::string& file) {
  if (!doc.is_object() || !doc.contains("rates") || !doc["rates"].is_array())
    throw input_error(file, "expected {\"schema\": {\"name\": \"xstage.gemm_rates\"}, \"rates\": [...]}");
  std::vector<GemmRate> out;
  for (std::size_t i = 0; i < doc["rates"].size(); ++i) {
    const json& r = doc["rates"][i];
    const std::string path = fmt::format("{}: rates[{}]", file, i);
    GemmRate g;
    if (!r.contains("shape") || !r["shape"].is_string()) throw input_error(path + ".shape", "missing or not a string");
    g.shape = r["shape"].get<std::string>();
    g.precision = r.value("precision", std::string("bf16"));
    g.l1_flops_per_s = number_field(r, "l1_flops_per_s", path);
    g.l2_flops_per_s = number_field(r, "l2_flops_per_s", path);
    g.device_sms = static_cast<int>(r.value("device_sms", 132));
    if (g.device_sms < 1) throw input_error(path + ".device_sms", "must be >= 1");
    g.source = r.value("source", file);
    out.push_back(g);
  }
  return out;
}

WholeKernelResult predict_whole_kernel(const ScoreInputs& inputs, const WholeKernelSettings& s) {
  WholeKernelResult res;
  res.term_label = s.term.label;
  res.term_status = s.term.usable() ? "identified" : s.term.reason_not_usable();
  const model::SlowdownSource identity = model::no_interference("Burst-Gap replay without the interference term");
  ReferenceReplays ref;
  for (const ScoreConfigInputs& in : inputs.configs) {
    WholeKernelConfig wc = predict_config(in, s, identity, res.configs.size(), ref);
    res.configs.push_back(std::move(wc));
  }
  add_constant_transfers(res.configs);
  // The application-data reference: leave one shape out, pick the grid point with the smallest median |error|
  // on the others, predict the shape left out with it.
  std::set<std::string> shapes;
  for (const RefRow& r : ref.rows) shapes.insert(res.configs[r.config].shape);
  for (const std::string& shape : shapes) res.reference_fits.push_back(fit_reference_for_shape(shape, ref, res.configs));
  return res;
}

namespace {

struct ErrorStats {
  int n = 0;
  std::optional<double> median_abs, p90_abs, median_signed;
};
ErrorStats stats_of(const std::vector<std::pair<double, double>>& pm) {  // (predicted, measured)
  ErrorStats s;
  std::vector<double> a, g;
  for (const auto& [p, m] : pm) {
    a.push_back(std::fabs(p / m - 1));
    g.push_back(p / m - 1);
  }
  s.n = static_cast<int>(a.size());
  if (!a.empty()) {
    s.median_abs = median(a);
    s.p90_abs = quantile(a, 0.9);
    s.median_signed = median(g);
  }
  return s;
}
json to_json(const ErrorStats& s) {
  const auto o = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
  return {{"n", s.n}, {"abs_error_median", o(s.median_abs)}, {"abs_error_p90", o(s.p90_abs)},
          {"signed_error_median", o(s.median_signed)}};
}

using Getter = std::optional<double> (*)(const WholeKernelOption&);
std::optional<double> g_transfer(const WholeKernelOption& o) { return o.transfer_s; }
std::optional<double> g_no_term(const WholeKernelOption& o) { return o.transfer_no_term_s; }
std::optional<double> g_constant(const WholeKernelOption& o) { return o.transfer_constant_s; }
std::optional<double> g_reference(const WholeKernelOption& o) { return o.transfer_reference_s; }
std::optional<double> g_ab_host(const WholeKernelOption& o) { return o.abinitio_host_s; }
std::optional<double> g_ab_const(const WholeKernelOption& o) { return o.abinitio_constant_s; }
std::optional<double> g_local_measured(const WholeKernelOption& o) { return o.local_measured_s; }

const WholeKernelOption* option_at(const WholeKernelConfig& c, const ScheduleOption& o) {
  for (const WholeKernelOption& x : c.options)
    if (x.option == o) return &x;
  return nullptr;
}

json bar(const std::string& what, std::optional<double> measured, double limit, bool upper) {
  if (!measured) return {{"bar", what}, {"limit", limit}, {"measured", nullptr}, {"result", "not measured"}};
  const bool met = upper ? *measured <= limit : *measured >= limit;
  return {{"bar", what}, {"limit", limit}, {"measured", *measured}, {"result", met ? "met" : "missed"},
          {"by", met ? 0.0 : std::fabs(*measured - limit)}};
}

}  // namespace

namespace {

// A bar is met only on every option (or pair) of its set: a statistic over the predicted ones alone would let
// abstaining (a term extrapolated, Q deciding the time) pass the bar on the easy cases.
json all_predicted(json b, int predicted, int of, const char* what) {
  b[std::string("predicted_") + what] = predicted;
  b[what] = of;
  if (predicted < of && b.value("result", std::string()) == "met") {
    b["result"] = "missed";
    b["why"] = fmt::format("met on the {} of {} {} with a point prediction only; the rest are not decided", predicted,
                           of, what);
  }
  return b;
}

// The transfer's outcomes over a set of options (see the "transfer_outcomes" definition in the file).
struct TransferOutcomes {
  int agrees = 0, disagrees = 0, not_decided = 0, too_wide = 0, extrapolated = 0, capacity_open = 0;
  std::vector<double> widths;  // (high - low) / point of the transfer's interval
  void add(const WholeKernelOption& o) {
    const double m = o.host_measured_s.value_or(NAN);
    const auto meets = [&] { return *o.transfer_lo_s <= m * 1.01 && *o.transfer_hi_s >= m * 0.99; };
    if (!o.transfer_s && o.transfer_lo_s && o.transfer_hi_s) {
      // No point (Q decides the time), but an interval: it can still miss the measurement.
      if (meets()) ++not_decided, ++capacity_open;
      else ++disagrees;
    } else if (!o.transfer_s) {
      ++not_decided;
      extrapolated += o.transfer_extrapolated_s.has_value();
    } else {
      // Disagrees where the predicted bracket misses the measured median's +-1% (the launches' own spread
      // is below that), at any width; agrees where it meets it and is sharp: no wider than the bar's
      // +-5% of its point; a wider bracket that meets it decides nothing (not decided).
      const double width = (*o.transfer_hi_s - *o.transfer_lo_s) / *o.transfer_s;
      widths.push_back(width);
      const bool sharp = width <= 2 * kTransferSharpRelative;
      if (!meets()) ++disagrees;
      else if (sharp) ++agrees;
      else ++not_decided, ++too_wide;
    }
  }
  json to_json() const {
    return {{"agrees", agrees}, {"disagrees", disagrees}, {"not_decided", not_decided},
            {"not_decided_too_wide", too_wide}, {"not_decided_term_outside_calibration", extrapolated},
            {"not_decided_capacity_not_identified", capacity_open},
            {"interval_relative_width_median", widths.empty() ? json() : json(quantile(widths, 0.5))}};
  }
};

// One set of the score (host K_SM = k): per schedule the host predictors' errors and the transfer's outcomes, the
// speedup's Spearman per predictor, and the bars.
json set_json(const WholeKernelResult& r, int k) {
  const std::vector<std::pair<const char*, Getter>> host_predictors = {
      {"transfer (calibration term)", g_transfer},
      {"transfer, Burst-Gap replay without the term", g_no_term},
      {"constant: host = local x median host/local ratio of the other shapes", g_constant},
      {"reference: term fitted on the other shapes' application data (leave-one-shape-out)", g_reference},
      {"ab initio host (GEMM rate + calibration term)", g_ab_host},
      {"constant ab initio: total tile time / K_SM", g_ab_const}};
  json per_schedule = json::object();
  for (const char* schedule : {"interleaved", "expert_wave"}) {
    json preds = json::object();
    int n_options = 0;
    TransferOutcomes outcomes;
    for (const auto& [name, get] : host_predictors) {
      std::vector<std::pair<double, double>> pm;
      for (const WholeKernelConfig& c : r.configs) {
        if (c.num_sms != k) continue;
        for (const WholeKernelOption& o : c.options) {
          if (o.option.schedule != schedule || !o.host_measured_s) continue;
          if (const auto p = get(o)) pm.emplace_back(*p, *o.host_measured_s);
        }
      }
      preds[name] = to_json(stats_of(pm));
    }
    // Ab initio local against the local control's measured time.
    std::vector<std::pair<double, double>> local_pm;
    for (const WholeKernelConfig& c : r.configs) {
      if (c.num_sms != k) continue;
      for (const WholeKernelOption& o : c.options) {
        if (o.option.schedule != schedule) continue;
        ++n_options;
        if (o.abinitio_local_s && o.local_measured_s) local_pm.emplace_back(*o.abinitio_local_s, *o.local_measured_s);
        outcomes.add(o);
      }
    }
    preds["ab initio local (GEMM rate) vs the local control"] = to_json(stats_of(local_pm));
    per_schedule[schedule] = {{"options", n_options},
                              {"transfer_outcomes", outcomes.to_json()},
                              {"predictors", preds}};
  }
  // Speedup (expert-wave / interleaved) at every measured pair.
  json spearman_of = json::object();
  const std::vector<std::pair<const char*, Getter>> speedup_predictors = {
      {"transfer (calibration term)", g_transfer},
      {"transfer, Burst-Gap replay without the term", g_no_term},
      {"constant: host = local x median ratio (= the local control's speedup x a constant)", g_constant},
      {"local control's measured speedup", g_local_measured},
      {"reference (leave-one-shape-out application-data term)", g_reference},
      {"ab initio", g_ab_host}};
  int measured_pairs = 0;
  for (const WholeKernelConfig& c : r.configs)
    if (c.num_sms == k) measured_pairs += static_cast<int>(c.pairs.size());
  for (const auto& [name, get] : speedup_predictors) {
    std::vector<double> pred, meas;
    for (const WholeKernelConfig& c : r.configs) {
      if (c.num_sms != k) continue;
      for (const MeasuredPair& m : c.pairs) {
        const WholeKernelOption* w = option_at(c, expert_wave_with(m.experts_per_wave));
        const WholeKernelOption* i = option_at(c, interleaved_at(m.lead_rows));
        if (!w || !i) continue;
        const auto pw = get(*w), pi = get(*i);
        if (!pw || !pi) continue;
        pred.push_back(*pw / *pi);
        meas.push_back(m.speedup_median);
      }
    }
    const auto rho = spearman(pred, meas);
    spearman_of[name] = {{"pairs", pred.size()}, {"spearman", rho ? json(*rho) : json(nullptr)}};
    spearman_of[name]["measured_pairs"] = measured_pairs;
  }
  int num_configs = 0;
  for (const WholeKernelConfig& c : r.configs) num_configs += c.num_sms == k;
  // The bars (issue 28), for the predictions whose term comes from the calibration alone.
  json bars = json::array();
  const std::string set = fmt::format("host K_SM={}", k);
  for (const char* schedule : {"interleaved", "expert_wave"}) {
    const json& t = per_schedule[schedule]["predictors"]["transfer (calibration term)"];
    const auto get = [](const json& j, const char* key) {
      return j[key].is_number() ? std::optional<double>(j[key].get<double>()) : std::nullopt;
    };
    // How many options a bar's statistic rests on (an extrapolated or missing prediction is not in it).
    const auto over = [&](json b, const json& stats) {
      return all_predicted(std::move(b), stats["n"].get<int>(), per_schedule[schedule]["options"].get<int>(), "options");
    };
    bars.push_back(over(bar(fmt::format("{} transfer {} median |error| <= 5%", set, schedule),
                            get(t, "abs_error_median"), 0.05, true), t));
    bars.push_back(over(bar(fmt::format("{} transfer {} p90 |error| <= 10%", set, schedule),
                            get(t, "abs_error_p90"), 0.10, true), t));
    const json& a = per_schedule[schedule]["predictors"]["ab initio host (GEMM rate + calibration term)"];
    bars.push_back(over(bar(fmt::format("{} ab initio host {} median |error| <= 10%", set, schedule),
                            get(a, "abs_error_median"), 0.10, true), a));
    const json& al = per_schedule[schedule]["predictors"]["ab initio local (GEMM rate) vs the local control"];
    bars.push_back(over(bar(fmt::format("{} ab initio local {} median |error| <= 10%", set, schedule),
                            get(al, "abs_error_median"), 0.10, true), al));
  }
  for (const auto& [what, name] : {std::pair{"transfer", "transfer (calibration term)"}, {"ab initio", "ab initio"}}) {
    const json& sp = spearman_of[name];
    bars.push_back(all_predicted(bar(fmt::format("{} {} speedup Spearman >= 0.8", set, what),
                                     sp["spearman"].is_number() ? std::optional<double>(sp["spearman"].get<double>())
                                                                : std::nullopt, 0.8, false),
                                 sp["pairs"].get<int>(), measured_pairs, "pairs"));
  }
  return {{"set", set}, {"configs", num_configs}, {"schedules", per_schedule}, {"speedup_spearman", spearman_of},
          {"bars", bars}};
}

// Every configuration's options with each predictor's time (6 significant digits).
json configs_json(const WholeKernelResult& r) {
  json configs = json::array();
  for (const WholeKernelConfig& c : r.configs) {
    json opts = json::array();
    for (const WholeKernelOption& o : c.options) {
      const auto j = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
      json oj = {{"option", o.option.key()},
                 {"host_measured_s", j(o.host_measured_s)},
                 {"local_measured_s", j(o.local_measured_s)},
                 {"transfer_s", j(o.transfer_s)},
                 {"transfer_low_s", j(o.transfer_lo_s)},
                 {"transfer_high_s", j(o.transfer_hi_s)},
                 {"replay_local_s", o.replay_local_s},
                 {"replay_host_s", j(o.replay_host_s)},
                 {"mean_slowdown_l2", j(o.mean_slowdown_l2)},
                 {"transfer_no_term_s", j(o.transfer_no_term_s)},
                 {"transfer_constant_s", j(o.transfer_constant_s)},
                 {"transfer_reference_s", j(o.transfer_reference_s)},
                 {"abinitio_host_s", j(o.abinitio_host_s)},
                 {"abinitio_local_s", j(o.abinitio_local_s)},
                 {"abinitio_constant_s", j(o.abinitio_constant_s)}};
      if (o.transfer_extrapolated_s) oj["transfer_extrapolated_s"] = *o.transfer_extrapolated_s;
      if (o.abinitio_host_extrapolated_s) oj["abinitio_host_extrapolated_s"] = *o.abinitio_host_extrapolated_s;
      if (!o.transfer_why_not.empty()) oj["transfer_why_not"] = o.transfer_why_not;
      if (!o.abinitio_why_not.empty()) oj["abinitio_why_not"] = o.abinitio_why_not;
      opts.push_back(oj);
    }
    configs.push_back({{"config", c.label}, {"options", opts}});
  }
  // Numbers to 6 significant digits.
  const std::function<void(json&)> round = [&](json& x) {
    if (x.is_structured()) {
      for (auto& v : x) round(v);
    } else if (x.is_number_float()) {
      x = std::stod(fmt::format("{:.6g}", x.get<double>()));
    }
  };
  round(configs);
  return configs;
}

}  // namespace

json whole_kernel_json(const WholeKernelResult& r, const WholeKernelSettings& settings, const json& provenance) {
  json sets = json::array();
  for (int k : {66, 132}) sets.push_back(set_json(r, k));
  json fits = json::array();
  for (const ReferenceFit& f : r.reference_fits) {
    const auto value = [&](double x) { return f.identified && std::isfinite(x) ? json(x) : json(nullptr); };
    fits.push_back({{"left_out_shape", f.left_out_shape}, {"status", f.identified ? "fit" : f.why_not},
                    {"a", value(f.a)}, {"b", value(f.b)}, {"train_abs_error_median", value(f.train_median_error)}});
  }
  const json configs = configs_json(r);
  return {{"schema", {{"name", "xstage.moe_whole_kernel_score"}, {"version", "1.0"}}},
          {"meta", provenance},
          {"interference_term", {{"label", r.term_label}, {"status", r.term_status}}},
          {"path", {{"R_Bps", settings.path.drain_rate_bps},
                    {"R_ci95", {settings.path.drain_rate_lo_bps, settings.path.drain_rate_hi_bps}},
                    {"Q", settings.path.capacity_text}}},
          {"definitions",
           {{"transfer", "host = the local control's measured median of the same option + (time model on the host "
                         "path - time model with no remote path), both replays from the local control's expert-wave "
                         "tile mainloop medians; interval: R's ci95 and the term's [lo, hi]"},
            {"ab_initio", "the time model from a per-shape GEMM rate alone (T_L = 2 b_m b_n k / (F / device_sms)); "
                          "no application run feeds it; where no measured rate is given the host point's recorded "
                          "spec-sheet F is used and the rate's source says so"},
            {"error", "|predicted / measured median - 1|, the judged launches' median per launch"},
            {"transfer_outcomes", "disagrees: the transfer's [low, high] misses the measured median +-1% (at any width); "
                                  "agrees: it meets it and is no wider than +-5% of its point (the bar's tolerance); "
                                  "not decided: it meets it but is wider (not_decided_too_wide), or no transfer was "
                                  "computed (no local control, the term not usable, or the term used outside its calibration: "
                                  "not_decided_term_outside_calibration, the extrapolated time in the option's "
                                  "transfer_extrapolated_s, never in a bar; or Q(K_SM) not identified and deciding the time: "
                                  "not_decided_capacity_not_identified, where its interval still meets the measurement)"},
            {"speedup", "expert-wave / interleaved at every measured pair, Spearman of predicted vs measured median"},
            {"reference", "a term s = 1 + a [offered/R - b]+ fitted on the application data of the other shapes "
                          "(host K_SM=66 transfers); reference only, the bars apply to the calibration's term"}}},
          {"sets", sets},
          {"reference_fits", fits},
          {"not_scored", r.not_scored},
          {"configs", configs}};
}

std::string whole_kernel_markdown(const json& s) {
  std::string md = "# MegaMoE whole-kernel time predictions (issue 28)\n\n";
  md += fmt::format("Written by `{}`. Interference term: {} ({}).\n\n",
                    s["meta"].value("command", std::string("xstage-predict moe-whole")),
                    s["interference_term"].value("label", std::string("")),
                    s["interference_term"].value("status", std::string("")));
  if (const json* d = s["meta"].contains("dates") ? &s["meta"]["dates"] : nullptr; d && d->is_object()) {
    std::string late;
    for (const char* k : {"model", "interference", "gemm_rates"})
      if (d->contains(k) && !(*d)[k].value("predates_data", false))
        late += fmt::format("{}{} ({})", late.empty() ? "" : ", ", k,
                            (*d)[k]["date_utc"].is_string() ? (*d)[k]["date_utc"].get<std::string>() : "no date");
    std::string elsewhere;
    for (const char* k : {"model", "interference", "gemm_rates"})
      if (d->contains(k) && !(*d)[k].value("same_device_as_data", true))
        elsewhere += fmt::format("{}{} ({})", elsewhere.empty() ? "" : ", ", k,
                                 (*d)[k].value("device", std::string("no device named")));
    if (!elsewhere.empty())
      md += "**Not measured on the judged GPU (" + d->value("judged_device", std::string("none named")) + "):** " +
            elsewhere + ".\n\n";
    md += late.empty() ? "Every input was measured before the earliest judged result file (" +
                             d->value("earliest_judged_result_utc", std::string("?")) + "): out of sample" +
                             (elsewhere.empty() ? "" : " in time, on another machine") + ".\n\n"
                       : "**In-sample for some inputs:** measured after the earliest judged result file (" +
                             (d->contains("earliest_judged_result_utc") && (*d)["earliest_judged_result_utc"].is_string()
                                  ? (*d)["earliest_judged_result_utc"].get<std::string>()
                                  : std::string("unknown")) +
                             "): " + late + ". Their predictions are not predictions in the frozen-input sense.\n\n";
  }
  const auto pct = [](const json& x) { return x.is_number() ? fmt::format("{:.1f}%", 100 * x.get<double>()) : std::string("-"); };
  for (const json& set : s["sets"]) {
    md += fmt::format("## {} ({} configurations)\n\n", set["set"].get<std::string>(), set["configs"].get<int>());
    md += "| predictor | schedule | n | median abs err | p90 abs err | median signed err |\n|---|---|---|---|---|---|\n";
    for (const auto& [schedule, sj] : set["schedules"].items())
      for (const auto& [name, p] : sj["predictors"].items())
        md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", name, schedule, p["n"].get<int>(), pct(p["abs_error_median"]),
                          pct(p["abs_error_p90"]), pct(p["signed_error_median"]));
    md += "\n| speedup predictor | pairs | Spearman |\n|---|---|---|\n";
    for (const auto& [name, p] : set["speedup_spearman"].items())
      md += fmt::format("| {} | {} | {} |\n", name, p["pairs"].get<int>(),
                        p["spearman"].is_number() ? fmt::format("{:.3f}", p["spearman"].get<double>()) : "-");
    md += "\n| bar | measured | result | predicted |\n|---|---|---|---|\n";
    for (const json& b : set["bars"])
      md += fmt::format("| {} | {} | {}{} | {} |\n", b["bar"].get<std::string>(),
                        b["measured"].is_number() ? fmt::format("{:.4g}", b["measured"].get<double>()) : "-",
                        b["result"].get<std::string>(),
                        b.contains("by") && b["by"].get<double>() > 0 ? fmt::format(" by {:.4g}", b["by"].get<double>()) : "",
                        b.contains("options") ? fmt::format("{} of {} options", b["predicted_options"].get<int>(), b["options"].get<int>())
                        : b.contains("pairs")   ? fmt::format("{} of {} pairs", b["predicted_pairs"].get<int>(), b["pairs"].get<int>())
                                                : std::string("-"));
    for (const auto& [schedule, sj] : set["schedules"].items())
      if (const int x = sj["transfer_outcomes"].value("not_decided_term_outside_calibration", 0); x > 0)
        md += fmt::format("\n{}: {} transfer(s) not decided because the interference term would be used outside its "
                          "calibration (extrapolated times in the JSON, not in the bars).\n", schedule, x);
    md += "\n";
  }
  md += "Reference fits (application data, leave-one-shape-out; not scored against the bars):\n\n";
  for (const json& f : s["reference_fits"]) {
    if (!f["a"].is_number() || !f["b"].is_number()) {
      md += fmt::format("- without {}: {}\n", f["left_out_shape"].get<std::string>(),
                        f.value("status", std::string("not identified")));
      continue;
    }
    md += fmt::format("- without {}: a = {}, b = {} (train median abs err {})\n", f["left_out_shape"].get<std::string>(),
                      f["a"].get<double>(), f["b"].get<double>(), pct(f["train_abs_error_median"]));
  }
  return md;
}

}  // namespace xs::moe
