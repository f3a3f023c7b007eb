// xstage cli layer: xstage-predict, the Burst-Gap model of X-Stage (paper sections 3-4, eqs. 1-21) at the
// command line. Each subcommand fills an options struct, calls xs::model, and prints one report: a JSON
// object (--json, SI numbers) or an aligned table with units. Keys are a contract that scripts rely on.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "xs/cli/common/cli_main.hpp"
#include "xs/cli/common/options.hpp"
#include "xs/cli/predict_fa_result.hpp"
#include "xs/cli/predict_fa_score.hpp"
#include "xs/cli/predict_interference.hpp"
#include "xs/cli/predict_moe.hpp"
#include "xs/cli/predict_moe_score.hpp"
#include "xs/cli/predict_moe_whole.hpp"
#include "xs/cli/predict_fa_whole.hpp"
#include "xs/common/error.hpp"
#include "xs/common/units.hpp"
#include "xs/model/burst_gap.hpp"

namespace {

namespace m = xs::model;
using xs::cli::require;
using xs::cli::Sign;

// Ordered rows shown the same way in JSON (SI number) and in the table (human units plus a note).
// A value beyond the range of a double (e.g. V/R for R near 0 B/s) or of a 64-bit integer is written
// `"<key>": null` with a sibling `"<key>_unbounded": true` (table: "unbounded"); NaN is an input error.
class Report {
 public:
  void seconds(const std::string& key, double s, const std::string& note) { add_number(key, s, Kind::kSeconds, note); }
  void bytes(const std::string& key, double b, const std::string& note) { add_number(key, b, Kind::kBytes, note); }
  void rate(const std::string& key, double bps, const std::string& note) { add_number(key, bps, Kind::kRate, note); }
  void number(const std::string& key, double x, const std::string& note) { add_number(key, x, Kind::kNumber, note); }
  // A whole number computed in double precision: beyond int64 it is unbounded, never a wrapped value.
  void integer(const std::string& key, double x, const std::string& note) { add_number(key, x, Kind::kInteger, note); }
  void flag(const std::string& key, bool x, const std::string& note) {
    add(Row{key, x, x ? "true" : "false", note});
  }
  void text(const std::string& key, const std::string& x, const std::string& note) { add(Row{key, x, x, note}); }

  // A corner evaluation (one end of each bracketed parameter): a NaN, e.g. R T_iss^0 at R = +inf and
  // T_iss^0 = 0, is left undetermined instead of refused, and merge() says "not decided" for that row.
  void set_corner() { corner_ = true; }

  // One report from the corner evaluations: a row equal at every corner is shown as it is; a number that
  // differs becomes a bracket (value null, "<key>_bracket": [lo, hi], hi null with
  // "<key>_bracket_hi_unbounded" when a corner is unbounded); a flag or text that differs, or a number that
  // is undetermined at some corner, is "not decided" (value null, "<key>_not_decided": true).
  static Report merge(const std::vector<Report>& corners) {
    std::vector<std::string> keys;
    for (const Report& c : corners)
      for (const Row& row : c.rows_)
        if (!row.sibling && std::find(keys.begin(), keys.end(), row.key) == keys.end()) keys.push_back(row.key);
    Report out;
    for (const std::string& key : keys) {
      std::vector<const Row*> rows;
      for (const Report& c : corners)
        for (const Row& row : c.rows_)
          if (row.key == key) rows.push_back(&row);
      const bool same = rows.size() == corners.size() &&
                        std::all_of(rows.begin(), rows.end(), [&](const Row* r) {
                          return r->value == rows.front()->value && r->unbounded == rows.front()->unbounded &&
                                 !r->undetermined;
                        });
      if (same) {
        out.add(*rows.front());
        if (rows.front()->unbounded) out.add(unbounded_sibling(key));
        continue;
      }
      const bool numeric = rows.size() == corners.size() &&
                           std::all_of(rows.begin(), rows.end(), [](const Row* r) { return r->kind != Kind::kOther; });
      const bool undetermined =
          std::any_of(rows.begin(), rows.end(), [](const Row* r) { return r->undetermined; });
      const std::string why = " (not decided over the brackets of the calibration's non-point parameters)";
      const std::string note = rows.front()->base_note.empty() ? rows.front()->note : rows.front()->base_note;
      if (!numeric || undetermined) {
        out.add(Row{key, nullptr, "not decided", note + why});
        Row flag{key + "_not_decided", true, "true", key + " differs between the bracket ends: null in JSON"};
        flag.json_only = true;
        out.add(std::move(flag));
        continue;
      }
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      for (const Row* r : rows) {
        lo = std::min(lo, r->unbounded ? std::numeric_limits<double>::infinity() : r->num);
        hi = std::max(hi, r->unbounded ? std::numeric_limits<double>::infinity() : r->num);
      }
      const Kind kind = rows.front()->kind;
      const std::string shown = fmt::format("[{}, {}]", show(kind, lo), show(kind, hi));
      nlohmann::ordered_json bracket = {std::isfinite(lo) ? nlohmann::ordered_json(lo) : nullptr,
                                        std::isfinite(hi) ? nlohmann::ordered_json(hi) : nullptr};
      out.add(Row{key, nullptr, shown, note + " (bracket over the calibration's non-point parameters)"});
      Row bracket_row{key + "_bracket", bracket, shown, key + " lies in [lo, hi]: its value is null in JSON"};
      bracket_row.json_only = true;
      out.add(std::move(bracket_row));
      if (!std::isfinite(hi)) {
        Row flag{key + "_bracket_hi_unbounded", true, "true", "the upper end is unbounded"};
        flag.json_only = true;
        out.add(std::move(flag));
      }
    }
    return out;
  }

  void append(const Report& other) {
    for (const Row& row : other.rows_) add(row);
  }

  void print(bool as_json) const {
    if (as_json) {
      nlohmann::ordered_json j = nlohmann::ordered_json::object();
      for (const auto& row : rows_) j[row.key] = row.value;
      std::printf("%s\n", j.dump().c_str());
      return;
    }
    // A long text (moe's reason) does not widen the value column of every other row.
    constexpr std::size_t kMaxAlignedWidth = 32;
    std::size_t key_w = 0, shown_w = 0;
    for (const auto& row : rows_) {
      if (row.json_only) continue;
      key_w = std::max(key_w, row.key.size());
      if (row.shown.size() <= kMaxAlignedWidth) shown_w = std::max(shown_w, row.shown.size());
    }
    for (const auto& row : rows_)
      if (!row.json_only)
        std::printf("%s\n",
                    fmt::format("{:<{}}  {:>{}}  {}", row.key, key_w, row.shown, shown_w, row.note).c_str());
  }

 private:
  enum class Kind { kOther, kSeconds, kBytes, kRate, kNumber, kInteger };
  struct Row {
    std::string key;
    nlohmann::ordered_json value;
    std::string shown, note;
    Kind kind = Kind::kOther;
    double num = 0;             // the number (numeric kinds)
    bool unbounded = false;     // +-inf
    bool undetermined = false;  // NaN at a corner
    bool sibling = false;       // "<key>_unbounded", written with its key
    bool json_only = false;     // "<key>_bracket": the table shows the bracket on the key's own row
    std::string base_note;      // the note as the caller gave it (note may add "beyond the number range")
  };
  static std::string show(Kind kind, double x) {
    if (!std::isfinite(x)) return "unbounded";
    switch (kind) {
      case Kind::kSeconds: return xs::format_seconds(x);
      case Kind::kBytes: return xs::format_bytes(x);
      case Kind::kRate: return xs::format_rate(x);
      case Kind::kInteger: return std::to_string(static_cast<long long>(x));
      default: return fmt::format("{:.4g}", x);
    }
  }
  void add_number(const std::string& key, double x, Kind kind, const std::string& note) {
    if (std::isnan(x)) {
      if (!corner_) throw xs::input_error(key, "undefined (NaN) for these inputs; check their magnitudes");
      Row row{key, nullptr, "not decided", note};
      row.kind = kind;
      row.undetermined = true;
      row.base_note = note;
      add(std::move(row));
      return;
    }
    // A value beyond the range of a double, or an integer beyond int64, is unbounded.
    if (!std::isfinite(x) || (kind == Kind::kInteger && std::fabs(x) >= 9.2e18)) {
      Row row{key, nullptr, "unbounded", note + " (beyond the number range for these inputs)"};
      row.kind = kind;
      row.unbounded = true;
      row.base_note = note;
      add(std::move(row));
      add(unbounded_sibling(key));
      return;
    }
    Row row{key, kind == Kind::kInteger ? nlohmann::ordered_json(static_cast<long long>(x)) : nlohmann::ordered_json(x),
            show(kind, x), note};
    row.kind = kind;
    row.base_note = note;
    row.num = kind == Kind::kInteger ? static_cast<double>(static_cast<long long>(x)) : x;
    add(std::move(row));
  }
  static Row unbounded_sibling(const std::string& key) {
    Row row{key + "_unbounded", true, "true", key + " is unbounded: its value is null in JSON"};
    row.sibling = true;
    return row;
  }
  void add(Row row) { rows_.push_back(std::move(row)); }
  std::vector<Row> rows_;
  bool corner_ = false;
};

using xs::cli::help_text;
using xs::cli::kRequired;
using xs::cli::kSizeUnits;
using xs::cli::kTimeUnits;
using xs::cli::Platform;
using xs::cli::PlatformFlags;

void report_platform(Report& r, const Platform& p) {
  r.rate("R_Bps", p.drain_rate_bps, "R, effective drain rate");
  r.seconds("tiss0_s", p.tiss0_s, "T_iss^0, backpressure-free issue time");
}

// A prediction from a calibration that gives R, T_iss^0 and Q as points: build(out, p) once. Where one of them
// is not a point (an unconstrained fit, a bound, an extrapolation, a flagged R; issue 27), build runs at every
// end of their brackets and the report gives each output that differs as a bracket, and a verdict that differs
// as "not decided"; where one has no bracket, the prediction is not decided, naming the parameter and why.
template <class Build>
Report predict_over(const Platform& p, Build&& build) {
  Report out;
  if (p.point()) {
    build(out, p);
    return out;
  }
  out.flag("point_prediction", false, "the calibration gives a parameter only as a bound or a bracket");
  out.text("not_point", p.not_point_text(), "the parameters no prediction reads as a point value");
  if (!p.bracketed()) {
    out.text("prediction", "not decided", "a non-point parameter has no bracket: give it as a flag to test one");
    return out;
  }
  std::vector<Report> corners;
  for (const Platform& c : xs::cli::platform_corners(p)) {
    Report r;
    r.set_corner();
    build(r, c);
    corners.push_back(std::move(r));
  }
  out.append(Report::merge(corners));
  return out;
}

void report_capacity_flags(Report& r, const Platform& p) {
  r.flag("Q_is_lower_bound", p.capacity_is_lower_bound,
         "Q(K) from the model is only a lower bound (no knee)");
  r.flag("Q_extrapolated", p.capacity_extrapolated, "K outside the model's Q table");
}

// ---- burst: eqs. 1-7 and the design test (eq. 10) for one periodic burst of V = K B ---------------------
struct BurstOptions {
  PlatformFlags platform;
  std::optional<long long> num_producers;
  std::optional<double> bytes_per_producer, gap_s;
  bool json = false;
};

void add_burst(CLI::App& app, BurstOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("burst", "One recurring burst of V = K B followed by a gap G: eqs. 1-7, 10.");
  cmd->footer(
      "Keys (SI): R_Bps tiss0_s Q_bytes K B_bytes G_s (inputs), V_bytes, drain_horizon_s (V/R, eq. 1),\n"
      "T_iss_s (eq. 3), dT_iss_s (eq. 4), T_period_s (eq. 2, max law), T_period_cc_s (G + V/R),\n"
      "G_star_s (eq. 5), q_peak_bytes (eq. 6), T_iss_isolated_s (eq. 7), injection_rate_Bps,\n"
      "rate_bound_ok, capacity_bound_ok, action (eq. 10: \"piggyback\" iff both bounds hold, else\n"
      "\"reshape\"), tiss0_extrapolated, Q_is_lower_bound, Q_extrapolated (--model lookups).");
  xs::cli::add_platform_flags(*cmd, o.platform, true, true);
  xs::cli::add_count_option(
      *cmd, "--K", o.num_producers,
      help_text("K, concurrent remote-store producers", "integer >= 1", "V = K B", kRequired));
  xs::cli::add_bytes_option(
      *cmd, "--B", o.bytes_per_producer,
      help_text("B, bytes per producer per burst", fmt::format("{}, > 0; e.g. 32KiB", kSizeUnits),
                "V = K B, eqs. 1-7, 10", kRequired));
  // The gap a burst sweep measures, 0 to 1 s (xstage-bench's cap per gap): 1e300s was accepted.
  xs::cli::add_seconds_in_range(
      *cmd, "--G", o.gap_s,
      help_text("G, producer-side gap between bursts", fmt::format("{}, in [0s, 1s]; e.g. 2us", kTimeUnits),
                "eqs. 2-4, 10", kRequired),
      {0.0, 1.0, "[0s, 1s]", "a gap between bursts", "2us"});
  cmd->add_flag("--json", o.json, "print one JSON object (SI units: bytes, seconds, bytes/s)");
}

Report run_burst(const BurstOptions& o) {
  const long long k = require(o.num_producers, "--K", "the producer count K, an integer >= 1");
  const double b = require(o.bytes_per_producer, "--B", "bytes per producer such as 32KiB");
  const double g = require(o.gap_s, "--G", "the producer-side gap such as 2us");
  const double v = static_cast<double>(k) * b;
  return predict_over(xs::cli::resolve_platform(o.platform, k, v, true), [&](Report& out, const Platform& p) {
    const double r = p.drain_rate_bps, t0 = p.tiss0_s, q = *p.capacity_bytes;
    const m::DesignTest test = m::design_test(t0, v, r, q, g);

    report_platform(out, p);
    out.bytes("Q_bytes", q, "Q(K), effective outstanding capacity");
    out.integer("K", static_cast<double>(k), "concurrent producers");
    out.bytes("B_bytes", b, "bytes per producer per burst");
    out.seconds("G_s", g, "producer-side gap");
    out.bytes("V_bytes", v, "V = K B, aggregate burst volume");
    out.seconds("drain_horizon_s", m::drain_period_s(v, r), "V/R, drain-limited period (eq. 1)");
    out.seconds("T_iss_s", m::issue_time_s(t0, v, r, g), "T_iss = max(T_iss^0, V/R - G) (eq. 3)");
    out.seconds("dT_iss_s", m::issue_overhead_s(t0, v, r, g), "dT_iss = [V/R - G - T_iss^0]+ (eq. 4)");
    out.seconds("T_period_s", m::period_s(t0, v, r, g), "T_period = max(T_iss^0 + G, V/R) (eq. 2)");
    out.seconds("T_period_cc_s", m::completion_coupled_period_s(v, r, g), "completion-coupled G + V/R");
    out.seconds("G_star_s", m::recovery_gap_s(t0, v, r), "G* = [V/R - T_iss^0]+, recovery gap (eq. 5)");
    out.bytes("q_peak_bytes", test.peak_outstanding_bytes, "q_peak = [V - R T_iss^0]+ (eq. 6)");
    out.seconds("T_iss_isolated_s", m::isolated_issue_time_s(t0, v, r, q), "max(T_iss^0, (V - Q)/R) (eq. 7)");
    out.rate("injection_rate_Bps", test.injection_rate_bps, "V / (T_iss^0 + G) (eq. 10)");
    out.flag("rate_bound_ok", test.rate_bound_ok, "V / (T_iss^0 + G) <= R (eq. 10)");
    out.flag("capacity_bound_ok", test.capacity_bound_ok, "q_peak <= Q (eq. 10)");
    out.text("action", m::action_name(test.action), "piggyback iff both bounds hold, else reshape (4.1)");
    out.flag("tiss0_extrapolated", p.tiss0_extrapolated, "(K, V) outside the model's T_iss^0 table");
    report_capacity_flags(out, p);
  });
}

// ---- fa: FlashAttention-A2A audit, eqs. 17-20
// ---------------------------------------------------------------
struct FaOptions {
  PlatformFlags platform;
  std::optional<long long> num_producers, tile_m, tile_n, head_dim, elem_bytes, seq_len;
  std::optional<double> sigma_s, qk_cover_s, latency_s, cover_s, num_bursts;
  bool json = false;
};

void add_fa(CLI::App& app, FaOptions& o) {
  CLI::App* cmd = app.add_subcommand("fa", "FlashAttention-A2A output bursts V = K b_m d s_out: eqs. 17-20.");
  cmd->footer(
      "Keys (SI): R_Bps tiss0_s K B_t_bytes V_bytes drain_horizon_s G_star_s (eq. 5) M_ub_tokens\n"
      "(eq. 20, whole b_n tiles) tiss0_extrapolated; with --Q or a model Q: Q_bytes q_peak_bytes\n"
      "capacity_bound_ok Q_is_lower_bound Q_extrapolated; with --M: M_tokens G_qloop_s dt_s (eq. 18)\n"
      "rate_bound_ok; with --M --g-qk: dt_prime_s (eq. 19); with --t-lat/--t-cover: dt_cc_s (eq. 17);\n"
      "with --num-bursts: num_bursts, E_drain_s = N_t [dt - G_QK]+ (--M), E_cc_s = N_t dt_cc.");
  xs::cli::add_platform_flags(*cmd, o.platform, true, false);
  const std::string time_ge0 = fmt::format("{}, >= 0", kTimeUnits);
  xs::cli::add_count_option(
      *cmd, "--K", o.num_producers,
      help_text("K, CTAs whose output-tile boundaries align", "integer >= 1", "V = K B_t", kRequired));
  xs::cli::add_count_option(
      *cmd, "--b-m", o.tile_m,
      help_text("b_m, output tile rows", "integer >= 1; e.g. 128", "B_t = b_m d s_out", kRequired));
  xs::cli::add_count_option(*cmd, "--b-n", o.tile_n,
                            help_text("b_n, KV tile width in tokens", "integer >= 1; e.g. 128",
                                      "G_Qloop = sigma M / b_n, eq. 20", kRequired));
  xs::cli::add_count_option(
      *cmd, "--d", o.head_dim,
      help_text("d, head dimension", "integer >= 1; e.g. 128", "B_t = b_m d s_out", kRequired));
  xs::cli::add_count_option(
      *cmd, "--elem-bytes", o.elem_bytes,
      help_text("s_out, output element bytes", "integer >= 1; 2 for bf16", "B_t = b_m d s_out", kRequired));
  xs::cli::add_seconds_option(
      *cmd, "--sigma", o.sigma_s,
      help_text("sigma, Q-loop time per KV tile", fmt::format("{}, > 0; e.g. 0.79us", kTimeUnits),
                "G_Qloop >= sigma M / b_n, eqs. 18, 20", kRequired),
      Sign::kPositive);
  xs::cli::add_count_option(*cmd, "--M", o.seq_len,
                            help_text("M, sequence length in tokens", "integer >= 1", "G_Qloop, eq. 18"));
  xs::cli::add_seconds_option(*cmd, "--g-qk", o.qk_cover_s,
                              help_text("G_QK, double-buffer cover window", time_ge0, "eq. 19 (with --M)"));
  xs::cli::add_seconds_option(*cmd, "--t-lat", o.latency_s,
                              help_text("T_lat, fixed completion latency", time_ge0, "eq. 17 (default 0)"));
  xs::cli::add_seconds_option(
      *cmd, "--t-cover", o.cover_s,
      help_text("T_cover, local staging cover window", time_ge0, "eq. 17 (default 0)"));
  xs::cli::add_number_option(
      *cmd, "--num-bursts", o.num_bursts,
      help_text("N_t, output-burst waves", "number >= 0", "E_drain = N_t [dt - G_QK]+, E_cc = N_t dt_cc"),
      Sign::kNonNegative);
  cmd->add_flag("--json", o.json, "print one JSON object (SI units: bytes, seconds, bytes/s)");
}

Report run_fa(const FaOptions& o) {
  const long long k = require(o.num_producers, "--K", "the aligned producer count K, an integer >= 1");
  const long long bm = require(o.tile_m, "--b-m", "the output tile rows b_m such as 128");
  const long long bn = require(o.tile_n, "--b-n", "the KV tile width b_n such as 128");
  const long long d = require(o.head_dim, "--d", "the head dimension d such as 128");
  const long long s_out = require(o.elem_bytes, "--elem-bytes", "the output element size such as 2 (bf16)");
  const double sigma = require(o.sigma_s, "--sigma", "the Q-loop time per KV tile such as 0.79us");
  if (o.num_bursts && !o.seq_len && !o.latency_s && !o.cover_s)
    xs::cli::throw_missing("--M", "--num-bursts needs --M (for E_drain_s) or --t-lat/--t-cover (for E_cc_s)");
  const double bt = m::fa_tile_bytes(int(bm), int(d), int(s_out));
  const double v = static_cast<double>(k) * bt;
  return predict_over(xs::cli::resolve_platform(o.platform, k, v, false), [&](Report& out, const Platform& p) {
    const double r = p.drain_rate_bps, t0 = p.tiss0_s;
    const double g_star = m::recovery_gap_s(t0, v, r);

    report_platform(out, p);
    out.integer("K", static_cast<double>(k), "aligned producers");
    out.bytes("B_t_bytes", bt, "B_t = b_m d s_out, bytes per producer per tile");
    out.bytes("V_bytes", v, "V = K B_t, worst aligned burst");
    out.seconds("drain_horizon_s", m::drain_period_s(v, r), "V/R");
    out.seconds("G_star_s", g_star, "G* = [V/R - T_iss^0]+ (eq. 5)");
    out.integer("M_ub_tokens", m::sequence_length_bound_tokens(int(bn), g_star, sigma),
                "M_ub* = b_n ceil(G*/sigma) (eq. 20)");
    out.flag("tiss0_extrapolated", p.tiss0_extrapolated, "(K, V) outside the model's T_iss^0 table");
    if (p.capacity_bytes) {
      const double q_peak = m::peak_outstanding_bytes(t0, v, r);
      out.bytes("Q_bytes", *p.capacity_bytes, "Q(K)");
      out.bytes("q_peak_bytes", q_peak, "[V - R T_iss^0]+ (eq. 6)");
      out.flag("capacity_bound_ok", q_peak <= *p.capacity_bytes, "q_peak <= Q (eq. 10)");
      report_capacity_flags(out, p);
    }
    if (!p.capacity_unavailable.empty()) {
      out.text("capacity_bound", "not decided", "the capacity bound (eq. 10) is not decided");
      out.text("capacity_bound_reason", p.capacity_unavailable, "why");
    }
    const double qk = o.qk_cover_s.value_or(0.0);
    double dt_s = 0;
    if (o.seq_len) {
      const double g_qloop = m::qloop_gap_s(double(*o.seq_len), int(bn), sigma);
      dt_s = m::fa_drain_stall_s(v, r, g_qloop, t0);
      out.integer("M_tokens", static_cast<double>(*o.seq_len), "sequence length");
      out.seconds("G_qloop_s", g_qloop, "G_Qloop >= sigma M / b_n");
      out.seconds("dt_s", dt_s, "dt = [V/R - G_Qloop - T_iss^0]+ (eq. 18)");
      out.flag("rate_bound_ok", g_qloop >= g_star, "G_Qloop >= G* (eq. 10)");
      if (o.qk_cover_s)
        out.seconds("dt_prime_s", m::fa_critical_stall_s(dt_s, qk), "dt' = [dt - G_QK]+ (eq. 19)");
    }
    const bool coupled = o.latency_s || o.cover_s;
    const double dt_cc =
        m::completion_coupled_exposure_s(v, r, o.latency_s.value_or(0.0), o.cover_s.value_or(0.0));
    if (coupled) out.seconds("dt_cc_s", dt_cc, "dt_cc = [V/R + T_lat - T_cover]+ (eq. 17)");
    if (o.num_bursts) {
      out.number("num_bursts", *o.num_bursts, "N_t, output-burst waves");
      if (o.seq_len)
        out.seconds("E_drain_s", m::total_exposure_s(*o.num_bursts, m::fa_critical_stall_s(dt_s, qk)),
                    "E_drain = N_t [dt - G_QK]+");
      if (coupled) out.seconds("E_cc_s", m::total_exposure_s(*o.num_bursts, dt_cc), "E_cc = N_t dt_cc");
    }
  });
}

// ---- stall, hiding: eqs. 15 and 21
// --------------------------------------------------------------------------
struct StallOptions {
  std::optional<double> span_s, cover_s;
  bool json = false;
};

void add_stall(CLI::App& app, StallOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("stall", "Critical-path stall of one tile, dt = [T_RS - T_cover]+ (eq. 15).");
  cmd->footer("Keys (SI): span_s cover_s dt_s.");
  const std::string time_ge0 = fmt::format("{}, >= 0", kTimeUnits);
  xs::cli::add_seconds_option(
      *cmd, "--span", o.span_s,
      help_text("T_RS, sender-visible remote-store span of the tile", time_ge0, "eq. 15", kRequired));
  xs::cli::add_seconds_option(
      *cmd, "--cover", o.cover_s,
      help_text("T_cover^mma, staging cover window (next mainloop)", time_ge0, "eq. 15", kRequired));
  cmd->add_flag("--json", o.json, "print one JSON object (SI units: seconds)");
}

Report run_stall(const StallOptions& o) {
  const double span = require(o.span_s, "--span", "the remote-store span such as 9.93us");
  const double cover = require(o.cover_s, "--cover", "the cover window such as 5.30us");
  Report out;
  out.seconds("span_s", span, "T_RS");
  out.seconds("cover_s", cover, "T_cover^mma");
  out.seconds("dt_s", m::critical_path_stall_s(span, cover), "dt = [T_RS - T_cover]+ (eq. 15)");
  return out;
}

struct HidingOptions {
  std::optional<double> fused_s, fa_s, serial_s;
  bool json = false;
};

void add_hiding(CLI::App& app, HidingOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("hiding", "Hiding ratio H (eq. 21), speedup and residual E_res = T_fused - T_FA.");
  cmd->footer("Keys (SI): t_fused_s t_fa_s t_serial_s H (fraction, > 1 when fused beats FA alone)\n"
              "speedup (T_serial / T_fused) E_res_s (T_fused - T_FA).");
  const std::string time_gt0 = fmt::format("{}, > 0", kTimeUnits);
  xs::cli::add_seconds_option(
      *cmd, "--t-fused", o.fused_s,
      help_text("T_fused, fused FA+A2A kernel time", time_gt0, "eq. 21, E_res", kRequired), Sign::kPositive);
  xs::cli::add_seconds_option(*cmd, "--t-fa", o.fa_s,
                              help_text("T_FA, attention-only time", time_gt0, "eq. 21, E_res", kRequired),
                              Sign::kPositive);
  xs::cli::add_seconds_option(*cmd, "--t-serial", o.serial_s,
                              help_text("T_serial, attention then A2A", fmt::format("{}, > T_FA", kTimeUnits),
                                        "eq. 21, speedup", kRequired),
                              Sign::kPositive);
  cmd->add_flag("--json", o.json, "print one JSON object (SI units: seconds)");
}

Report run_hiding(const HidingOptions& o) {
  const double fused = require(o.fused_s, "--t-fused", "the fused time such as 99.4us");
  const double fa = require(o.fa_s, "--t-fa", "the attention-only time such as 85.4us");
  const double serial = require(o.serial_s, "--t-serial", "the serial time such as 140.9us");
  if (serial <= fa) throw xs::input_error("--t-serial", "must exceed --t-fa (H divides by T_serial - T_FA)");
  Report out;
  out.seconds("t_fused_s", fused, "T_fused");
  out.seconds("t_fa_s", fa, "T_FA");
  out.seconds("t_serial_s", serial, "T_serial");
  out.number("H", m::hiding_ratio(fused, fa, serial), "1 - (T_fused - T_FA)/(T_serial - T_FA) (eq. 21)");
  out.number("speedup", m::speedup(serial, fused), "T_serial / T_fused");
  out.seconds("E_res_s", m::residual_exposure_s(fused, fa), "E_res = T_fused - T_FA");
  return out;
}

// ---- interleave: MegaMoE cross-wave interleaving, eqs. 13-16
// ------------------------------------------------
struct InterleaveOptions {
  PlatformFlags platform;
  std::optional<long long> num_producers, tile_n, num_sms, intermediate_dim;
  std::optional<double> volume_bytes, wave_gap_s, t_l1_s, t_l2_s, n1, n2;
  bool json = false;
};

void add_interleave(CLI::App& app, InterleaveOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("interleave", "Linear-1 work between Linear-2 bursts: eqs. 13-14 (and 16).");
  cmd->footer(
      "Keys (SI): R_Bps tiss0_s V_bytes G_wave_s G_star_s dT_wave_s (eq. 9 at G_wave) dT_int_s (eq. 13)\n"
      "G_int_s (eq. 14) injection_rate_Bps sufficient (eq. 14: rate <= R) tiss0_extrapolated;\n"
      "D_knee (eq. 16, scheduler rows) with all of --b-n --num-sms --h-inter.");
  xs::cli::add_platform_flags(*cmd, o.platform, false, false);
  const std::string time_ge0 = fmt::format("{}, >= 0", kTimeUnits);
  xs::cli::add_bytes_option(*cmd, "--V", o.volume_bytes,
                            help_text("V = K_act V_t, aggregate Linear-2 burst volume",
                                      fmt::format("{}, > 0", kSizeUnits), "eqs. 9, 13-14", kRequired));
  xs::cli::add_count_option(
      *cmd, "--K", o.num_producers,
      help_text("K_act, aligned producers", "integer >= 1", "looks up T_iss^0(K, V) in --model"));
  xs::cli::add_seconds_option(
      *cmd, "--G-wave", o.wave_gap_s,
      help_text("G_wave, natural gap of the wave schedule", time_ge0, "eq. 9 -> 13 (default --t-l2)"));
  xs::cli::add_seconds_option(
      *cmd, "--t-l1", o.t_l1_s,
      help_text("T_L1^mma, Linear-1 tile mainloop", time_ge0, "eqs. 13-14", kRequired));
  xs::cli::add_seconds_option(*cmd, "--t-l2", o.t_l2_s,
                              help_text("T_L2^mma, Linear-2 tile mainloop", time_ge0, "eq. 14", kRequired));
  xs::cli::add_number_option(
      *cmd, "--n1", o.n1, help_text("n1, Linear-1 tiles per cycle", "number >= 0", "eqs. 13-14", kRequired),
      Sign::kNonNegative);
  xs::cli::add_number_option(
      *cmd, "--n2", o.n2, help_text("n2, Linear-2 tiles per cycle", "number > 0", "eqs. 13-14", kRequired));
  xs::cli::add_count_option(*cmd, "--b-n", o.tile_n,
                            help_text("b_n, N-tile width", "integer >= 1", "eq. 16"));
  xs::cli::add_count_option(*cmd, "--num-sms", o.num_sms,
                            help_text("K_SM, participating SMs", "integer >= 1", "eq. 16"));
  xs::cli::add_count_option(*cmd, "--h-inter", o.intermediate_dim,
                            help_text("h_inter, expert intermediate dimension", "integer >= 1", "eq. 16"));
  cmd->add_flag("--json", o.json, "print one JSON object (SI units: bytes, seconds, bytes/s)");
}

Report run_interleave(const InterleaveOptions& o) {
  const double v = require(o.volume_bytes, "--V", "the aggregate burst volume such as 4MiB");
  const double t_l1 = require(o.t_l1_s, "--t-l1", "the Linear-1 mainloop time such as 3.8us");
  const double t_l2 = require(o.t_l2_s, "--t-l2", "the Linear-2 mainloop time such as 5.3us");
  const double n1 = require(o.n1, "--n1", "Linear-1 tiles per cycle such as 1");
  const double n2 = require(o.n2, "--n2", "Linear-2 tiles per cycle such as 1");
  const double g_wave = o.wave_gap_s.value_or(t_l2);
  const int knee_flags = int(bool(o.tile_n)) + int(bool(o.num_sms)) + int(bool(o.intermediate_dim));
  if (knee_flags != 0 && knee_flags != 3)
    xs::cli::throw_missing(!o.tile_n    ? "--b-n"
                           : !o.num_sms ? "--num-sms"
                                        : "--h-inter",
                           "D_knee (eq. 16) needs all of --b-n, --num-sms and --h-inter");
  Platform platform = xs::cli::resolve_platform(o.platform, o.num_producers, v, false);
  // Eqs. 13-16 read no Q: a flagged or missing Q of the calibration does not touch this prediction.
  std::erase_if(platform.not_point, [](const Platform::NotPoint& n) { return n.param == Platform::Param::kCapacity; });
  platform.capacity_bytes.reset();
  platform.capacity_unavailable.clear();
  return predict_over(platform, [&](Report& out, const Platform& p) {
    const double r = p.drain_rate_bps, t0 = p.tiss0_s;
    const double dt_wave = m::issue_overhead_s(t0, v, r, g_wave);

    report_platform(out, p);
    out.bytes("V_bytes", v, "V = K_act V_t");
    out.seconds("G_wave_s", g_wave, "G_wave ~ T_L2^mma");
    out.seconds("G_star_s", m::recovery_gap_s(t0, v, r), "G* = [V/R - T_iss^0]+ (eq. 5)");
    out.seconds("dT_wave_s", dt_wave, "[V/R - G_wave - T_iss^0]+ (eq. 9)");
    out.seconds("dT_int_s", m::interleaved_issue_overhead_s(dt_wave, n1, n2, t_l1),
                "[dT_wave - (n1/n2) T_L1]+ (eq. 13)");
    out.seconds("G_int_s", m::interleaved_gap_s(t_l2, n1, n2, t_l1), "T_L2 + (n1/n2) T_L1 (eq. 14)");
    out.rate("injection_rate_Bps", m::interleaved_injection_rate_bps(v, t0, t_l2, t_l1, n1, n2),
             "n2 V / (n2 T_iss^0 + n2 T_L2 + n1 T_L1) (eq. 14)");
    out.flag("sufficient", m::interleaving_sufficient(v, t0, r, t_l2, t_l1, n1, n2), "eq. 14 rate <= R");
    out.flag("tiss0_extrapolated", p.tiss0_extrapolated, "(K, V) outside the model's T_iss^0 table");
    if (knee_flags == 3)
      out.number("D_knee",
                 m::lead_knee_rows(double(*o.tile_n), double(*o.num_sms), double(*o.intermediate_dim)),
                 "b_n K_SM / (2 h_inter), scheduler rows (eq. 16)");
  });
}

// ---- moe: the MegaMoE schedule advisor (cli/predict_moe.cpp, moe/advisor/moe_advisor.hpp) ----------------------
Report run_moe(const xs::cli::PredictMoeOptions& o) {
  using xs::moe::RowKind;
  Report out;
  for (const auto& row : xs::cli::run_predict_moe(o)) {
    switch (row.kind) {
      case RowKind::kSeconds: out.seconds(row.key, row.value, row.note); break;
      case RowKind::kBytes: out.bytes(row.key, row.value, row.note); break;
      case RowKind::kRate: out.rate(row.key, row.value, row.note); break;
      case RowKind::kNumber: out.number(row.key, row.value, row.note); break;
      case RowKind::kInteger: out.integer(row.key, row.value, row.note); break;
      case RowKind::kFlag: out.flag(row.key, row.flag, row.note); break;
      case RowKind::kText: out.text(row.key, row.text, row.note); break;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  return xs::cli::run_main("xstage-predict", [&]() {
    CLI::App app{
        "xstage-predict: the X-Stage Burst-Gap model (paper sections 3-4). Sizes take B, KB, KiB, MB, "
        "MiB, GB, GiB; times ns, us, ms, s; rates GB/s, GiB/s. Output in SI units with --json.\n"
        "A result beyond the number range (e.g. V/R with R near 0) is printed \"unbounded\"; in JSON it is\n"
        "null with a sibling \"<key>_unbounded\": true. Where --model gives R, T_iss^0 or Q only as a bound, an\n"
        "extrapolation or an unconstrained fit, burst/fa/interleave say point_prediction false and why (not_point),\n"
        "and give each output that depends on it as a bracket (null, \"<key>_bracket\": [lo, hi]) or, where the\n"
        "ends disagree, \"not decided\" (null, \"<key>_not_decided\": true); with no bracket, prediction \"not decided\".\n"
        "Exit codes: 0 ok, 2 bad usage or input.",
        "xstage-predict"};
    xs::cli::add_version_flag(app, "xstage-predict");
    app.require_subcommand(1);
    BurstOptions burst;
    FaOptions fa;
    StallOptions stall;
    HidingOptions hiding;
    InterleaveOptions interleave;
    xs::cli::PredictMoeOptions moe;
    xs::cli::PredictFaResultOptions fa_result;
    fa_result.argv.assign(argv, argv + argc);
    xs::cli::PredictFaScoreOptions fa_score;
    fa_score.argv.assign(argv, argv + argc);
    xs::cli::PredictMoeScoreOptions moe_score;
    moe_score.argv.assign(argv, argv + argc);
    xs::cli::PredictMoeWholeOptions moe_whole;
    moe_whole.argv.assign(argv, argv + argc);
    xs::cli::PredictFaWholeOptions fa_whole;
    fa_whole.argv.assign(argv, argv + argc);
    add_burst(app, burst);
    add_fa(app, fa);
    add_stall(app, stall);
    add_hiding(app, hiding);
    add_interleave(app, interleave);
    xs::cli::add_predict_moe(app, moe);
    xs::cli::add_predict_fa_result(app, fa_result);
    xs::cli::add_predict_fa_score(app, fa_score);
    xs::cli::add_predict_moe_score(app, moe_score);
    xs::cli::add_predict_moe_whole(app, moe_whole);
    xs::cli::add_predict_fa_whole(app, fa_whole);
    xs::cli::PredictInterferenceOptions interference;
    xs::cli::add_predict_interference(app, interference);
    xs::cli::parse_or_throw(app, argc, argv);

    const std::string name = app.get_subcommands().front()->get_name();
    if (name == "burst")
      run_burst(burst).print(burst.json);
    else if (name == "fa")
      run_fa(fa).print(fa.json);
    else if (name == "stall")
      run_stall(stall).print(stall.json);
    else if (name == "hiding")
      run_hiding(hiding).print(hiding.json);
    else if (name == "interleave")
      run_interleave(interleave).print(interleave.json);
    else if (name == "fa-result")
      xs::cli::run_predict_fa_result(fa_result);
    else if (name == "fa-score")
      xs::cli::run_predict_fa_score(fa_score);
    else if (name == "moe-score")
      xs::cli::run_predict_moe_score(moe_score);
    else if (name == "moe-whole")
      xs::cli::run_predict_moe_whole(moe_whole);
    else if (name == "fa-whole")
      xs::cli::run_predict_fa_whole(fa_whole);
    else if (name == "interference")
      xs::cli::run_predict_interference(interference);
    else
      run_moe(moe).print(moe.json);
    return 0;
  });
}
