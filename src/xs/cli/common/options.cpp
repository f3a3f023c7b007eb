// xstage cli layer: unit-aware CLI11 options (see options.hpp).
#include "xs/cli/common/options.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "xs/bench/calibration.hpp"
#include "xs/common/error.hpp"
#include "xs/common/units.hpp"
#include "xs/fit/calibration_file.hpp"
#include "xs/model/platform_model.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/json_read.hpp"

namespace xs::cli {
namespace {

constexpr double kMinIssueTimeS = 1e-9, kMaxIssueTimeS = 1.0;  // --tiss0's accepted range

// Parses at CLI11's callback time, so the error names the flag and surfaces from app.parse().
CLI::Option* add_parsed(CLI::App& app, const std::string& flag, const std::string& help,
                        const std::string& type_name, std::function<void(const std::string&)> parse) {
  return app.add_option_function<std::string>(flag, std::move(parse), help)->type_name(type_name);
}

void check_sign(double value, Sign sign, const std::string& flag, const std::string& text,
                const std::string& example) {
  if (sign == Sign::kPositive && value <= 0)
    throw input_error(flag, fmt::format("'{}' must be greater than zero (e.g. {})", text, example));
  if (value < 0) throw input_error(flag, fmt::format("'{}' must not be negative (e.g. {})", text, example));
}

}  // namespace

void throw_missing(const std::string& flag, const std::string& why) {
  throw input_error(flag, "required; " + why);
}

CLI::Option* add_bytes_option(CLI::App& app, const std::string& flag, std::optional<double>& bytes,
                              const std::string& help, Sign sign) {
  return add_parsed(app, flag, help, "SIZE", [&bytes, flag, sign](const std::string& text) {
    const double value = static_cast<double>(parse_bytes(text, flag));
    check_sign(value, sign, flag, text, "32KiB");
    bytes = value;
  });
}

CLI::Option* add_seconds_option(CLI::App& app, const std::string& flag, std::optional<double>& seconds,
                                const std::string& help, Sign sign) {
  return add_parsed(app, flag, help, "TIME", [&seconds, flag, sign](const std::string& text) {
    const double value = parse_seconds(text, flag);
    check_sign(value, sign, flag, text, "0.76us");
    seconds = value;
  });
}

CLI::Option* add_seconds_in_range(CLI::App& app, const std::string& flag, std::optional<double>& seconds,
                                  const std::string& help, const TimeRange& range) {
  return add_parsed(app, flag, help, "TIME", [&seconds, flag, range](const std::string& text) {
    const double value = parse_seconds(text, flag);
    if (!(value >= range.min_s && value <= range.max_s))
      throw input_error(flag, fmt::format("'{}' is outside the accepted range {} of {} (e.g. {})", text, range.text,
                                          range.what, range.example));
    seconds = value;
  });
}

CLI::Option* add_rate_option(CLI::App& app, const std::string& flag, std::optional<double>& bytes_per_s,
                             const std::string& help) {
  return add_parsed(app, flag, help, "RATE", [&bytes_per_s, flag](const std::string& text) {
    bytes_per_s = parse_rate_bps(text, flag);  // rejects <= 0 itself
  });
}

CLI::Option* add_number_option(CLI::App& app, const std::string& flag, std::optional<double>& value,
                               const std::string& help, Sign sign) {
  return add_parsed(app, flag, help, "NUMBER", [&value, flag, sign](const std::string& text) {
    const double v = parse_number(text, flag);
    check_sign(v, sign, flag, text, "4");
    value = v;
  });
}

CLI::Option* add_count_option(CLI::App& app, const std::string& flag, std::optional<long long>& count,
                              const std::string& help, long long min_value, long long max_value) {
  return add_parsed(app, flag, help, "INT", [&count, flag, min_value, max_value](const std::string& text) {
    const long long v = parse_integer(text, flag);
    if (v < min_value || v > max_value)
      throw input_error(flag,
                        fmt::format("'{}' must be an integer >= {} and <= {}", text, min_value, max_value));
    count = v;
  });
}

std::string help_text(const std::string& what, const std::string& form, const std::string& feeds,
                      const char* need) {
  return fmt::format("{} ({}); {}{}", what, form, feeds, need);
}

void add_platform_flags(CLI::App& cmd, PlatformFlags& f, bool with_capacity, bool capacity_required) {
  cmd.add_option(
         "--model", f.model_path,
         "calibration result file (xstage.result 1.x with a `model` section) supplying R, T_iss^0(K,V) "
         "and Q(K) at this K and V; --R/--tiss0/--Q given as well override it")
      ->type_name("FILE");
  add_rate_option(cmd, "--R", f.drain_rate_bps,
                  help_text("R, effective aggregate drain rate", "GB/s, GiB/s, > 0; e.g. 717GB/s",
                            "eqs. 1-7, 10", kUnlessModel));
  // T_iss^0 from 1 ns to 1 s, the range of a burst's issue time that --G's cap (1 s per gap) leaves measurable:
  // 1e300s was accepted and printed 300-digit times.
  add_seconds_in_range(cmd, "--tiss0", f.tiss0_s,
                       help_text("T_iss^0, backpressure-free burst issue time",
                                 fmt::format("{}, in [1ns, 1s]; e.g. 0.76us", kTimeUnits), "eqs. 3-10", kUnlessModel),
                       {kMinIssueTimeS, kMaxIssueTimeS, "[1ns, 1s]", "a burst's issue time T_iss^0", "0.76us"});
  if (with_capacity)
    add_bytes_option(
        cmd, "--Q", f.capacity_bytes,
        help_text("Q(K), effective outstanding capacity", fmt::format("{}, > 0; e.g. 4.25MiB", kSizeUnits),
                  "eqs. 7, 10", capacity_required ? kUnlessModel : ""));
}

Platform resolve_platform(const PlatformFlags& f, std::optional<long long> num_producers, double volume_bytes,
                          bool need_capacity) {
  Platform p;
  if (f.model_path.empty()) {
    p.drain_rate_bps = require(f.drain_rate_bps, "--R", "a drain rate such as 717GB/s, or --model FILE");
    p.tiss0_s = require(f.tiss0_s, "--tiss0", "an issue time such as 0.76us, or --model FILE");
    if (need_capacity)
      p.capacity_bytes = require(f.capacity_bytes, "--Q", "a size such as 4.25MiB, or --model FILE");
    else
      p.capacity_bytes = f.capacity_bytes;
    return p;
  }
  const model::PlatformModel calibrated = fit::load_platform_model(f.model_path);
  const auto note_not_point = [&p](Platform::Param param, const model::Lookup& l) {
    if (l.usable_as_point) return;
    Platform::NotPoint n{param, l.not_point_reason, l.has_bracket(), l.bracket_lo, l.bracket_hi};
    if (!n.has_bracket) n.lo = n.hi = 0;
    p.not_point.push_back(std::move(n));
  };
  if (f.drain_rate_bps) {
    p.drain_rate_bps = *f.drain_rate_bps;
  } else {
    const model::Lookup r = calibrated.drain_rate();
    p.drain_rate_bps = r.value;
    note_not_point(Platform::Param::kDrainRate, r);
  }
  if (f.tiss0_s) {
    p.tiss0_s = *f.tiss0_s;
  } else if (calibrated.tiss0_table().empty()) {
    throw_missing("--tiss0", "the --model file has no T_iss^0 entries; give a time such as 0.76us");
  } else {
    const int k =
        static_cast<int>(require(num_producers, "--K", "T_iss^0(K, V) is looked up in --model at this K"));
    const model::Lookup t = calibrated.tiss0_s(k, volume_bytes);
    p.tiss0_s = t.value;
    p.tiss0_extrapolated = t.extrapolated;
    note_not_point(Platform::Param::kIssueTime, t);
  }
  if (f.capacity_bytes) {
    p.capacity_bytes = f.capacity_bytes;
  } else if (calibrated.has_capacity() && num_producers) {
    const model::Lookup q = calibrated.capacity_bytes(static_cast<int>(*num_producers));
    if (q.is_lower_bound && q.value < bench::kTrivialCapacityBoundBytes) {
      p.capacity_unavailable = fmt::format("Q(K={}) is not bounded by this calibration (its lower bound, {}, is "
                                           "trivial: no knee and no floor point above it): the capacity bound is "
                                           "not decided; give --Q to test one", *num_producers,
                                           format_bytes(q.value));
    } else {
      p.capacity_bytes = q.value;
      p.capacity_extrapolated = q.extrapolated;
      p.capacity_is_lower_bound = q.is_lower_bound;
      if (!q.usable_as_point && !q.has_bracket() && !need_capacity) {
        // A prediction that can go without Q (fa) leaves its capacity bound undecided instead of deciding nothing.
        p.capacity_bytes.reset();
        p.capacity_unavailable = q.not_point_reason + ": the capacity bound is not decided; give --Q to test one";
      } else {
        note_not_point(Platform::Param::kCapacity, q);
      }
    }
  }
  if (!p.capacity_bytes && p.capacity_unavailable.empty() && !calibrated.unidentified_capacity_k().empty()) {
    std::string ks;
    for (int k : calibrated.unidentified_capacity_k()) ks += (ks.empty() ? "" : ",") + std::to_string(k);
    p.capacity_unavailable = "Q(K) not identified by this calibration (K=" + ks +
                             "; see its model.fit.Q notes): the capacity bound is not decided; give --Q to test one";
  }
  if (!p.capacity_bytes && need_capacity)
    throw_missing("--Q", p.capacity_unavailable.empty()
                             ? "the --model file has no Q(K) entries; give a size such as 4.25MiB"
                             : p.capacity_unavailable + " (a size such as 4.25MiB)");
  return p;
}

bool Platform::bracketed() const {
  return std::all_of(not_point.begin(), not_point.end(), [](const NotPoint& n) { return n.has_bracket; });
}

const char* Platform::NotPoint::name() const {
  switch (param) {
    case Param::kDrainRate: return "R";
    case Param::kIssueTime: return "T_iss^0";
    case Param::kCapacity: return "Q";
  }
  return "?";
}

std::string Platform::not_point_text() const {
  std::string text;
  for (const NotPoint& n : not_point) {
    // The lookups' reasons mostly name their parameter already ("R is a lower bound", "T_iss^0(K=..."): no prefix then.
    const bool named = n.reason.rfind(n.name(), 0) == 0;
    text += (text.empty() ? "" : "; ") + (named ? "" : std::string(n.name()) + ": ") + n.reason;
    if (!n.has_bracket) {
      if (n.reason.find("no bracket") == std::string::npos) text += " (no bracket)";
      continue;
    }
    const auto shown = [&n](double x) {
      if (!std::isfinite(x)) return std::string("unbounded");
      switch (n.param) {
        case Param::kDrainRate: return format_rate(x);
        case Param::kCapacity: return format_bytes(x);
        case Param::kIssueTime: break;
      }
      return format_seconds(x);
    };
    text += fmt::format(" (bracket [{}, {}])", shown(n.lo), shown(n.hi));
  }
  return text;
}

std::vector<Platform> platform_corners(const Platform& p) {
  if (!p.bracketed()) throw std::logic_error("platform_corners: a non-point parameter has no bracket");
  std::vector<Platform> corners;
  const std::size_t n = p.not_point.size();
  for (std::size_t mask = 0; mask < (std::size_t{1} << n); ++mask) {
    Platform c = p;
    c.not_point.clear();
    for (std::size_t i = 0; i < n; ++i) {
      const Platform::NotPoint& np = p.not_point[i];
      const double x = (mask >> i) & 1 ? np.hi : np.lo;
      switch (np.param) {
        case Platform::Param::kDrainRate: c.drain_rate_bps = x; break;
        case Platform::Param::kIssueTime: c.tiss0_s = x; break;
        case Platform::Param::kCapacity: c.capacity_bytes = x; break;
      }
    }
    corners.push_back(std::move(c));
  }
  return corners;
}

std::string calibration_target(const std::string& path) {
  return calibration_target_of(report::parse_json_text(report::read_text_file(path), path));
}

std::string calibration_target_of(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("config") || !doc["config"].is_object()) return "";
  const nlohmann::json& config = doc["config"];
  return config.contains("target") && config["target"].is_string() ? config["target"].get<std::string>() : "";
}

}  // namespace xs::cli
