// xstage cli layer: the one place exceptions become exit codes (docs/exit-codes.md):
// 0 ok, 1 regression (gate), 2 bad usage or input, 3 CUDA/NCCL failure, 77 no suitable GPU.
#pragma once
#include <functional>
#include <string>

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

}  // namespace xs::cli
