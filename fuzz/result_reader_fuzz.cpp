// xstage fuzz target (libFuzzer): the strict readers of result files, point records, journals and gate
// configs. XS_FUZZ_MODE picks the reader (fuzz/CMakeLists.txt builds one binary per mode).
// Contract under test: bad bytes raise xs::Error and nothing else; accepted input survives the writer
// and reads back identically; a file compared with itself never fails the gate. Anything else - another
// exception type, a crash, a sanitizer report, an abort() below - is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "xs/common/error.hpp"
#include "xs/gate/compare.hpp"
#include "xs/gate/gate_output.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/result_file.hpp"

#ifndef XS_FUZZ_MODE
#define XS_FUZZ_MODE 0
#endif

namespace {
using nlohmann::json;
namespace report = xs::report;
namespace gate = xs::gate;

void require(bool condition) {
  if (!condition) std::abort();  // an invariant broke: libFuzzer saves the input as a crash
}

// Runs `fn`; an xs::Error is the documented answer to bad input, so it ends the case quietly.
template <typename Fn>
auto accept_or_reject(Fn fn) -> std::optional<decltype(fn())> {
  try {
    return fn();
  } catch (const xs::Error&) {
    return std::nullopt;
  }
}

const gate::GateConfig& self_config() {
  static const gate::GateConfig config = gate::gate_config_from_json(json::parse(R"({
    "schema": {"name": "xstage.gate", "version": "1.0"},
    "metrics": [
      {"name": "model.R_Bps", "direction": "either", "rel_tol": 0, "optional": true},
      {"name": "points[*].issue_time_s.median", "direction": "lower", "abs_tol": 0, "optional": true},
      {"name": "points[*].verification.wrong", "direction": "lower", "abs_tol": 0, "optional": true}]})"));
  return config;
}

const json& sample_document() {
  static const json doc = [] {
    report::ResultFile f;
    for (int k : {1, 8}) {
      xs::PointRecord r;
      r.spec.num_producers = k;
      r.spec.bytes_per_producer = 4096;
      r.id = xs::point_id(r.spec);
      r.issue_time_s = xs::summarize({1e-6, 2e-6});
      r.period_s = xs::summarize({3e-6});
      f.points.push_back(r);
    }
    f.model = json::parse(R"({"R_Bps": 7.17e11, "Q": [{"K": 1, "bytes": 1e6}, {"K": 8, "bytes": 4e6}]})");
    f.validation = json::parse(R"({"issue_median_rel_err": 0.02})");
    return report::to_json(f);
  }();
  return doc;
}

// A file compared with itself passes whenever the comparison can be made at all.
void check_self_comparison(const json& doc, const gate::GateConfig& config) {
  const auto result = accept_or_reject([&] { return gate::compare(doc, doc, config); });
  if (!result) return;
  require(result->passed());
  (void)gate::format_table(*result, config);
  (void)gate::to_junit_xml(*result, config);
  (void)gate::report_to_json(*result, config).dump();
}

[[maybe_unused]] void fuzz_result_file(std::string_view text) {
  const auto file = accept_or_reject([&] { return report::parse_result_text(text, "fuzz"); });
  if (!file) return;
  // Accepted: the writer must take it (no xs::Error may escape from here on) and it must read back.
  const json canonical = report::to_json(*file);
  const report::ResultFile again = report::parse_result_text(report::dump_strict(canonical, 1), "again");
  require(report::to_json(again) == canonical);
  check_self_comparison(canonical, self_config());
}

[[maybe_unused]] void fuzz_point_record(std::string_view text) {
  const auto record = accept_or_reject([&] { return report::record_from_json(report::parse_json_text(text, "fuzz"), ""); });
  if (!record) return;
  const json j = report::to_json(*record);
  require(report::to_json(report::record_from_json(json::parse(j.dump()), "")) == j);
  const xs::PointSpec spec = report::spec_from_json(json::parse(xs::point_key(record->spec)), "spec");
  require(xs::point_key(spec) == xs::point_key(record->spec));
}

[[maybe_unused]] void fuzz_journal(std::string_view text) {
  const auto records = accept_or_reject([&] { return report::parse_journal(text, "fuzz"); });
  if (!records) return;
  std::string rewritten;
  for (const xs::PointRecord& r : *records) rewritten += report::to_json(r).dump() + "\n";
  require(report::parse_journal(rewritten, "again").size() == records->size());
  // A fragment without '\n' after the last line is a cut-short write: it never changes the result.
  require(report::parse_journal(std::string(text) + "{\"id\": 1", "tail").size() == records->size());
}

[[maybe_unused]] void fuzz_gate_config(std::string_view text) {
  const auto config = accept_or_reject([&] { return gate::gate_config_from_json(report::parse_json_text(text, "fuzz")); });
  if (!config) return;
  check_self_comparison(sample_document(), *config);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
#if XS_FUZZ_MODE == 0
  fuzz_result_file(text);
#elif XS_FUZZ_MODE == 1
  fuzz_point_record(text);
#elif XS_FUZZ_MODE == 2
  fuzz_journal(text);
#else
  fuzz_gate_config(text);
#endif
  return 0;
}
