// xstage report layer: names of the record enums and the identity of a point (see records.hpp).
#include "xs/report/records.hpp"

#include <array>
#include <utility>

#include "xs/common/error.hpp"
#include "xs/report/result_file.hpp"

namespace xs {
namespace {

// One table per enum so the name, the parser and the error's list of accepted names cannot drift apart.
template <typename Enum, std::size_t N>
const char* name_of(const std::array<std::pair<Enum, const char*>, N>& table, Enum value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "unknown";
}

template <typename Enum, std::size_t N>
Enum parse_name(const std::array<std::pair<Enum, const char*>, N>& table, const std::string& text,
                const char* field) {
  std::string accepted;
  for (const auto& [e, name] : table) {
    if (text == name) return e;
    accepted += (accepted.empty() ? "" : ", ") + std::string(name);
  }
  throw input_error(field, "unknown value \"" + text + "\"; accepted: " + accepted);
}

constexpr std::array<std::pair<Suite, const char*>, 4> kSuites{{{Suite::kPeriodic, "periodic"},
                                                                 {Suite::kIsolated, "isolated"},
                                                                 {Suite::kLocalControl, "local_control"},
                                                                 {Suite::kLoaded, "loaded"}}};
constexpr std::array<std::pair<Mainloop, const char*>, 2> kMainloops{{
    {Mainloop::kWgmma, "wgmma"}, {Mainloop::kLoadStream, "load_stream"}}};
constexpr std::array<std::pair<Injection, const char*>, 2> kInjections{{
    {Injection::kPaced, "paced"}, {Injection::kEpilogue, "epilogue"}}};
constexpr std::array<std::pair<WorkingSet, const char*>, 2> kWorkingSets{{
    {WorkingSet::kL2, "l2"}, {WorkingSet::kHbm, "hbm"}}};
constexpr std::array<std::pair<ProducerKind, const char*>, 2> kProducers{{
    {ProducerKind::kCta, "cta"}, {ProducerKind::kWarp, "warp"}}};
constexpr std::array<std::pair<AddressMode, const char*>, 3> kAddressModes{{
    {AddressMode::kFresh, "fresh"}, {AddressMode::kSame, "same"}, {AddressMode::kScattered, "scattered"}}};

}  // namespace

const char* suite_name(Suite suite) { return name_of(kSuites, suite); }
Suite parse_suite(const std::string& name) { return parse_name(kSuites, name, "suite"); }
const char* producer_kind_name(ProducerKind kind) { return name_of(kProducers, kind); }
const char* address_mode_name(AddressMode mode) { return name_of(kAddressModes, mode); }
ProducerKind parse_producer_kind(const std::string& name) { return parse_name(kProducers, name, "producer"); }
const char* mainloop_name(Mainloop mainloop) { return name_of(kMainloops, mainloop); }
const char* injection_name(Injection injection) { return name_of(kInjections, injection); }
Injection parse_injection(const std::string& name) { return parse_name(kInjections, name, "injection"); }
const char* working_set_name(WorkingSet working_set) { return name_of(kWorkingSets, working_set); }
Mainloop parse_mainloop(const std::string& name) { return parse_name(kMainloops, name, "mainloop"); }
WorkingSet parse_working_set(const std::string& name) { return parse_name(kWorkingSets, name, "working_set"); }
AddressMode parse_address_mode(const std::string& name) {
  return parse_name(kAddressModes, name, "address_mode");
}

std::string point_key(const PointSpec& spec) {
  // nlohmann::json objects keep keys sorted and print doubles in shortest round-trip form, so the same
  // spec always gives the same key, also after a write/read cycle.
  return report::to_json(spec).dump();
}

std::string point_id(const PointSpec& spec) {
  std::string target;
  for (char c : spec.target) {
    if (c != ':') target += c;
  }
  return std::string("remote_store.") + suite_name(spec.suite) + "." + target;
}

}  // namespace xs
