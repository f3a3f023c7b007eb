// xstage cli layer: bench::OptionSink over CLI11, so a registered suite's flags appear in xstage-bench --help
// under the suite's own group. A flag two suites declare with the same kind is added once (in the first
// suite's group, its help naming both suites) and sets both suites' values; a kind clash is a build bug.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "xs/bench/suite_registry.hpp"

namespace xs::cli {

class SuiteOptionSink final : public bench::OptionSink {
 public:
  explicit SuiteOptionSink(CLI::App& app) : app_(app) {}
  // Adds every registered suite's options, each suite in an option group titled by its options_title.
  void add_suites(const bench::SuiteRegistry& registry);

  void add_text(const std::string& flag, std::string& value, const std::string& help) override;
  void add_integer(const std::string& flag, int& value, const std::string& help, int min_value,
                   int max_value) override;
  void add_number(const std::string& flag, double& value, const std::string& help) override;
  void add_flag(const std::string& flag, bool& value, const std::string& help) override;

  struct Binding {  // one CLI11 option and the values of every suite that declared it
    virtual ~Binding() = default;
    CLI::Option* option = nullptr;
    std::string help, suites;
  };

 private:
  // Makes the CLI11 option in a group, given its flag and the setter of every bound value.
  template <class T>
  using MakeOption = std::function<CLI::Option*(CLI::Option_group&, const std::string&, std::function<void(const T&)>)>;
  template <class T>
  void add(const std::string& flag, T& value, const std::string& help, const std::string& default_text,
           const MakeOption<T>& make);

  CLI::App& app_;
  CLI::Option_group* group_ = nullptr;
  std::string suite_id_;
  std::map<std::string, std::unique_ptr<Binding>> bindings_;
};

}  // namespace xs::cli
