// xstage bench layer: the suite registry (see suite_registry.hpp).
#include "xs/bench/suite_registry.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "xs/common/error.hpp"

namespace xs::bench {

void SuiteRegistry::add(SuiteDefinition suite) {
  auto bug = [&](const std::string& what) {
    return std::logic_error("suite registry: suite '" + suite.id + "': " + what);
  };
  if (suite.id.empty()) throw bug("an empty id");
  if (!suite.dry_run || !suite.run) throw bug("needs both a dry run and a run");
  if (suite.add_options && suite.options_title.empty()) throw bug("adds options but has no options title");
  for (const auto& s : suites_)
    if (s.id == suite.id) throw bug("registered twice");
  suites_.push_back(std::move(suite));
}

const SuiteDefinition& SuiteRegistry::at(const std::string& id) const {
  for (const auto& s : suites_)
    if (s.id == id) return s;
  std::string ids;
  for (const auto& s : suites_) ids += (ids.empty() ? "" : ", ") + s.id;
  throw input_error("suite", fmt::format("unknown suite '{}'; accepted: {} (see --list)", id, ids));
}

std::string SuiteRegistry::list_text() const {
  std::string text;
  for (const auto& s : suites_) text += fmt::format("{:<30} {}\n", s.id, s.description);
  return text;
}

}  // namespace xs::bench
