// xstage cli layer: registered suites' flags over CLI11 (see suite_options.hpp).
#include "xs/cli/common/suite_options.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "xs/cli/common/cli_main.hpp"

namespace xs::cli {
namespace {

template <class T>
struct TypedBinding final : SuiteOptionSink::Binding {
  std::vector<T*> values;
};

std::string default_text_of(double value) { return fmt::format("{}", value); }

}  // namespace

void SuiteOptionSink::add_suites(const bench::SuiteRegistry& registry) {
  for (const auto& suite : registry.suites()) {
    if (!suite.add_options) continue;
    suite_id_ = suite.id;
    group_ = app_.add_option_group(suite.id, suite.options_title);
    suite.add_options(*this);
  }
  group_ = nullptr;
}

template <class T>
void SuiteOptionSink::add(const std::string& flag, T& value, const std::string& help, const std::string& default_text,
                          const MakeOption<T>& make) {
  if (group_ == nullptr) throw std::logic_error("suite options: " + flag + " added outside add_suites");
  if (auto it = bindings_.find(flag); it != bindings_.end()) {
    auto* shared = dynamic_cast<TypedBinding<T>*>(it->second.get());
    if (shared == nullptr)
      throw std::logic_error(fmt::format("suite options: {} declared by {} and {} with different kinds", flag,
                                         it->second->suites, suite_id_));
    shared->values.push_back(&value);
    shared->suites += ", " + suite_id_;
    shared->option->description(fmt::format("{} (suites {})", shared->help, shared->suites));
    return;
  }
  auto binding = std::make_unique<TypedBinding<T>>();
  binding->values.push_back(&value);
  binding->help = help;
  binding->suites = suite_id_;
  TypedBinding<T>* b = binding.get();
  binding->option = make(*group_, flag, [b](const T& v) {
    for (T* target : b->values) *target = v;
  });
  if (!default_text.empty()) binding->option->default_str(default_text);
  bindings_.emplace(flag, std::move(binding));
}

void SuiteOptionSink::add_text(const std::string& flag, std::string& value, const std::string& help) {
  add<std::string>(flag, value, help, value, [&](CLI::Option_group& g, const std::string& f, auto set) {
    return g.add_option_function<std::string>(f, set, help);
  });
}

void SuiteOptionSink::add_integer(const std::string& flag, int& value, const std::string& help, int min_value,
                                  int max_value) {
  add<int>(flag, value, help, std::to_string(value), [&](CLI::Option_group& g, const std::string& f, auto set) {
    return g.add_option_function<int>(f, set, help)->check(integer_in(min_value, max_value, help));
  });
}

void SuiteOptionSink::add_number(const std::string& flag, double& value, const std::string& help) {
  add<double>(flag, value, help, default_text_of(value), [&](CLI::Option_group& g, const std::string& f, auto set) {
    return g.add_option_function<double>(f, set, help);
  });
}

void SuiteOptionSink::add_flag(const std::string& flag, bool& value, const std::string& help) {
  add<bool>(flag, value, help, "", [&](CLI::Option_group& g, const std::string& f, auto set) {
    return g.add_flag_function(f, [set](std::int64_t count) { set(count > 0); }, help);
  });
}

}  // namespace xs::cli
