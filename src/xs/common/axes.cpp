// xstage common layer: typed axes from the range grammar (see axes.hpp).
#include "xs/common/axes.hpp"

#include "xs/common/range.hpp"

namespace xs {

IntegerAxis integer_axis(std::string_view text, const std::string& field) {
  return {field, parse_integer_range(text, field)};
}

SizeAxis size_axis(std::string_view text, const std::string& field) { return {field, parse_bytes_range(text, field)}; }

TimeAxis time_axis(std::string_view text, const std::string& field) {
  return {field, parse_seconds_range(text, field)};
}

StringAxis string_axis(std::string_view text, const std::string& field) {
  return {field, parse_name_list(text, field)};
}

}  // namespace xs
