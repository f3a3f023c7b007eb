// xstage cli layer: `xstage-predict interference` (see predict_interference.hpp).
#include "xs/cli/predict_interference.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "xs/common/error.hpp"
#include "xs/common/units.hpp"
#include "xs/model/interference.hpp"
#include "xs/report/result_file.hpp"

namespace xs::cli {
namespace {

constexpr const char* kUsage = "xstage-predict interference --calibration CAL.json --K N --rate RATE [--R RATE] "
                               "[--outstanding BYTES --Q BYTES] [--tile-time T] [--k-blocks N] [--B BYTES] "
                               "[--working-set l2|hbm] [--full-fraction U] [--json]  (form full_path_wait); "
                               "xstage-predict interference --calibration CAL.json --K N --B BYTES --tile-time T "
                               "[--json]  (form epilogue_per_byte: B stored per tile)";

double rate_or_inf(const std::string& text, const char* flag) {
  if (text == "inf") return std::numeric_limits<double>::infinity();
  return parse_rate_bps(text, flag);
}

// A bracket in JSON as the other predictions write one: a non-finite bound (an unbounded slowdown, e.g. a tile time
// of 0 under load) is null with a sibling "<bound>_unbounded": true, never a bare null a reader takes for "absent".
nlohmann::json bracket_json(const model::SlowdownBracket& b) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, x] : {std::pair{"lo", b.lo}, std::pair{"mid", b.mid}, std::pair{"hi", b.hi}}) {
    if (std::isnan(x)) throw std::logic_error(fmt::format("interference bracket {} is NaN", key));
    if (std::isfinite(x)) {
      j[key] = x;
    } else {
      j[key] = nullptr;
      j[std::string(key) + "_unbounded"] = true;
    }
  }
  return j;
}

std::string bound_text(double x, const char* fmt_spec) {
  return std::isfinite(x) ? fmt::format(fmt::runtime(fmt_spec), x) : std::string("unbounded");
}

}  // namespace

void add_predict_interference(CLI::App& app, PredictInterferenceOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "interference", "Mainloop slowdown under remote stores from a calibration's interference term (issue 28).");
  cmd->footer(
      "full_path_wait: s = s_free + u W(K) (n_kb/n_kb_cal) / T0, W(K) = W_ref (K/K_ref)^gamma; u: 0 below R, 1 above\n"
      "R (or q >= Q), unknown [0,1] within the knee band; --full-fraction sets it. Needs --rate.\n"
      "epilogue_per_byte: s = 1 + a(K) B / T0, a(K) = a_ref (K/K_ref)^gamma, B the bytes a CTA stores per tile.\n"
      "Needs --B and --tile-time. Equations: docs/interference-model.md.\n"
      "A calibration without the term prints its status and why (exit 0). Bad input: exit 2.");
  cmd->add_option("--calibration", o.calibration, "calibration file with extra.interference")->required();
  cmd->add_option("--K", o.num_sms, "K_SM: storing CTAs (one per SM), > 0")->required();
  cmd->add_option("--rate", o.rate, "offered store rate of all K CTAs (e.g. 60GB/s; inf: back to back); "
                                     "full_path_wait only");
  cmd->add_option("--R", o.drain_rate, "drain rate R of the path (default: the term's drain_rate_Bps)");
  cmd->add_option("--outstanding", o.outstanding, "q: outstanding bytes (with --Q: q >= Q means a full path)");
  cmd->add_option("--Q", o.capacity, "Q(K): X-Stage capacity, bytes");
  cmd->add_option("--tile-time", o.tile_time, "T0: the tile's time without stores, in [1ns, 10s] (epilogue_per_byte: required; full_path_wait: default the calibration's)");
  cmd->add_option("--k-blocks", o.k_blocks, "64-wide k-blocks per tile (default: as calibrated)");
  cmd->add_option("--B", o.burst_bytes, "bytes per storing CTA and burst (checked against the calibration)");
  cmd->add_option("--working-set", o.working_set, "operands resident in l2 or streamed from hbm");
  cmd->add_option("--full-fraction", o.full_fraction, "u in [0,1]: share of the tile's time the path is full");
  cmd->add_flag("--json", o.json, "JSON output");
}

constexpr long long kMaxInterferenceK = 65'536;  // the sweeps' K limit

void run_predict_interference(const PredictInterferenceOptions& o) {
  // K_SM and k-blocks are read as 64-bit and bounded before any narrowing (4294967428 once wrapped to 132).
  if (*o.num_sms <= 0 || *o.num_sms > kMaxInterferenceK)
    throw input_error("--K", fmt::format("{} is out of range: K_SM must be an integer in [1, {}]; usage: {}", *o.num_sms,
                                         kMaxInterferenceK, kUsage));
  if (o.working_set != "l2" && o.working_set != "hbm")
    throw input_error("--working-set", fmt::format("'{}' is not l2 or hbm; usage: {}", o.working_set, kUsage));
  if (o.full_fraction && !(*o.full_fraction >= 0 && *o.full_fraction <= 1))
    throw input_error("--full-fraction", "must be in [0, 1]");
  if (o.k_blocks && (*o.k_blocks <= 0 || *o.k_blocks > 1'000'000))
    throw input_error("--k-blocks", fmt::format("{} is out of range: must be an integer in [1, 1000000]", *o.k_blocks));
  if (o.outstanding.empty() != o.capacity.empty()) throw input_error("--outstanding", "give --outstanding and --Q together");
  model::LoadState load;
  if (!o.rate.empty()) load.offered_rate_bps = rate_or_inf(o.rate, "--rate");
  load.num_sms = static_cast<int>(*o.num_sms);
  load.operands_in_l2 = o.working_set == "l2";
  if (!o.outstanding.empty()) {
    load.outstanding_bytes = static_cast<double>(parse_bytes(o.outstanding, "--outstanding"));
    load.capacity_bytes = static_cast<double>(parse_bytes(o.capacity, "--Q"));
  }
  if (!o.tile_time.empty()) {
    load.tile_time_s = parse_seconds(o.tile_time, "--tile-time");
    // A mainloop tile takes microseconds; outside [1 ns, 10 s] the value is a typo (a unit left out or wrong).
    if (!(load.tile_time_s >= 1e-9 && load.tile_time_s <= 10.0))
      throw input_error("--tile-time", fmt::format("'{}' is out of range: a tile's time must be in [1ns, 10s], e.g. "
                                                   "3us; usage: {}", o.tile_time, kUsage));
  }
  if (o.k_blocks) load.k_blocks_per_tile = static_cast<int>(*o.k_blocks);
  if (!o.burst_bytes.empty()) load.burst_bytes_per_sm = static_cast<double>(parse_bytes(o.burst_bytes, "--B"));
  if (o.full_fraction) load.full_fraction = *o.full_fraction;

  const report::ResultFile file = report::read_result_file(o.calibration);
  // An application result (fa_a2a, megamoe) has no calibration points: refused, not "not calibrated".
  if (file.points.empty() && !file.app_points.empty())
    throw input_error("--calibration", fmt::format("{} holds application points only ({} of them), no calibration "
                                                   "points: give an xstage-calibrate output; usage: {}",
                                                   o.calibration, file.app_points.size(), kUsage));
  const model::InterferenceTerm term = model::interference_term_of_calibration(nlohmann::json{{"extra", file.extra}});
  nlohmann::json out = {{"status", model::interference_status_id(term.status)}, {"why", term.why}, {"form", term.form}};
  const bool epilogue = term.form == model::kEpiloguePerByteForm;
  if (term.status == model::InterferenceStatus::kIdentified && !epilogue && o.rate.empty())
    throw input_error("--rate", fmt::format("the {} term needs the offered rate; usage: {}", term.form, kUsage));
  if (term.status == model::InterferenceStatus::kIdentified && epilogue && (o.burst_bytes.empty() || o.tile_time.empty()))
    throw input_error(o.burst_bytes.empty() ? "--B" : "--tile-time",
                      fmt::format("the epilogue_per_byte term needs --B (bytes stored per tile) and --tile-time (T0); "
                                  "usage: {}", kUsage));
  // Flags the epilogue form does not use are said, not silently dropped (a user who passes --rate expects it to
  // matter): on stderr, and in the JSON as `ignored`.
  std::vector<std::string> ignored;
  if (term.status == model::InterferenceStatus::kIdentified && epilogue) {
    if (!o.rate.empty()) ignored.push_back("--rate");
    if (!o.drain_rate.empty()) ignored.push_back("--R");
    if (o.k_blocks) ignored.push_back("--k-blocks");
    if (!o.outstanding.empty()) ignored.push_back("--outstanding/--Q");
    if (o.full_fraction) ignored.push_back("--full-fraction");
    if (o.working_set != "l2") ignored.push_back("--working-set");
  }
  if (!ignored.empty()) {
    std::string list;
    for (const auto& f : ignored) list += (list.empty() ? "" : ", ") + f;
    fmt::print(stderr, "xstage-predict interference: note: {} not used by this calibration's term ({}: s = 1 + a(K) "
               "B / T0 needs only --K, --B and --tile-time; the values given change nothing)\n", list, term.form);
    out["ignored"] = ignored;
  }
  model::SlowdownBracket s, u{0, 0, 0};  // computed once, for the JSON and the table
  if (term.status == model::InterferenceStatus::kIdentified) {
    if (epilogue) {
      // The term does not use R's value (the replay's queue times the drain); any remote path is > 0.
      const double r = term.parameter("drain_rate_bps").value;
      load.drain_rate_bps = std::isfinite(r) && r > 0 ? r : 1.0;
    } else if (!o.drain_rate.empty()) {
      load.drain_rate_bps = parse_rate_bps(o.drain_rate, "--R");
      if (!(load.drain_rate_bps > 0)) throw input_error("--R", "must be > 0");
    } else {
      load.drain_rate_bps = term.parameter("drain_rate_Bps").value;
    }
    s = term.slowdown(load);
    if (!epilogue) u = term.full_fraction(load);
    out["slowdown"] = bracket_json(s);
    if (!epilogue) out["full_fraction"] = bracket_json(u);
    if (std::isfinite(load.drain_rate_bps)) {
      out["drain_rate_Bps"] = load.drain_rate_bps;
    } else {
      out["drain_rate_Bps"] = nullptr;
      out["drain_rate_Bps_unbounded"] = true;
    }
    out["outside_calibration"] = term.outside_calibration(load);
  }
  if (o.json) {
    fmt::print("{}\n", out.dump(2));
    return;
  }
  if (term.status != model::InterferenceStatus::kIdentified) {
    fmt::print("status  {}\nwhy     {}\n", model::interference_status_name(term.status), term.why);
    return;
  }
  fmt::print("status               identified ({})\n", term.form);
  fmt::print("slowdown             {}  [{}, {}]  (tile time under load / without stores)\n", bound_text(s.mid, "{:.4g}"),
             bound_text(s.lo, "{:.4g}"), bound_text(s.hi, "{:.4g}"));
  if (!epilogue) {
    fmt::print("full fraction u      {}  [{}, {}]\n", bound_text(u.mid, "{:.3g}"), bound_text(u.lo, "{:.3g}"),
               bound_text(u.hi, "{:.3g}"));
    fmt::print("drain rate R         {}\n", format_rate(load.drain_rate_bps));
  } else {
    const auto& a = term.parameter("cost_s_per_byte_at_kref");
    fmt::print("cost per stored byte {:.3g} ns/KiB at K_ref {:g}  [{:.3g}, {:.3g}]\n", a.value * 1024e9,
               term.parameter("k_ref").value, a.lo * 1024e9, a.hi * 1024e9);
  }
  const std::string outside = out["outside_calibration"].get<std::string>();
  fmt::print("outside calibration  {}\n", outside.empty() ? "no" : outside);
}

}  // namespace xs::cli
