// xstage cli layer: the one place exceptions become exit codes (docs/exit-codes.md):
// 0 ok, 1 regression (gate), 2 bad usage or input, 3 CUDA/NCCL failure, 77 no suitable GPU.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace xs::cli {

// Runs `body` (which builds and parses a CLI11 app, then does the work) and maps:
//   CLI::CallForHelp/Version -> 0 after printing; other CLI::ParseError -> 2 with CLI11's message
//   ("<tool>: error: ..." like every other error, then a pointer to --help);
//   xs::Error -> its code, message on stderr prefixed by the tool name; std::exception -> 3.
int run_main(const std::string& tool_name, const std::function<int()>& body);

// --version: "<tool> <version> (git <sha>[, dirty])" from cmake/xstage_version.cmake.
void add_version_flag(CLI::App& app, const std::string& tool_name);

// Parses with CLI11, converting its exceptions to the codes above (call inside run_main's body). Any option
// given an empty value (--K "", --M "", RESULT.json "") is then input_error naming it and its accepted form
// (exit 2): an empty list or value is never read as the default.
void parse_or_throw(CLI::App& app, int argc, char** argv);

// For every path option: an empty value (--out "") is refused (exit 2), never read as "use the default".
inline const CLI::Validator kNonEmptyPath(
    [](std::string& value) { return value.empty() ? std::string("an empty path; give a file path") : std::string(); },
    "", "non-empty path");

// CLI11 checks in xstage's wording, one line naming the flag and the accepted values, like every other refusal
// (CLI11's own said "Value 100 not in range 128 to 256", "0.000000 to 1.000000", "foo not in {gpu,sim}", with a
// second line). `note` (e.g. the option's help, "Tile width b_n: 128 or 256") is added in parentheses.
CLI::Validator integer_in(long long min_value, long long max_value, const std::string& note = "");  // [a, b]
CLI::Validator number_in(double min_value, double max_value);                                       // [a, b]
CLI::Validator one_of(const std::vector<std::string>& values);  // "one of: gpu, sim"

// `text` with every byte that is not part of valid UTF-8 written as \xHH, for messages about such text.
std::string escape_invalid_utf8(const std::string& text);
bool is_valid_utf8(const std::string& text);

}  // namespace xs::cli
