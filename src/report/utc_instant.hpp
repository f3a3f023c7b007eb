// xstage report layer: instants written as ISO 8601 (the files' `date_utc`, a rule's `written_utc`), parsed
// strictly so that "measured before" is a comparison of instants, not of strings: a missing or malformed date
// is unknown, never "before", and an offset (+01:00) is honoured. Plain C++.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace xs::report {

// Seconds since 1970-01-01T00:00:00Z of `text` in the form YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)
// (a calendar date that exists, hours 00-23, minutes 00-59, seconds 00-60; the fraction is dropped); nullopt for
// anything else, the empty string included.
std::optional<std::int64_t> parse_utc_instant(const std::string& text);

// -1: a before b, 0: the same second, 1: a after b; nullopt where either is not a valid instant.
std::optional<int> compare_instants(const std::string& a, const std::string& b);

}  // namespace xs::report
