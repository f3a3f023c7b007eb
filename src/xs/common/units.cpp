// xstage common layer: unit parsing/printing (see units.hpp).
#include "xs/common/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>

#include "xs/common/error.hpp"

namespace xs {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "4.25MiB" into 4.25 and "MiB". Returns false if no number leads the text.
bool split_number(std::string_view text, double& value, std::string_view& suffix) {
  text = trim(text);
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin) return false;
  if (!std::isfinite(value)) return false;
  suffix = trim(std::string_view(ptr, static_cast<size_t>(end - ptr)));
  return true;
}

template <size_t N>
double lookup(std::string_view suffix, const std::array<std::pair<std::string_view, double>, N>& table,
              bool& found) {
  for (const auto& [name, scale] : table) {
    if (suffix == name) {
      found = true;
      return scale;
    }
  }
  found = false;
  return 0.0;
}

constexpr std::array<std::pair<std::string_view, double>, 8> kByteUnits{{
    {"", 1.0}, {"B", 1.0}, {"KB", 1e3}, {"KiB", 1024.0}, {"MB", 1e6}, {"MiB", 1048576.0},
    {"GB", 1e9}, {"GiB", 1073741824.0}}};
constexpr std::array<std::pair<std::string_view, double>, 4> kTimeUnits{{
    {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}}};
constexpr std::array<std::pair<std::string_view, double>, 8> kRateUnits{{
    {"B/s", 1.0}, {"KB/s", 1e3}, {"KiB/s", 1024.0}, {"MB/s", 1e6}, {"MiB/s", 1048576.0},
    {"GB/s", 1e9}, {"GiB/s", 1073741824.0}, {"TB/s", 1e12}}};

// nan and inf are never a value here: said as such, with the accepted form (`form`), rather than as unreadable.
void refuse_non_finite(std::string_view text, const std::string& field, const char* form) {
  std::string lower(trim(text));
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::size_t sign = lower.empty() || (lower[0] != '+' && lower[0] != '-') ? 0 : 1;
  if (lower.compare(sign, 3, "nan") == 0 || lower.compare(sign, 3, "inf") == 0)
    throw input_error(field, fmt::format("'{}' is not a finite number; expected {}", text, form));
}

}  // namespace

std::uint64_t parse_bytes(std::string_view text, const std::string& field) {
  double value = 0;
  std::string_view suffix;
  bool found = false;
  if (split_number(text, value, suffix)) {
    const double scale = lookup(suffix, kByteUnits, found);
    if (found) {
      if (value < 0) throw input_error(field, fmt::format("size '{}' is negative; sizes are >= 0", text));
      const double exact = value * scale;
      const double bytes = std::round(exact);
      if (bytes > 9.0e18) throw input_error(field, fmt::format("size '{}' is too large", text));
      if (std::fabs(exact - bytes) > 1e-9 * std::max(1.0, bytes))  // 16.5B, 0.3KiB: never rounded silently
        throw input_error(field, fmt::format("size '{}' is {} bytes, not a whole number of bytes (e.g. 16B, 4.25MiB)",
                                             text, exact));
      return static_cast<std::uint64_t>(bytes);
    }
  }
  constexpr const char* kForm = "a finite number with B, KB, KiB, MB, MiB, GB or GiB (e.g. 32KiB)";
  refuse_non_finite(text, field, kForm);
  throw input_error(field, fmt::format("cannot read size '{}'; expected {}", text, kForm));
}

double parse_seconds(std::string_view text, const std::string& field) {
  double value = 0;
  std::string_view suffix;
  bool found = false;
  if (split_number(text, value, suffix)) {
    if (suffix.empty() && value == 0.0) return 0.0;
    const double scale = lookup(suffix, kTimeUnits, found);
    if (found) {
      if (value < 0) throw input_error(field, fmt::format("time '{}' is negative; times are >= 0", text));
      return value * scale;
    }
  }
  constexpr const char* kForm = "a finite number with ns, us, ms or s (e.g. 0.76us)";
  refuse_non_finite(text, field, kForm);
  throw input_error(field, fmt::format("cannot read time '{}'; expected {}", text, kForm));
}

double parse_rate_bps(std::string_view text, const std::string& field) {
  double value = 0;
  std::string_view suffix;
  bool found = false;
  if (split_number(text, value, suffix)) {
    // A bare number has no safe reading (717 would be 717 B/s, 0.0 GB/s in every table): name the unit.
    if (suffix.empty())
      throw input_error(field, fmt::format("rate '{}' has no unit; write it with one, e.g. {}GB/s (or {}B/s for "
                                           "bytes per second)", text, trim(text), trim(text)));
    const double scale = lookup(suffix, kRateUnits, found);
    if (found) {
      if (value <= 0) throw input_error(field, fmt::format("rate '{}' must be positive", text));
      return value * scale;
    }
  }
  constexpr const char* kForm = "a finite number with B/s, KB/s, MB/s, GB/s, GiB/s or TB/s (e.g. 717GB/s)";
  refuse_non_finite(text, field, kForm);
  throw input_error(field, fmt::format("cannot read rate '{}'; expected {}", text, kForm));
}

double parse_number(std::string_view text, const std::string& field) {
  double value = 0;
  std::string_view suffix;
  if (!split_number(text, value, suffix) || !suffix.empty()) {
    constexpr const char* kForm = "a finite decimal number without a unit (e.g. 0.5 or 4)";
    refuse_non_finite(text, field, kForm);
    throw input_error(field, fmt::format("cannot read number '{}'; expected {}", text, kForm));
  }
  return value;
}

long long parse_integer(std::string_view text, const std::string& field) {
  text = trim(text);
  long long value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty())
    throw input_error(field, fmt::format("cannot read integer '{}'; expected a whole number (e.g. 8)", text));
  return value;
}

std::string format_bytes(double bytes) {
  const double a = std::fabs(bytes);
  if (a >= 1073741824.0) return fmt::format("{:.2f} GiB", bytes / 1073741824.0);
  if (a >= 1048576.0) return fmt::format("{:.2f} MiB", bytes / 1048576.0);
  if (a >= 1024.0) return fmt::format("{:.2f} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

std::string format_seconds(double seconds) {
  const double a = std::fabs(seconds);
  if (a == 0.0) return "0 s";
  if (a < 1e-6) return fmt::format("{:.1f} ns", seconds * 1e9);
  if (a < 1e-3) return fmt::format("{:.3f} us", seconds * 1e6);
  if (a < 1.0) return fmt::format("{:.3f} ms", seconds * 1e3);
  if (a < 1e6) return fmt::format("{:.3f} s", seconds);
  return fmt::format("{:.3e} s", seconds);  // not 300 digits for 1e300 s
}

// GB/s, the unit of every table; a rate that would print as 0.0 GB/s in MB/s, or B/s below 0.1 MB/s.
std::string format_rate(double bytes_per_s) {
  const double a = std::fabs(bytes_per_s);
  if (a == 0.0 || a >= 0.05e9) return fmt::format("{:.1f} GB/s", bytes_per_s / 1e9);
  if (a >= 0.05e6) return fmt::format("{:.1f} MB/s", bytes_per_s / 1e6);
  return fmt::format("{:.3g} B/s", bytes_per_s);
}

}  // namespace xs
