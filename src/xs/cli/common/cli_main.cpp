// xstage cli layer: exit-code mapping shared by the four executables (see cli_main.hpp).
#include "xs/cli/common/cli_main.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <new>
#include <vector>

#include "xs/common/error.hpp"
#include "xs/common/program_name.hpp"
#include "xs/build_info.hpp"

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

// The length of the valid UTF-8 sequence at text[i], or 0 where the byte there does not start one (overlong forms,
// surrogates and code points over U+10FFFF are invalid, as JSON writers refuse them).
std::size_t utf8_sequence_at(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
  const unsigned c = byte(i);
  if (c < 0x80) return 1;
  const auto cont = [&](std::size_t k) { return (byte(k) & 0xC0u) == 0x80u; };
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned c1 = byte(i + 1);
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F)) return 0;
    return cont(i + 1) && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned c1 = byte(i + 1);
    if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F)) return 0;
    return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

// Every argument must be UTF-8: the result files record the command line (meta.argv) as JSON text, which is UTF-8,
// so a path with other bytes was refused only by the JSON writer, after measuring, in a message that named no flag.
void refuse_invalid_utf8(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (is_valid_utf8(arg)) continue;
    std::string flag, value = arg;
    if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
      flag = arg.substr(0, arg.find('='));
      value = arg.substr(arg.find('=') + 1);
    } else if (const std::string before = i > 1 ? argv[i - 1] : ""; before.size() > 1 && before[0] == '-') {
      flag = before;
    }
    const std::string field = !flag.empty() && is_valid_utf8(flag) ? flag : "argument " + std::to_string(i);
    throw input_error(field, fmt::format("'{}' is not valid UTF-8; xstage records its command line in the JSON it "
                                         "writes (meta.argv), and JSON text is UTF-8: give a name in UTF-8",
                                         escape_invalid_utf8(is_valid_utf8(flag) ? value : arg)));
  }
}

}  // namespace

bool is_valid_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence_at(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string escape_invalid_utf8(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence_at(text, i);
    if (n == 0) {
      out += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[i]));
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

CLI::Validator integer_in(long long min_value, long long max_value, const std::string& note) {
  const std::string accepted = fmt::format("an integer in [{}, {}]{}", min_value, max_value,
                                           note.empty() ? "" : " (" + note + ")");
  return CLI::Validator(
      [min_value, max_value, accepted](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        const bool whole = !text.empty() && end == text.c_str() + text.size() && errno == 0 &&
                           text.find_first_of(" \t") == std::string::npos;
        if (whole && v >= min_value && v <= max_value) return {};
        return fmt::format("'{}' is not accepted; expected {}", text, accepted);
      },
      fmt::format("INT in [{}, {}]", min_value, max_value), "integer_in");
}

CLI::Validator number_in(double min_value, double max_value) {
  return CLI::Validator(
      [min_value, max_value](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        const bool whole = !text.empty() && end == text.c_str() + text.size() && errno == 0 &&
                           text.find_first_of(" \t") == std::string::npos;
        if (whole && std::isfinite(v) && v >= min_value && v <= max_value) return {};
        return fmt::format("'{}' is not accepted; expected a number in [{}, {}]", text, min_value, max_value);
      },
      fmt::format("NUMBER in [{}, {}]", min_value, max_value), "number_in");
}

CLI::Validator one_of(const std::vector<std::string>& values) {
  const std::string accepted = fmt::format("{}", fmt::join(values, ", "));
  return CLI::Validator(
      [values, accepted](std::string& text) -> std::string {
        for (const std::string& v : values)
          if (text == v) return {};
        return fmt::format("'{}' is not accepted; expected one of: {}", text, accepted);
      },
      "one of: " + accepted, "one_of");
}

void parse_or_throw(CLI::App& app, int argc, char** argv) {
  refuse_invalid_utf8(argc, argv);
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
    // A value a check refused ("--gpus: '5000' is not accepted; expected an integer in [0, 4096]"): one line, as
    // every other refusal of a value.
    if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
      std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), message.c_str());
      throw ParseExit{static_cast<int>(ExitCode::kBadInput)};
    }
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
