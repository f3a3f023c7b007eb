// xstage common layer: range grammar expansion (see range.hpp).
#include "xs/common/range.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "xs/common/error.hpp"
#include "xs/common/units.hpp"

namespace xs {
namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == sep) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

constexpr const char* kGrammar = "expected VALUE, A:B:xF (geometric), A:B:+D (arithmetic), or a comma list";

void expand_item(std::string_view item, const std::string& field, const ValueParser& parse,
                 std::vector<double>& out) {
  const auto parts = split(item, ':');
  if (parts.size() == 1) {
    out.push_back(parse(parts[0], field));
    return;
  }
  if (parts.size() != 3) throw input_error(field, fmt::format("cannot read range '{}'; {}", item, kGrammar));
  const double start = parse(parts[0], field);
  const double stop = parse(parts[1], field);
  if (stop < start)
    throw input_error(field, fmt::format("range '{}' is inverted (start > end); write it low:high:step", item));
  std::string_view step = parts[2];
  const double slack = 1e-9 * std::max(std::fabs(stop), 1e-30);
  if (!step.empty() && step.front() == 'x') {
    const double factor = parse_number(step.substr(1), field);
    if (!(factor > 1.0)) throw input_error(field, fmt::format("geometric step '{}' must be > 1", step));
    if (start <= 0) throw input_error(field, fmt::format("geometric range '{}' must start above 0", item));
    for (double v = start; v <= stop + slack; v *= factor) {
      out.push_back(v);
      if (out.size() > kMaxRangePoints) break;
    }
  } else {
    if (!step.empty() && step.front() == '+') step.remove_prefix(1);
    const double delta = parse(step, field);
    if (!(delta > 0)) throw input_error(field, fmt::format("arithmetic step '{}' must be > 0", parts[2]));
    const double count = std::floor((stop - start) / delta + 1e-9);
    if (count + 1 > static_cast<double>(kMaxRangePoints))
      throw input_error(field, fmt::format("range '{}' expands to more than {} points", item, kMaxRangePoints));
    for (long long i = 0; i <= static_cast<long long>(count); ++i) out.push_back(start + delta * i);
  }
  if (out.size() > kMaxRangePoints)
    throw input_error(field, fmt::format("range '{}' expands to more than {} points", item, kMaxRangePoints));
}

}  // namespace

std::vector<double> expand_range(std::string_view text, const std::string& field, const ValueParser& parse) {
  if (text.empty()) throw input_error(field, fmt::format("empty range; {}", kGrammar));
  std::vector<double> out;
  for (std::string_view item : split(text, ',')) {
    if (item.empty()) throw input_error(field, fmt::format("empty item in '{}'; {}", text, kGrammar));
    expand_item(item, field, parse, out);
  }
  return out;
}

std::vector<std::uint64_t> parse_bytes_range(std::string_view text, const std::string& field) {
  const auto values = expand_range(text, field, [](std::string_view t, const std::string& f) {
    return static_cast<double>(parse_bytes(t, f));
  });
  std::vector<std::uint64_t> out;
  out.reserve(values.size());
  for (double v : values) out.push_back(static_cast<std::uint64_t>(std::llround(v)));
  return out;
}

std::vector<double> parse_seconds_range(std::string_view text, const std::string& field) {
  return expand_range(text, field, [](std::string_view t, const std::string& f) { return parse_seconds(t, f); });
}

std::vector<long long> parse_integer_range(std::string_view text, const std::string& field) {
  const auto values = expand_range(text, field, [](std::string_view t, const std::string& f) {
    return static_cast<double>(parse_integer(t, f));
  });
  std::vector<long long> out;
  out.reserve(values.size());
  for (double v : values) out.push_back(std::llround(v));
  return out;
}

std::vector<std::string> parse_name_list(std::string_view text, const std::string& field) {
  std::vector<std::string> names;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    if (end == start) throw input_error(field, "empty name in '" + std::string(text) + "'; expected a comma list");
    const std::string name(text.substr(start, end - start));
    for (const std::string& seen : names)
      if (seen == name)
        throw input_error(field, "'" + name + "' is given twice in '" + std::string(text) +
                                     "'; expected each name once (e.g. local,host)");
    names.push_back(name);
    start = end + 1;
  }
  return names;
}

void require_distinct(const std::vector<long long>& values, std::string_view text, const std::string& field) {
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (values[i] == values[j])
        throw input_error(field, "'" + std::string(text) + "' gives " + std::to_string(values[i]) +
                                     " twice; expected each value once (e.g. 8192,16384 or 8192:65536:x2)");
}

}  // namespace xs
