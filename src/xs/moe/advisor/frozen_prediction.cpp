// xstage moe model layer: the advisor's frozen prediction per configuration (see frozen_prediction.hpp).
#include "xs/moe/advisor/frozen_prediction.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "xs/common/error.hpp"
#include "xs/moe/model/schedule_sim.hpp"

namespace xs::moe {
namespace {

using json = nlohmann::json;

constexpr double kUnboundedRateBps = 1e18;  // R's upper side when the calibration gives only a lower bound

const json& member(const json& obj, const char* key, const std::string& path) {
  if (!obj.is_object() || !obj.contains(key)) throw input_error(path + "." + key, "missing in the calibration file");
  return obj.at(key);
}

double number_at(const json& obj, const char* key, const std::string& path) {
  const json& v = member(obj, key, path);
  if (!v.is_number()) throw input_error(path + "." + key, "expected a number");
  return v.get<double>();
}

// [lo, hi] of a row's ci95, or the value twice when the interval is null.
std::pair<double, double> ci_of(const json& row, double value, const std::string& path) {
  const auto it = row.find("ci95");
  if (it == row.end() || it->is_null()) return {value, value};
  if (!it->is_array() || it->size() != 2 || !(*it)[0].is_number() || !(*it)[1].is_number())
    throw input_error(path + ".ci95", "expected [low, high] or null");
  return {(*it)[0].get<double>(), (*it)[1].get<double>()};
}

struct Tiss0Row {
  double volume_bytes = 0, value_s = 0, lo_s = 0, hi_s = 0;
  bool constrained = true;
};

std::vector<Tiss0Row> tiss0_rows_at(const json& model, int k) {
  std::vector<Tiss0Row> rows;
  const json& table = member(model, "tiss0", "model");
  if (!table.is_array()) throw input_error("model.tiss0", "expected an array of rows");
  for (std::size_t i = 0; i < table.size(); ++i) {
    const std::string path = fmt::format("model.tiss0[{}]", i);
    if (static_cast<int>(number_at(table[i], "K", path)) != k) continue;
    Tiss0Row r;
    r.volume_bytes = number_at(table[i], "V_bytes", path);
    r.value_s = number_at(table[i], "s", path);
    std::tie(r.lo_s, r.hi_s) = ci_of(table[i], r.value_s, path);
    if (const auto c = table[i].find("constrained"); c != table[i].end() && c->is_boolean()) r.constrained = c->get<bool>();
    rows.push_back(r);
  }
  std::sort(rows.begin(), rows.end(), [](const Tiss0Row& a, const Tiss0Row& b) { return a.volume_bytes < b.volume_bytes; });
  return rows;
}

// The largest constrained lower end at a volume <= v (T_iss^0 is nondecreasing in V), else 0.
double constrained_floor(const std::vector<Tiss0Row>& rows, double v) {
  double lo = 0;
  for (const Tiss0Row& r : rows)
    if (r.constrained && r.volume_bytes <= v) lo = std::max(lo, r.lo_s);
  return lo;
}

// T_iss^0's bracket at (k, v) from the rows of that K (see calibration_inputs in the header).
InputBracket tiss0_bracket_at(const std::vector<Tiss0Row>& rows, int k, double v) {
  InputBracket b;
  const auto row_name = [&](const Tiss0Row& r) { return fmt::format("model.tiss0 row K={} V={:.0f} B", k, r.volume_bytes); };
  for (const Tiss0Row& r : rows) {
    if (std::fabs(r.volume_bytes - v) > 0.5) continue;
    b.source = row_name(r);
    if (r.constrained) {
      b.low = r.lo_s;
      b.high = r.hi_s;
    } else {
      b.low = constrained_floor(rows, v - 1);
      b.high = r.hi_s;
      b.flag = fmt::format("unconstrained row ({}): an upper bound of T_iss^0, from the largest constrained value at a "
                           "smaller V", row_name(r));
    }
    return b;
  }
  const Tiss0Row& last = rows.back();
  if (v > last.volume_bytes) {
    b.source = row_name(last);
    b.low = constrained_floor(rows, v);
    b.high = last.hi_s * v / last.volume_bytes;
    b.flag = fmt::format("extrapolated past the table's largest V at K={} ({:.0f} B): bracket [largest constrained "
                         "value, last row x V/V_last] (its upper end assumes T_iss^0 grows at most in proportion to V "
                         "past the table: an assumption, not a measurement)",
                         k, last.volume_bytes);
    return b;
  }
  const Tiss0Row& first = rows.front();
  if (v < first.volume_bytes) {
    b.source = row_name(first);
    b.low = 0;
    b.high = first.hi_s;
    b.flag = fmt::format("below the table's smallest V at K={} ({:.0f} B): bracket [0, first row]", k,
                         first.volume_bytes);
    return b;
  }
  for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
    const Tiss0Row &a = rows[i], &c = rows[i + 1];
    if (!(v > a.volume_bytes && v < c.volume_bytes)) continue;
    const double f = (v - a.volume_bytes) / (c.volume_bytes - a.volume_bytes);
    b.source = row_name(a) + " and " + row_name(c);
    b.low = a.constrained ? a.lo_s : constrained_floor(rows, a.volume_bytes - 1);  // nondecreasing: >= a's floor
    b.high = c.hi_s;
    if (a.constrained && c.constrained) {
      b.low = a.lo_s + f * (c.lo_s - a.lo_s);
      b.high = a.hi_s + f * (c.hi_s - a.hi_s);
    } else {
      b.flag = "interpolated between rows of which one is unconstrained (an upper bound): bracket [floor below, "
               "upper row]";
    }
    return b;
  }
  throw input_error("model.tiss0", fmt::format("no row brackets V = {:.0f} B at K = {}", v, k));
}

std::string capacity_text(const json& model, int k) {
  const auto it = model.find("Q");
  if (it == model.end() || !it->is_array()) return "no Q table";
  for (const json& row : *it) {
    if (!row.is_object() || !row.contains("K") || !row["K"].is_number() || row["K"].get<int>() != k) continue;
    const std::string bound = row.value("bound", "fit");
    if (bound == "not_identified") return fmt::format("Q(K={}) not identified by this calibration", k);
    const double q = row.contains("bytes") && row["bytes"].is_number() ? row["bytes"].get<double>() : 0;
    return bound == "lower" ? fmt::format("Q(K={}) >= {:.0f} B (lower bound)", k, q)
                            : fmt::format("Q(K={}) = {:.0f} B", k, q);
  }
  return fmt::format("Q(K={}) not in the table", k);
}

bool corner_less(const InputCorner& a, const InputCorner& b) {
  return std::tie(a.rate_bps, a.tiss0_s, a.l1_s, a.l2_s) < std::tie(b.rate_bps, b.tiss0_s, b.l1_s, b.l2_s);
}

// The R values the corners take: R's ends, and where R is flagged (a bound, an unconstrained fit) its bracket is
// wide, so also 32 points spaced evenly in log between them (the upper end capped at 64 x the lower for the
// spacing: 13% apart).
std::vector<double> corner_rates(const CalibrationInputs& cal) {
  std::vector<double> rates = {cal.drain_rate_bps.low, cal.drain_rate_bps.high};
  if (!cal.drain_rate_bps.flag.empty() && cal.drain_rate_bps.low > 0 &&
      cal.drain_rate_bps.high > 1.01 * cal.drain_rate_bps.low) {
    const double lo = cal.drain_rate_bps.low, hi = std::min(cal.drain_rate_bps.high, 64 * lo);
    for (int i = 1; i <= 32; ++i) rates.push_back(lo * std::pow(hi / lo, i / 33.0));
  }
  return rates;
}

std::vector<InputCorner> corners_of(const CalibrationInputs& cal, const TileTimeInputs& t) {
  std::vector<InputCorner> out{{cal.drain_rate_bps.value, cal.tiss0_s.value, t.l1_s.value, t.l2_s.value}};
  std::set<InputCorner, decltype(&corner_less)> seen(&corner_less);
  seen.insert(out.front());
  // The options' times are monotone in each input, so the ends bound them; their ratio (the speedup) is not
  // monotone in R, so a flagged R is also sampled inside its bracket (corner_rates). The speedup's bracket is
  // then a sampled one, not a proven bound (the lab note of 2026-12-06 night shows a ratio peaking between
  // samples).
  for (double r : corner_rates(cal))
    for (double q : {cal.tiss0_s.low, cal.tiss0_s.high})
      for (double a : {t.l1_s.low, t.l1_s.high})
        for (double b : {t.l2_s.low, t.l2_s.high})
          if (seen.insert({r, q, a, b}).second) out.push_back({r, q, a, b});
  return out;
}

// The coordinate i of a corner (0 R, 1 T_iss^0, 2 T_L1, 3 T_L2).
double coord(const InputCorner& c, int i) {
  return i == 0 ? c.rate_bps : i == 1 ? c.tiss0_s : i == 2 ? c.l1_s : c.l2_s;
}

json number_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

}  // namespace

CalibrationInputs calibration_inputs(const json& doc, const model::PlatformModel& model, const std::string& file,
                                     const std::string& fnv1a64, int num_sms, int block_n) {
  CalibrationInputs c;
  c.file = file;
  c.fnv1a64 = fnv1a64;
  c.target = doc.contains("config") && doc["config"].is_object() ? doc["config"].value("target", "") : "";
  c.platform = advisor_platform_from(model, c.target, num_sms, block_n);
  const json& m = member(doc, "model", "calibration");

  InputBracket& r = c.drain_rate_bps;
  r.value = model.drain_rate_bps();
  r.source = "model.R_Bps, model.R_ci95";
  r.low = r.high = r.value;
  if (const auto it = m.find("R_ci95"); it != m.end() && !it->is_null())
    std::tie(r.low, r.high) = ci_of(json{{"ci95", *it}}, r.value, "model.R");
  const std::string bound = m.value("R_bound", "fit");
  if (bound == "lower") {
    r.low = r.value;
    r.high = kUnboundedRateBps;
    r.flag = "R is a lower bound (R_bound lower): bracket [R, unbounded]";
  } else if (r.low == r.high) {
    r.flag = "R has no ci95 in the calibration: no interval";
  }
  // The model's own reading of R (model::PlatformModel::drain_rate): an unconstrained R, or one the fitter
  // flagged (above the copy-engine rate: absorption), is not a point either, as for xstage-predict burst.
  if (const model::Lookup lr = model.drain_rate(); !lr.usable_as_point && r.flag.empty()) {
    r.flag = lr.not_point_reason;
    if (lr.has_bracket()) {
      r.low = std::min(r.low, lr.bracket_lo);
      r.high = std::max(r.high, lr.bracket_hi);
    }
  }

  const double volume = double(num_sms) * 128.0 * block_n * 2;  // K_SM V_t, the issued burst
  const std::vector<Tiss0Row> rows = tiss0_rows_at(m, num_sms);
  if (!rows.empty()) {
    c.tiss0_s = tiss0_bracket_at(rows, num_sms, volume);
  } else {
    c.tiss0_s.source = fmt::format("model.tiss0 (no row at K={}: PlatformModel's K interpolation)", num_sms);
    c.tiss0_s.low = 0;
    c.tiss0_s.high = c.platform.tiss0_s;
    c.tiss0_s.flag = fmt::format("K={} not in the T_iss^0 table: bracket [0, the looked-up value]", num_sms);
  }
  c.tiss0_s.value = c.platform.tiss0_s;
  // The model's lookup of the same T_iss^0 reads the fitter's notes too (an "upper bound" row, an extrapolation):
  // where it refuses a point, so does this prediction, with the wider of the two brackets.
  if (const model::Lookup lt = model.tiss0_s(num_sms, volume); !lt.usable_as_point) {
    if (c.tiss0_s.flag.empty()) c.tiss0_s.flag = lt.not_point_reason;
    if (lt.has_bracket()) {
      c.tiss0_s.low = std::min(c.tiss0_s.low, lt.bracket_lo);
      // Past the table the model gives no upper end (it does not assume T_iss^0 / V nonincreasing); the replay
      // keeps its own end (the last row x V / V_last, named in the flag) rather than an infinite time.
      if (std::isfinite(lt.bracket_hi)) c.tiss0_s.high = std::max(c.tiss0_s.high, lt.bracket_hi);
    }
  }
  c.tiss0_s.low = std::min(c.tiss0_s.low, c.tiss0_s.value);  // the bracket holds the value the advisor uses
  c.tiss0_s.high = std::max(c.tiss0_s.high, c.tiss0_s.value);
  c.capacity = capacity_text(m, num_sms) +
               "; Q enters no replayed time (the wave stall per L2 tile is [max(T_iss^0, V/R) - T_L2]+)";
  return c;
}

TileTimeInputs tile_times_from_rate(const AdvisorConfig& config, double flops, const std::string& source) {
  MoeModelInputs in;
  in.hidden = config.shape.hidden;
  in.intermediate = config.shape.intermediate;
  in.num_ranks = config.num_ranks;
  in.num_sms = config.num_sms;
  in.device_sms = config.device_sms;
  in.block_n = config.block_n;
  in.tensor_flops_per_s = flops;
  in.drain_rate_bps = 1;  // the tile times do not depend on M_X
  const MoePrediction p = predict_megamoe(in);
  TileTimeInputs t;
  t.from = "GEMM rate";
  t.l1_s = {p.l1_mainloop_s, p.l1_mainloop_s, p.l1_mainloop_s, "", source + ": T_L1 = 2 b_m b_n h / (F / device_sms)"};
  t.l2_s = {p.l2_mainloop_s, p.l2_mainloop_s, p.l2_mainloop_s, "", source + ": T_L2 = 2 b_m b_n I / (F / device_sms)"};
  return t;
}

std::vector<int> lead_row_candidates(int eq16_lead_rows) {
  std::vector<int> d = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 64};  // the advisor's replay candidates
  if (std::find(d.begin(), d.end(), eq16_lead_rows) == d.end()) d.push_back(eq16_lead_rows);
  std::sort(d.begin(), d.end());
  return d;
}

std::vector<int> experts_per_wave_candidates(int num_local_experts) {
  std::vector<int> w;
  for (int x = 1; x < num_local_experts; x *= 2) w.push_back(x);
  w.push_back(std::max(1, num_local_experts));
  return w;
}

const PredictedOption* FrozenPrediction::find(const ScheduleOption& o) const {
  for (const PredictedOption& p : options)
    if (p.option == o) return &p;
  return nullptr;
}

std::optional<SpeedupPrediction> FrozenPrediction::speedup(int lead_rows, int experts_per_wave) const {
  std::ptrdiff_t wi = -1, ii = -1;
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (options[i].option == expert_wave_with(experts_per_wave)) wi = static_cast<std::ptrdiff_t>(i);
    if (options[i].option == interleaved_at(lead_rows)) ii = static_cast<std::ptrdiff_t>(i);
  }
  if (wi < 0 || ii < 0) return std::nullopt;
  const auto& w = corner_times_s[static_cast<std::size_t>(wi)];
  const auto& in = corner_times_s[static_cast<std::size_t>(ii)];
  SpeedupPrediction s;
  s.low = s.high = w[0] / in[0];
  // A flagged input (an extrapolation, a bound, an unconstrained row) is never read as a point (issue 27 item 4):
  // the speedup is then the bracket [low, high] alone, and its value NaN (null in JSON).
  s.value = point_values() ? w[0] / in[0] : std::numeric_limits<double>::quiet_NaN();
  for (std::size_t c = 1; c < w.size(); ++c) {
    s.low = std::min(s.low, w[c] / in[c]);
    s.high = std::max(s.high, w[c] / in[c]);
  }
  // How far each input alone moves the ratio: corners equal in every other input.
  static const char* kNames[] = {"R", "T_iss^0", "T_L1", "T_L2"};
  std::string moves;
  for (int i = 0; i < 4; ++i) {
    double most = 0;
    for (std::size_t a = 0; a < corners.size(); ++a)
      for (std::size_t b = a + 1; b < corners.size(); ++b) {
        bool others_equal = coord(corners[a], i) != coord(corners[b], i);
        for (int k = 0; k < 4 && others_equal; ++k)
          if (k != i) others_equal = coord(corners[a], k) == coord(corners[b], k);
        if (others_equal) most = std::max(most, std::fabs(w[a] / in[a] - w[b] / in[b]));
      }
    moves += fmt::format("{}{} {:.3f}", moves.empty() ? "" : ", ", kNames[i], most);
  }
  s.why = "each input alone moves the speedup by up to: " + moves;
  for (const std::string& f : flagged) s.why += "; flagged: " + f;
  return s;
}

bool has_flag(const CalibrationInputs& cal) { return !cal.drain_rate_bps.flag.empty() || !cal.tiss0_s.flag.empty(); }

std::string advice_differs_at_bracket_ends(const AdvisorConfig& config, const CalibrationInputs& cal,
                                           const AdvisorThroughput& throughput, const MoeProblem& problem,
                                           const Advice& advice) {
  if (!has_flag(cal)) return "";
  std::set<double> rates;
  for (double r : corner_rates(cal)) rates.insert(r);
  for (double r : rates)
    for (double t0 : {cal.tiss0_s.low, cal.tiss0_s.high}) {
      if (!std::isfinite(r) || !std::isfinite(t0))
        return fmt::format("a bracket end is unbounded (R up to {:.4g} GB/s, T_iss^0 up to {:.4g} us)", r / 1e9,
                           t0 * 1e6);
      AdvisorPlatform corner = cal.platform;
      corner.drain_rate_bps = r;
      corner.tiss0_s = t0;
      const Advice other = advise(config, corner, throughput, problem);
      if (other.schedule != advice.schedule || other.lead_rows != advice.lead_rows)
        return fmt::format("at R {:.4g} GB/s, T_iss^0 {:.4g} us the advisor says {} D={} (at the flagged point "
                           "values: {} D={})",
                           r / 1e9, t0 * 1e6, other.schedule, other.lead_rows, advice.schedule, advice.lead_rows);
    }
  return "";
}

FrozenPrediction freeze_prediction(const AdvisorConfig& config, const CalibrationInputs& cal,
                                   const TileTimeInputs& tiles, const MoeProblem& problem) {
  FrozenPrediction fp;
  fp.calibration = cal;
  fp.tiles = tiles;
  if (!cal.drain_rate_bps.flag.empty()) fp.flagged.push_back("R: " + cal.drain_rate_bps.flag);
  if (!cal.tiss0_s.flag.empty()) fp.flagged.push_back("T_iss^0: " + cal.tiss0_s.flag);

  AdvisorPlatform platform = cal.platform;
  platform.drain_rate_bps = cal.drain_rate_bps.value;
  platform.tiss0_s = cal.tiss0_s.value;
  AdvisorThroughput throughput;
  RunPoint run;
  run.source = tiles.l1_s.source;
  run.description = tiles.from;
  run.l1_mainloop_s = tiles.l1_s.value;
  run.l2_mainloop_s = tiles.l2_s.value;
  throughput.run = run;
  const Advice advice = advise(config, platform, throughput, problem);
  fp.eq16_lead_rows = advice.knee_lead_rows;
  fp.advisor_lead_rows = advice.lead_rows;
  fp.advisor_schedule = advice.schedule;
  fp.advisor_reason = advice.reason;

  const std::vector<int> leads = lead_row_candidates(fp.eq16_lead_rows);
  const std::vector<int> widths = experts_per_wave_candidates(problem.num_local_experts);
  for (int d : leads) fp.options.push_back({interleaved_at(d)});
  for (int w : widths) fp.options.push_back({expert_wave_with(w)});
  fp.corner_times_s.assign(fp.options.size(), {});

  MoeModelInputs in;
  in.hidden = config.shape.hidden;
  in.intermediate = config.shape.intermediate;
  in.num_ranks = config.num_ranks;
  in.num_sms = config.num_sms;
  in.device_sms = config.device_sms;
  in.block_n = config.block_n;
  fp.corners = corners_of(cal, tiles);
  for (const InputCorner& c : fp.corners) {
    in.drain_rate_bps = c.rate_bps;
    in.tiss0_s = c.tiss0_s;
    const MoePrediction p = predict_with_mainloops(in, c.l1_s, c.l2_s);
    // Each L2 tile carries its schedule's modelled stall; every expert-wave width keeps the aligned L2 bursts.
    const TileDurations wave{p.l1_mainloop_s, p.l2_mainloop_s + p.wave_stall_per_l2_tile_s};
    const TileDurations inter{p.l1_mainloop_s, p.l2_mainloop_s + p.interleaved_stall_per_l2_tile_s};
    for (std::size_t i = 0; i < fp.options.size(); ++i) {
      const ScheduleOption& o = fp.options[i].option;
      const ScheduleSimResult r =
          o.schedule == "interleaved"
              ? simulate_schedule(problem, config.block_n, config.num_sms, "interleaved", o.lead_rows, inter)
              : simulate_schedule(problem, config.block_n, config.num_sms, "expert_wave", 1, wave, o.experts_per_wave);
      fp.corner_times_s[i].push_back(r.makespan_s);
    }
  }
  for (std::size_t i = 0; i < fp.options.size(); ++i) {
    const auto& t = fp.corner_times_s[i];
    fp.options[i].time_s = fp.point_values() ? t.front() : std::numeric_limits<double>::quiet_NaN();
    fp.options[i].low_s = *std::min_element(t.begin(), t.end());
    fp.options[i].high_s = *std::max_element(t.begin(), t.end());
  }

  PolicyAnswer& a = fp.answer;
  // With a flagged input the advisor's answer (schedule and D) is one only if it is the same at every end of
  // the flagged inputs' brackets; otherwise it is not decided (the point answer is kept as recommended anyway).
  std::string differs = advice_differs_at_bracket_ends(config, cal, throughput, problem, advice);
  if (advice.schedule == "either") {
    a.decision = Decision::kEither;
    a.either = {interleaved_at(fp.advisor_lead_rows), expert_wave_with(1)};
    a.why = "the advisor says " + advice.reason.substr(0, advice.reason.find(';'));
    if (!differs.empty()) {
      a.decision = Decision::kNotDecided;
      a.fallback = a.either.front();
      a.why = "the flagged inputs' brackets do not decide the answer: " + differs + " (" + fp.flagged.front() + ")";
    }
    return fp;
  }
  if (advice.schedule == "interleaved") {
    a.choice = interleaved_at(fp.advisor_lead_rows);
  } else {
    // The expert-wave width the replay finds fastest, at every corner (the first corner is the point values).
    const auto best_at = [&fp](std::size_t corner) {
      const PredictedOption* best = nullptr;
      double best_s = 0;
      for (std::size_t i = 0; i < fp.options.size(); ++i)
        if (fp.options[i].option.schedule == "expert_wave" &&
            (best == nullptr || fp.corner_times_s[i][corner] < best_s)) {
          best = &fp.options[i];
          best_s = fp.corner_times_s[i][corner];
        }
      return best;
    };
    const PredictedOption* best = best_at(0);
    for (std::size_t c = 1; c < fp.corners.size() && differs.empty() && !fp.point_values(); ++c)
      if (best_at(c) != best)
        differs = fmt::format("the fastest expert-wave width is {} at one end and {} at another",
                              best->option.key(), best_at(c)->option.key());
    a.choice = best->option;
  }
  if (!differs.empty()) {
    a.decision = Decision::kNotDecided;
    a.fallback = a.choice;
    a.why = "the flagged inputs' brackets do not decide the answer: " + differs + " (" + fp.flagged.front() + ")";
    return fp;
  }
  const std::optional<SpeedupPrediction> s = fp.speedup(fp.advisor_lead_rows, 1);
  if (s && s->low < 1.0 && s->high > 1.0) {
    a.decision = Decision::kNotDecided;
    a.fallback = a.choice;
    a.why = fmt::format("the predicted speedup lies in [{:.3f}, {:.3f}], which contains 1: the inputs' ranges "
                        "do not decide which schedule is faster ({})",
                        s->low, s->high, s->why);
  }
  return fp;
}

PolicyAnswer speedup_answers(const FrozenPrediction& p, const JudgedConfig& judged) {
  PolicyAnswer a = p.answer;
  a.own_lead_rows = p.advisor_lead_rows;
  a.speedups.clear();
  for (const MeasuredPair& m : judged.pairs) a.speedups.push_back(p.speedup(m.lead_rows, m.experts_per_wave));
  return a;
}

json to_json(const InputBracket& b) {
  json j = {{"value", number_or_null(b.value)}, {"low", number_or_null(b.low)}, {"high", number_or_null(b.high)},
            {"source", b.source}};
  if (!b.flag.empty()) j["flag"] = b.flag;
  return j;
}

json to_json(const FrozenPrediction& p, const JudgedConfig& judged) {
  std::set<int> leads = {p.eq16_lead_rows, p.advisor_lead_rows};
  for (const MeasuredOption& m : judged.options)
    if (m.option.schedule == "interleaved") leads.insert(m.option.lead_rows);
  for (const MeasuredPair& m : judged.pairs) leads.insert(m.lead_rows);
  json options = json::array();
  for (const PredictedOption& o : p.options) {
    if (o.option.schedule == "interleaved" && !leads.count(o.option.lead_rows)) continue;
    options.push_back(
        {{"option", o.option.key()}, {"time_s", number_or_null(o.time_s)}, {"low_s", o.low_s}, {"high_s", o.high_s}});
  }
  json answer = {{"decision", p.answer.decision == Decision::kChoice   ? "choice"
                              : p.answer.decision == Decision::kEither ? "either"
                                                                       : "not decided"}};
  if (p.answer.decision == Decision::kChoice) answer["choice"] = p.answer.choice.key();
  if (p.answer.decision == Decision::kNotDecided) answer["recommended_anyway"] = p.answer.fallback.key();
  if (!p.answer.why.empty()) answer["why"] = p.answer.why;
  json headline = nullptr;
  if (const auto s = p.speedup(p.advisor_lead_rows, 1))
    headline = {{"at", fmt::format("expert_wave w=1 / interleaved D={}", p.advisor_lead_rows)},
                {"value", number_or_null(s->value)}, {"low", s->low}, {"high", s->high}};
  const auto triple = [](const InputBracket& b) {
    return json::array({number_or_null(b.value), number_or_null(b.low), number_or_null(b.high)});
  };
  json flagged = json::array();
  if (!p.calibration.drain_rate_bps.flag.empty()) flagged.push_back("R");
  if (!p.calibration.tiss0_s.flag.empty()) flagged.push_back("T_iss^0");
  return {{"inputs",
           {{"calibration", p.calibration.fnv1a64},
            {"R_Bps", triple(p.calibration.drain_rate_bps)},
            {"tiss0_s", triple(p.calibration.tiss0_s)},
            {"tiles_from", p.tiles.from},
            {"T_L1_s", triple(p.tiles.l1_s)},
            {"T_L2_s", triple(p.tiles.l2_s)},
            {"tiles_source", p.tiles.l1_s.source},
            {"flagged", flagged}}},
          {"eq16_D", p.eq16_lead_rows},
          {"advisor_D", p.advisor_lead_rows},
          {"advisor_schedule", p.advisor_schedule},
          {"answer", answer},
          {"speedup", headline},
          {"options", options}};
}

}  // namespace xs::moe
