// xstage cli layer: unit-aware CLI11 options shared by the executables. Each helper adds one flag whose
// text is parsed with common/units (sizes B, KB, KiB, MB, MiB, GB, GiB; times ns, us, ms, s; rates GB/s,
// GiB/s, ...) into an SI value. A bad value throws xs::input_error naming the flag (exit 2 via run_main).
#pragma once
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace xs::cli {

enum class Sign { kNonNegative, kPositive };  // which values are valid: >= 0 or > 0

// --flag SIZE -> bytes (integer-valued, from parse_bytes).
CLI::Option* add_bytes_option(CLI::App& app, const std::string& flag, std::optional<double>& bytes,
                              const std::string& help, Sign sign = Sign::kPositive);
// --flag TIME -> seconds.
CLI::Option* add_seconds_option(CLI::App& app, const std::string& flag, std::optional<double>& seconds,
                                const std::string& help, Sign sign = Sign::kNonNegative);
// --flag RATE -> bytes/s (always > 0).
CLI::Option* add_rate_option(CLI::App& app, const std::string& flag, std::optional<double>& bytes_per_s,
                             const std::string& help);
// --flag NUMBER -> a plain real number.
CLI::Option* add_number_option(CLI::App& app, const std::string& flag, std::optional<double>& value,
                               const std::string& help, Sign sign = Sign::kPositive);
// --flag INT -> an integer >= min_value (counts, tile dimensions).
CLI::Option* add_count_option(CLI::App& app, const std::string& flag, std::optional<long long>& count,
                              const std::string& help, long long min_value = 1);

// The value of a flag that the command needs here; otherwise input_error "<flag>: required; <why>".
[[noreturn]] void throw_missing(const std::string& flag, const std::string& why);
template <class T>
T require(const std::optional<T>& value, const std::string& flag, const std::string& why) {
  if (!value) throw_missing(flag, why);
  return *value;
}

}  // namespace xs::cli
