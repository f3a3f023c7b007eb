// xstage common layer: parsing and printing quantities with units. Everything inside xstage is SI
// (bytes, seconds, bytes/s); units exist only at the command line and in human-readable tables.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace xs {

// Sizes: "32KiB", "4.25MiB", "1000", "64 B". Suffixes B, KB (1e3), KiB (1024), MB, MiB, GB, GiB; a bare
// number is bytes. Throws input_error(field, ...) naming the accepted form; a value that is not a whole
// number of bytes ("16.5B", "0.3KiB") is refused, never rounded.
std::uint64_t parse_bytes(std::string_view text, const std::string& field = "size");

// Times: "0.76us", "2 us", "6e-6s", "1.5ms", "10ns", "0". Suffixes ns, us, ms, s; a bare number needs to be 0.
double parse_seconds(std::string_view text, const std::string& field = "time");

// Rates: "717GB/s", "667.7GiB/s", "5e11B/s", also MB/s, KB/s, MiB/s, KiB/s, TB/s. A bare number ("717") is
// refused: the unit must be written.
double parse_rate_bps(std::string_view text, const std::string& field = "rate");

// Plain positive or non-negative numbers with a clear error.
double parse_number(std::string_view text, const std::string& field);
long long parse_integer(std::string_view text, const std::string& field);

// Human-readable forms for tables: "4.25 MiB", "6.00 us", "717.0 GB/s".
std::string format_bytes(double bytes);
std::string format_seconds(double seconds);
std::string format_rate(double bytes_per_s);

}  // namespace xs
