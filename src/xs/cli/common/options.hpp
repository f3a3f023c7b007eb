// xstage cli layer: unit-aware CLI11 options shared by the executables. Each helper adds one flag whose
// text is parsed with common/units (sizes B, KB, KiB, MB, MiB, GB, GiB; times ns, us, ms, s; rates GB/s,
// GiB/s, ...) into an SI value. A bad value throws xs::input_error naming the flag (exit 2 via run_main).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json_fwd.hpp>

namespace xs::cli {

enum class Sign { kNonNegative, kPositive };  // which values are valid: >= 0 or > 0

// --flag SIZE -> bytes (integer-valued, from parse_bytes).
CLI::Option* add_bytes_option(CLI::App& app, const std::string& flag, std::optional<double>& bytes,
                              const std::string& help, Sign sign = Sign::kPositive);
// --flag TIME -> seconds.
CLI::Option* add_seconds_option(CLI::App& app, const std::string& flag, std::optional<double>& seconds,
                                const std::string& help, Sign sign = Sign::kNonNegative);
// --flag TIME -> seconds within [min_s, max_s]; outside it input_error naming the flag and `text` ("[1ns, 1s]").
struct TimeRange {
  double min_s = 0, max_s = 0;
  const char* text = "";     // the range as the user writes it, "[1ns, 1s]"
  const char* what = "";     // "a burst's issue time T_iss^0"
  const char* example = "";  // "0.76us"
};
CLI::Option* add_seconds_in_range(CLI::App& app, const std::string& flag, std::optional<double>& seconds,
                                  const std::string& help, const TimeRange& range);
// --flag RATE -> bytes/s (always > 0).
CLI::Option* add_rate_option(CLI::App& app, const std::string& flag, std::optional<double>& bytes_per_s,
                             const std::string& help);
// --flag NUMBER -> a plain real number.
CLI::Option* add_number_option(CLI::App& app, const std::string& flag, std::optional<double>& value,
                               const std::string& help, Sign sign = Sign::kPositive);
// --flag INT -> an integer in [min_value, max_value] (counts, tile dimensions; the cap keeps int casts safe).
CLI::Option* add_count_option(CLI::App& app, const std::string& flag, std::optional<long long>& count,
                              const std::string& help, long long min_value = 1,
                              long long max_value = 1'000'000'000);

// The value of a flag that the command needs here; otherwise input_error "<flag>: required; <why>".
[[noreturn]] void throw_missing(const std::string& flag, const std::string& why);
template <class T>
T require(const std::optional<T>& value, const std::string& flag, const std::string& why) {
  if (!value) throw_missing(flag, why);
  return *value;
}

// Help-text pieces, so every tool spells the unit grammar of common/units.hpp the same way.
inline constexpr const char* kTimeUnits = "ns, us, ms, s";
inline constexpr const char* kSizeUnits = "B, KB, KiB, MB, MiB, GB, GiB";
inline constexpr const char* kRequired = "; required";
inline constexpr const char* kUnlessModel = "; required unless --model";
// "<what> (<form>); <feeds><need>", e.g. "B, bytes per producer (B, KB, ...; > 0); V = K B; required".
std::string help_text(const std::string& what, const std::string& form, const std::string& feeds,
                      const char* need = "");

// M_X = (T_iss^0, R, Q) from flags, or looked up in a calibration file at (K, V); flags given as well
// override the file's values.
struct PlatformFlags {
  std::string model_path;
  std::optional<double> drain_rate_bps, tiss0_s, capacity_bytes;
};
struct Platform {
  double drain_rate_bps = 0;             // R
  double tiss0_s = 0;                    // T_iss^0(K, V)
  std::optional<double> capacity_bytes;  // Q(K), absent when neither --Q nor the model has it
  bool tiss0_extrapolated = false, capacity_extrapolated = false, capacity_is_lower_bound = false;
  // Why Q(K) is absent although a model was given (its Q rows are "not_identified"); empty otherwise.
  std::string capacity_unavailable;
  // Parameters the calibration does not give as a point value (model::Lookup::usable_as_point false: an
  // unconstrained fit, a bound, an extrapolation, a flagged R): a prediction is then evaluated at the ends of
  // their brackets (platform_corners) or, where one has no bracket, not decided. The point fields above hold
  // the lookup's value, which no prediction reads as a point while this list is non-empty.
  enum class Param { kDrainRate, kIssueTime, kCapacity };  // R, T_iss^0, Q
  struct NotPoint {
    Param param = Param::kDrainRate;
    std::string reason;  // the lookup's not_point_reason
    bool has_bracket = false;
    double lo = 0, hi = 0;  // the bracket (hi may be +inf)
    const char* name() const;  // "R", "T_iss^0" or "Q"
  };
  std::vector<NotPoint> not_point;
  bool point() const { return not_point.empty(); }
  bool bracketed() const;  // every non-point parameter has a bracket
  std::string not_point_text() const;  // "T_iss^0: <reason> [bracket ...]; Q: ..."
};
// Every combination of the non-point parameters at their bracket ends (2^n platforms, n <= 3), each a point
// platform (not_point empty); requires bracketed().
std::vector<Platform> platform_corners(const Platform& p);
// Adds --model, --R, --tiss0 and (with_capacity) --Q.
void add_platform_flags(CLI::App& cmd, PlatformFlags& flags, bool with_capacity, bool capacity_required);
// Without --model, --R and --tiss0 (and --Q if need_capacity) are required. With it, T_iss^0 needs K
// (input_error naming --K otherwise) and Q is looked up when K is given. Bad files: input_error (exit 2).
Platform resolve_platform(const PlatformFlags& flags, std::optional<long long> num_producers,
                          double volume_bytes, bool need_capacity);
// config.target of a calibration file ("host", "peer:1", ...); empty when the file does not say.
std::string calibration_target(const std::string& model_path);
// The same from the calibration file's parsed JSON (read once by the caller).
std::string calibration_target_of(const nlohmann::json& calibration_doc);

}  // namespace xs::cli
