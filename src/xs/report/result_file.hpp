// xstage report layer: the versioned result-file schema ("xstage.result", docs/result-schema.md), strict
// readers that name the bad field, the JSON-lines journal of finished points, and atomic writes.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/report/app_point.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/journal.hpp"
#include "xs/report/records.hpp"

namespace xs::report {

inline constexpr const char* kSchemaName = "xstage.result";
inline constexpr int kSchemaMajor = 1;   // readers refuse another major version (exit 2)
inline constexpr int kSchemaMinor = 0;

// Conversions. Readers are strict: unknown keys, missing fields, wrong types, non-finite numbers,
// zero/negative/non-16-byte-multiple sizes are input_error naming the JSON path (e.g. "points[3].spec.K").
// Writers refuse what readers refuse: to_json(PointRecord), to_json(ResultFile) and Journal::append throw
// input_error for NaN/inf or an invalid spec, so every file xstage writes reads back. to_json(PointSpec)
// and to_json(Summary) only convert. Optional completion_s/prediction are omitted when absent (readers
// also take null).
nlohmann::json to_json(const PointSpec& spec);
nlohmann::json to_json(const Summary& summary);
nlohmann::json to_json(const PointRecord& record);
PointSpec spec_from_json(const nlohmann::json& j, const std::string& path);
Summary summary_from_json(const nlohmann::json& j, const std::string& path);
PointRecord record_from_json(const nlohmann::json& j, const std::string& path);

struct ResultFile {
  nlohmann::json meta = nlohmann::json::object();        // see make_meta
  nlohmann::json config = nlohmann::json::object();      // the expanded sweep
  std::vector<PointRecord> points;
  // Application-suite points (report/app_point.hpp), written into points[] after `points`; a reader puts
  // every points[i] that has "axes" here.
  std::vector<AppPoint> app_points;
  nlohmann::json model = nlohmann::json();               // null or the fitted model section
  nlohmann::json validation = nlohmann::json();          // null or validation section
  nlohmann::json extra = nlohmann::json::object();       // suite-specific sections (e.g. "reference")
  // As read: the file's schema minor version (a newer one than kSchemaMinor may hold fields this build does not
  // know; result_schema). Writers always write kSchemaMinor.
  unsigned schema_minor = kSchemaMinor;
};
// The result schema of a file of minor version `file_minor` beside this build's, for with_schema_version
// (report/json_read.hpp): a reader of a section of a result file (the model) names a newer file's unknown key as such.
SchemaVersions result_schema(unsigned file_minor);
nlohmann::json to_json(const ResultFile& file);          // adds {"schema": {"name", "version": "1.0"}}
// Checks schema name and major version (an unknown key in a file of a newer minor version is refused naming
// both versions); two points with the same spec are an input_error naming the
// second ("points[7]"), and to_json(ResultFile) refuses them too.
ResultFile result_from_json(const nlohmann::json& j);

// Reads and parses a JSON file; a missing file, malformed or truncated JSON is an input_error with the
// path and the parser's position.
nlohmann::json read_json_file(const std::string& path);
ResultFile read_result_file(const std::string& path);
// Additive: the same from bytes already in memory (`source` names them in errors; used by the fuzzer).
ResultFile parse_result_text(std::string_view text, const std::string& source);

// Writes `j` to `path` atomically: temp file in the same directory, fsync, rename. Never leaves a
// partial file at `path`.
void write_json_atomic(const std::string& path, const nlohmann::json& j, int indent = 1);
// Additive: the same for text (JUnit XML, CSV). Failures are Errors in domain "io" (exit 2). A symlink at
// `path` is written through (its target is replaced; the link stays); a stream path is refused.
void write_text_atomic(const std::string& path, std::string_view text);
// An output that may be a stream (--junit, --csv): "-", /dev/stdout or /dev/stderr is written directly
// (report/file_io.hpp is_stream_path), anything else with write_text_atomic.
void write_output_text(const std::string& path, std::string_view text);

// The result file's meta: tool version, git sha + dirty flag, argv, build type, date (UTC ISO-8601),
// host, backend name; `backend_description` (devices, driver/CUDA/NCCL versions, clocks) merged in.
nlohmann::json make_meta(const std::vector<std::string>& argv, const std::string& backend_name,
                         const nlohmann::json& backend_description);

// The journal of finished points (journal_path_for, Journal, read_journal): report/journal.hpp.

}  // namespace xs::report
