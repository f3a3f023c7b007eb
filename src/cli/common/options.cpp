// xstage cli layer: unit-aware CLI11 options (see options.hpp).
#include "cli/common/options.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/units.hpp"

namespace xs::cli {
namespace {

// Parses at CLI11's callback time, so the error names the flag and surfaces from app.parse().
CLI::Option* add_parsed(CLI::App& app, const std::string& flag, const std::string& help,
                        const std::string& type_name, std::function<void(const std::string&)> parse) {
  return app.add_option_function<std::string>(flag, std::move(parse), help)->type_name(type_name);
}

void check_sign(double value, Sign sign, const std::string& flag, const std::string& text,
                const std::string& example) {
  if (sign == Sign::kPositive && value <= 0)
    throw input_error(flag, fmt::format("'{}' must be greater than zero (e.g. {})", text, example));
  if (value < 0) throw input_error(flag, fmt::format("'{}' must not be negative (e.g. {})", text, example));
}

}  // namespace

void throw_missing(const std::string& flag, const std::string& why) {
  throw input_error(flag, "required; " + why);
}

CLI::Option* add_bytes_option(CLI::App& app, const std::string& flag, std::optional<double>& bytes,
                              const std::string& help, Sign sign) {
  return add_parsed(app, flag, help, "SIZE", [&bytes, flag, sign](const std::string& text) {
    const double value = static_cast<double>(parse_bytes(text, flag));
    check_sign(value, sign, flag, text, "32KiB");
    bytes = value;
  });
}

CLI::Option* add_seconds_option(CLI::App& app, const std::string& flag, std::optional<double>& seconds,
                                const std::string& help, Sign sign) {
  return add_parsed(app, flag, help, "TIME", [&seconds, flag, sign](const std::string& text) {
    const double value = parse_seconds(text, flag);
    check_sign(value, sign, flag, text, "0.76us");
    seconds = value;
  });
}

CLI::Option* add_rate_option(CLI::App& app, const std::string& flag, std::optional<double>& bytes_per_s,
                             const std::string& help) {
  return add_parsed(app, flag, help, "RATE", [&bytes_per_s, flag](const std::string& text) {
    bytes_per_s = parse_rate_bps(text, flag);  // rejects <= 0 itself
  });
}

CLI::Option* add_number_option(CLI::App& app, const std::string& flag, std::optional<double>& value,
                               const std::string& help, Sign sign) {
  return add_parsed(app, flag, help, "NUMBER", [&value, flag, sign](const std::string& text) {
    const double v = parse_number(text, flag);
    check_sign(v, sign, flag, text, "4");
    value = v;
  });
}

CLI::Option* add_count_option(CLI::App& app, const std::string& flag, std::optional<long long>& count,
                              const std::string& help, long long min_value) {
  return add_parsed(app, flag, help, "INT", [&count, flag, min_value](const std::string& text) {
    const long long v = parse_integer(text, flag);
    if (v < min_value) throw input_error(flag, fmt::format("'{}' must be an integer >= {}", text, min_value));
    count = v;
  });
}

}  // namespace xs::cli
