// xstage gate layer: the unit of a gate metric, read from its key's suffix (_Bps, _s, _bytes, bytes,
// _hz, rel_err), and human-readable values and differences in it: 52.6 GB/s, 190 ns, 2.05 MiB, 2.08%.
#pragma once
#include <string>

namespace xs::gate {

enum class Unit {
  kNone,            // counts and other plain numbers
  kSeconds,         // _s, or the key "s" (model.tiss0[*].s)
  kBytesPerSecond,  // _Bps
  kBytes,           // _bytes, or the key "bytes" (model.Q[*].bytes)
  kHertz,           // _hz
  kRelErr,          // rel_err: a fraction, shown in percent
};

// The unit of a metric path such as "points[*].issue_time_s.median": the last key that is not a
// statistic (median, mean, p10, p90, min, max) or an index decides; "R_ci95[0]" takes R's (none).
Unit unit_of_metric(const std::string& metric_name);
// The SI unit symbol written beside raw numbers in CSV/Markdown: "s", "B/s", "B", "Hz", "1".
const char* unit_symbol(Unit unit);

// A value with 3 significant digits and a scaled unit: 5.26e10 B/s -> "52.6 GB/s" (decimal prefixes for
// rates and frequencies, as bandwidths are quoted), 1.9e-7 s -> "190 ns", 2150000 bytes -> "2.05 MiB"
// (binary prefixes for sizes), 0.0208 rel_err -> "2.08%". Non-finite -> "nan"/"inf".
std::string format_value(double value, Unit unit);
// A signed difference in the same unit: "+1.23 GB/s", "-30.0 ns", "+0.43 pp" (percentage points).
std::string format_delta(double delta, Unit unit);

// Compact axis values for labels, no space: 16384 -> "16KiB", 5e-6 -> "5us", 0 -> "0".
std::string compact_bytes(double bytes);
std::string compact_seconds(double seconds);

}  // namespace xs::gate
