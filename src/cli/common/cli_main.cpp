// xstage cli layer: exit-code mapping shared by the four executables (see cli_main.hpp).
#include "cli/common/cli_main.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>
#include <vector>

#include "common/error.hpp"
#include "common/program_name.hpp"
#include "xstage/build_info.hpp"

namespace xs::cli {
namespace {

struct ParseExit {
  int code;
};

}  // namespace

void add_version_flag(CLI::App& app, const std::string& tool_name) {
  app.set_version_flag("--version", fmt::format("{} {} (git {}{})", tool_name, build_info::kVersion,
                                                build_info::kGitSha, build_info::kGitDirty ? ", dirty" : ""),
                       "Print the version and git sha, then exit");
}

namespace {

// Every option of `app`, its subcommands and option groups that was given an empty value (--K ""): CLI11 stores
// it, and the tools read an empty string as "not given", i.e. the default. Refused instead (exit 2).
void refuse_empty_values(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_expected_max() == 0 || opt->count() == 0) continue;  // a flag, or not given
    for (const std::string& value : opt->results()) {
      if (!value.empty()) continue;
      const std::string name = opt->get_name();
      std::string form = opt->get_description();
      if (form.empty()) form = opt->get_type_name();
      // A list option says so in its help: a range grammar, a comma list, or an example with ',' or ':'.
      const std::size_t eg = form.find("e.g. ");
      const bool list = form.find("range grammar") != std::string::npos || form.find("comma list") != std::string::npos ||
                        form.find("and/or") != std::string::npos ||
                        (eg != std::string::npos && form.find_first_of(",:", eg) != std::string::npos);
      throw input_error(name, fmt::format("empty {}; an empty {} is never read as the default: give {} or leave {} "
                                          "out{}", list ? "list" : "value", list ? "list" : "value",
                                          list ? "values" : "one", name,
                                          form.empty() ? "" : "; accepted form: " + form));
    }
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) refuse_empty_values(*sub);
}

}  // namespace

void parse_or_throw(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    refuse_empty_values(app);
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
    // CLI11's message names the option; give it the same "<tool>: error:" prefix as every other error.
    // An App built without a name is named after argv[0]; print the tool's file name only.
    const std::string tool = std::filesystem::path(app.get_name()).filename().string();
    std::string message = e.what();
    // CLI11 checks requirements before leftovers: `xstage-predict --bogus` would say only "A subcommand is
    // required". An argument nothing took is the first thing to name.
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      const std::vector<std::string> unknown = app.remaining(true);
      if (!unknown.empty())
        message = fmt::format("unknown argument{} {} ({})", unknown.size() == 1 ? "" : "s",
                              fmt::format("{}", fmt::join(unknown, " ")), message);
    }
    // Every line on stderr starts with the tool's name, CLI11's pointer to --help included.
    std::fprintf(stderr, "%s: error: %s\n%s: run with --help for more information\n", tool.c_str(), message.c_str(),
                 tool.c_str());
    throw ParseExit{static_cast<int>(ExitCode::kBadInput)};
  }
}

int run_main(const std::string& tool_name, const std::function<int()>& body) {
  set_program_name(tool_name.c_str());  // the prefix of what library code prints on stderr
  try {
    return body();
  } catch (const ParseExit& e) {
    return e.code;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool_name.c_str(), e.what());
    return static_cast<int>(e.code());
  } catch (const std::filesystem::filesystem_error& e) {
    // A path that cannot be created or read (e.g. an output folder under a file) is bad input.
    std::fprintf(stderr, "%s: error: %s\n", tool_name.c_str(), e.what());
    return static_cast<int>(ExitCode::kBadInput);
  } catch (const std::bad_alloc&) {
    // Sweeps and files are capped before allocation; reaching this is a limit we missed, not a GPU fault.
    std::fprintf(stderr, "%s: error: out of memory (input too large)\n", tool_name.c_str());
    return static_cast<int>(ExitCode::kBadInput);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool_name.c_str(), e.what());
    return static_cast<int>(ExitCode::kDeviceFailure);
  }
}

}  // namespace xs::cli
