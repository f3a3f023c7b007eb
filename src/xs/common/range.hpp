// xstage common layer: the one range grammar used by every sweep flag and config file.
//   list   := item (',' item)*
//   item   := value | value ':' value ':' step
//   step   := 'x' number        (geometric: 1KiB:512KiB:x2)
//           | '+' value | value (arithmetic: 0:20us:+1us)
// Ends are inclusive (within a relative 1e-9 slack). Inverted ranges, zero/negative steps, x<=1 and
// expansions over kMaxRangePoints are input errors naming the flag.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace xs {

inline constexpr std::size_t kMaxRangePoints = 100000;

using ValueParser = std::function<double(std::string_view text, const std::string& field)>;

// Generic expansion with a value parser (parse_seconds, parse_bytes as double, ...).
std::vector<double> expand_range(std::string_view text, const std::string& field, const ValueParser& parse);

std::vector<std::uint64_t> parse_bytes_range(std::string_view text, const std::string& field);
std::vector<double> parse_seconds_range(std::string_view text, const std::string& field);
std::vector<long long> parse_integer_range(std::string_view text, const std::string& field);

// A comma list of names (targets, shapes, precisions): "host,local" -> {"host", "local"}. An empty item
// (",", "a,,b", "") is an input error naming the field.
std::vector<std::string> parse_name_list(std::string_view text, const std::string& field);

// An application sweep's list flag (--M, --heads, --T, --ksm, --D) with a value twice would measure a point twice
// and write a file every reader refuses (duplicate points): refused by name (exit 2). parse_name_list checks its own.
void require_distinct(const std::vector<long long>& values, std::string_view text, const std::string& field);

}  // namespace xs
