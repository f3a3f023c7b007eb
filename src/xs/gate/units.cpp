// xstage gate layer: metric units and their formatting (see units.hpp).
#include "xs/gate/units.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string_view>

namespace xs::gate {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

struct Prefix {
  double scale;
  const char* name;
};

// Three significant digits, without exponent notation for the scaled range (1 <= |x| < 1000 or 1024).
std::string three_digits(double x) {
  const double a = std::fabs(x);
  if (a >= 100) return fmt::format("{:.0f}", x);
  if (a >= 10) return fmt::format("{:.1f}", x);
  return fmt::format("{:.2f}", x);
}

template <std::size_t N>
std::string scaled(double value, const std::array<Prefix, N>& prefixes, const char* unit, const char* space,
                   bool compact = false) {
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  if (value == 0) return fmt::format("0{}{}", space, unit);
  // prefixes run from the largest scale down; the first one that leaves |x| >= 1 wins.
  for (const Prefix& p : prefixes) {
    if (std::fabs(value) >= p.scale * 0.9995) {
      const double x = value / p.scale;
      return fmt::format("{}{}{}{}", compact ? fmt::format("{:.4g}", x) : three_digits(x), space, p.name, unit);
    }
  }
  const Prefix& last = prefixes.back();
  return fmt::format("{:.3g}{}{}{}", value / last.scale, space, last.name, unit);
}

constexpr std::array<Prefix, 4> kDecimalUp{{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
constexpr std::array<Prefix, 5> kDecimalUpWithOne{{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}}};
constexpr std::array<Prefix, 5> kTime{{{1, ""}, {1e-3, "m"}, {1e-6, "u"}, {1e-9, "n"}, {1e-12, "p"}}};
constexpr std::array<Prefix, 5> kBinary{{{1099511627776.0, "Ti"}, {1073741824.0, "Gi"}, {1048576.0, "Mi"}, {1024.0, "Ki"}, {1, ""}}};

}  // namespace

Unit unit_of_metric(const std::string& metric_name) {
  // Walk the dotted path from its end; drop [..] suffixes; skip statistic keys.
  std::string_view rest = metric_name;
  while (!rest.empty()) {
    const std::size_t dot = rest.rfind('.');
    std::string_view key = dot == std::string_view::npos ? rest : rest.substr(dot + 1);
    rest = dot == std::string_view::npos ? std::string_view{} : rest.substr(0, dot);
    if (const std::size_t bracket = key.find('['); bracket != std::string_view::npos) key = key.substr(0, bracket);
    static constexpr std::array<std::string_view, 7> kStats{"median", "mean", "p10", "p90", "min", "max", "samples"};
    bool is_stat = false;
    for (std::string_view s : kStats) is_stat |= key == s;
    if (is_stat) continue;
    if (ends_with(key, "_ci95")) key = key.substr(0, key.size() - 5);
    if (ends_with(key, "rel_err")) return Unit::kRelErr;
    if (ends_with(key, "_Bps")) return Unit::kBytesPerSecond;
    if (ends_with(key, "_hz")) return Unit::kHertz;
    if (key == "s" || ends_with(key, "_s")) return Unit::kSeconds;
    if (key == "bytes" || ends_with(key, "_bytes")) return Unit::kBytes;
    return Unit::kNone;
  }
  return Unit::kNone;
}

const char* unit_symbol(Unit unit) {
  switch (unit) {
    case Unit::kSeconds: return "s";
    case Unit::kBytesPerSecond: return "B/s";
    case Unit::kBytes: return "B";
    case Unit::kHertz: return "Hz";
    case Unit::kRelErr:
    case Unit::kNone: return "1";
  }
  return "1";
}

std::string format_value(double value, Unit unit) {
  switch (unit) {
    case Unit::kSeconds: return scaled(value, kTime, "s", " ");
    case Unit::kBytesPerSecond: return scaled(value, kDecimalUpWithOne, "B/s", " ");
    case Unit::kHertz: return scaled(value, kDecimalUpWithOne, "Hz", " ");
    case Unit::kBytes: return scaled(value, kBinary, "B", " ");
    case Unit::kRelErr: return std::isfinite(value) ? fmt::format("{:.3g}%", 100 * value) : scaled(value, kTime, "", "");
    case Unit::kNone: break;
  }
  if (std::isfinite(value) && value == std::round(value) && std::fabs(value) < 1e15) return fmt::format("{:.0f}", value);
  return fmt::format("{:.4g}", value);
}

std::string format_delta(double delta, Unit unit) {
  if (delta == 0) return "0";  // "no change" reads better than "0 s"
  const std::string sign = delta > 0 ? "+" : (delta < 0 ? "-" : "");
  if (unit == Unit::kRelErr) return std::isfinite(delta) ? fmt::format("{}{:.3g} pp", sign, 100 * std::fabs(delta)) : "nan";
  return sign + format_value(std::fabs(delta), unit);
}

std::string compact_bytes(double bytes) { return bytes == 0 ? "0" : scaled(bytes, kBinary, "B", "", true); }

std::string compact_seconds(double seconds) { return seconds == 0 ? "0" : scaled(seconds, kTime, "s", "", true); }

}  // namespace xs::gate
