// xstage cli layer: xstage-predict, the Burst-Gap model of X-Stage (paper sections 3-4, eqs. 1-21) at the
// command line. Each subcommand fills an options struct, calls xs::model, and prints one report: a JSON
// object (--json, SI numbers) or an aligned table with units. Keys are a contract that scripts rely on.
#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/common/cli_main.hpp"
#include "cli/common/options.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "model/burst_gap.hpp"
#include "model/platform_model.hpp"

namespace {

namespace m = xs::model;
using xs::cli::require;
using xs::cli::Sign;

// Ordered rows shown the same way in JSON (SI number) and in the table (human units plus a note).
class Report {
 public:
  void seconds(const std::string& key, double s, const std::string& note) { add(key, s, xs::format_seconds(s), note); }
  void bytes(const std::string& key, double b, const std::string& note) { add(key, b, xs::format_bytes(b), note); }
  void rate(const std::string& key, double bps, const std::string& note) { add(key, bps, xs::format_rate(bps), note); }
  void number(const std::string& key, double x, const std::string& note) { add(key, x, fmt::format("{:.4g}", x), note); }
  void integer(const std::string& key, long long x, const std::string& note) { add(key, x, std::to_string(x), note); }
  void flag(const std::string& key, bool x, const std::string& note) { add(key, x, x ? "true" : "false", note); }
  void text(const std::string& key, const std::string& x, const std::string& note) { add(key, x, x, note); }

  void print(bool as_json) const {
    if (as_json) {
      nlohmann::ordered_json j = nlohmann::ordered_json::object();
      for (const auto& row : rows_) j[row.key] = row.value;
      std::printf("%s\n", j.dump().c_str());
      return;
    }
    std::size_t key_w = 0, shown_w = 0;
    for (const auto& row : rows_) key_w = std::max(key_w, row.key.size()), shown_w = std::max(shown_w, row.shown.size());
    for (const auto& row : rows_)
      std::printf("%s\n", fmt::format("{:<{}}  {:>{}}  {}", row.key, key_w, row.shown, shown_w, row.note).c_str());
  }

 private:
  struct Row {
    std::string key;
    nlohmann::ordered_json value;
    std::string shown, note;
  };
  void add(const std::string& key, nlohmann::ordered_json value, std::string shown, const std::string& note) {
    rows_.push_back({key, std::move(value), std::move(shown), note});
  }
  std::vector<Row> rows_;
};

// M_X = (T_iss^0, R, Q) from flags, or looked up in a calibration file; explicit flags override the file.
struct PlatformFlags {
  std::string model_path;
  std::optional<double> drain_rate_bps, tiss0_s, capacity_bytes;
};
struct Platform {
  double drain_rate_bps = 0, tiss0_s = 0;
  std::optional<double> capacity_bytes;
  bool tiss0_extrapolated = false, capacity_extrapolated = false, capacity_is_lower_bound = false;
};

void add_platform_flags(CLI::App& cmd, PlatformFlags& f, bool with_capacity) {
  cmd.add_option("--model", f.model_path,
                 "calibration result file (xstage.result 1.x with a `model` section) supplying R, T_iss^0(K,V) "
                 "and Q(K) at this K and V; --R/--tiss0/--Q given as well override it")
      ->type_name("FILE");
  xs::cli::add_rate_option(cmd, "--R", f.drain_rate_bps,
                           "R, effective aggregate drain rate (GB/s, GiB/s; e.g. 717GB/s), eqs. 1-7, 10");
  xs::cli::add_seconds_option(cmd, "--tiss0", f.tiss0_s,
                              "T_iss^0, backpressure-free burst issue time (ns, us, ms, s; e.g. 0.76us), eqs. 3-10",
                              Sign::kPositive);
  if (with_capacity)
    xs::cli::add_bytes_option(cmd, "--Q", f.capacity_bytes,
                              "Q(K), effective outstanding capacity (B, KB, KiB, MB, MiB, GB, GiB; e.g. 4.25MiB), "
                              "eqs. 7 and 10");
}

Platform resolve_platform(const PlatformFlags& f, std::optional<long long> num_producers, double volume_bytes,
                          bool need_capacity) {
  Platform p;
  if (f.model_path.empty()) {
    p.drain_rate_bps = require(f.drain_rate_bps, "--R", "a drain rate such as 717GB/s, or --model FILE");
    p.tiss0_s = require(f.tiss0_s, "--tiss0", "an issue time such as 0.76us, or --model FILE");
    if (need_capacity) p.capacity_bytes = require(f.capacity_bytes, "--Q", "a size such as 4.25MiB, or --model FILE");
    else p.capacity_bytes = f.capacity_bytes;
    return p;
  }
  const m::PlatformModel model = m::PlatformModel::load(f.model_path);
  p.drain_rate_bps = f.drain_rate_bps.value_or(model.drain_rate_bps());
  if (f.tiss0_s) {
    p.tiss0_s = *f.tiss0_s;
  } else {
    const int k = static_cast<int>(require(num_producers, "--K", "T_iss^0(K, V) is looked up in --model at this K"));
    const m::Lookup t = model.tiss0_s(k, volume_bytes);
    p.tiss0_s = t.value;
    p.tiss0_extrapolated = t.extrapolated;
  }
  if (f.capacity_bytes) {
    p.capacity_bytes = f.capacity_bytes;
  } else if (model.has_capacity() && num_producers) {
    const m::Lookup q = model.capacity_bytes(static_cast<int>(*num_producers));
    p.capacity_bytes = q.value;
    p.capacity_extrapolated = q.extrapolated;
    p.capacity_is_lower_bound = q.is_lower_bound;
  } else if (need_capacity) {
    xs::cli::throw_missing("--Q", "the --model file has no Q(K) entries; give a size such as 4.25MiB");
  }
  return p;
}

void report_platform(Report& r, const Platform& p) {
  r.rate("R_Bps", p.drain_rate_bps, "R, effective drain rate");
  r.seconds("tiss0_s", p.tiss0_s, "T_iss^0, backpressure-free issue time");
}

void report_capacity_flags(Report& r, const Platform& p) {
  r.flag("Q_is_lower_bound", p.capacity_is_lower_bound, "Q(K) from the model is only a lower bound (no knee)");
  r.flag("Q_extrapolated", p.capacity_extrapolated, "K outside the model's Q table");
}

#include "xstage_predict_commands.inc"

}  // namespace
