// xstage cli layer: exit-code mapping shared by the four executables (see cli_main.hpp).
#include "cli/common/cli_main.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "common/error.hpp"

namespace xs::cli {
namespace {

struct ParseExit {
  int code;
};

}  // namespace

void parse_or_throw(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    app.exit(e);
    throw ParseExit{0};
  } catch (const CLI::CallForAllHelp& e) {
    app.exit(e);
    throw ParseExit{0};
  } catch (const CLI::CallForVersion& e) {
    app.exit(e);
    throw ParseExit{0};
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints CLI11's message naming the option
    throw ParseExit{static_cast<int>(ExitCode::kBadInput)};
  }
}

int run_main(const std::string& tool_name, const std::function<int()>& body) {
  try {
    return body();
  } catch (const ParseExit& e) {
    return e.code;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool_name.c_str(), e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool_name.c_str(), e.what());
    return static_cast<int>(ExitCode::kDeviceFailure);
  }
}

}  // namespace xs::cli
