// xstage report layer: instants written as ISO 8601 (the files' `date_utc`, a rule's `written_utc`), parsed
// strictly so that "measured before" is a comparison of instants, not of strings: a missing or malformed date
// is unknown, never "before", and an offset (+01:00) is honoured. Plain C++.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace xs::report {

// Seconds since 1970-01-01T00:00:00Z of `text` in the form YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)
// (RFC 3339: 'T' and 'Z' in either case; a calendar date that exists, hours 00-23, minutes 00-59, seconds
// 00-59, or 60 at 23:59 only (a leap second); the fraction kept); nullopt for anything else, "" included.
std::optional<double> parse_utc_instant(const std::string& text);

// The same for a date a result file records: also nullopt before 2000-01-01 (a placeholder such as 1970 or
// 0001) and more than a day after `now_s` (a clock error): such a date is unknown, never "before" anything.
std::optional<double> parse_record_instant(const std::string& text, double now_s);

// -1: a before b, 0: the same instant, 1: a after b; nullopt where either is not a valid instant.
std::optional<int> compare_instants(const std::string& a, const std::string& b);
// The same with parse_record_instant on both sides.
std::optional<int> compare_record_instants(const std::string& a, const std::string& b, double now_s);

}  // namespace xs::report
