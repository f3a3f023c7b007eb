// xstage report layer: strict JSON reading helpers shared by the result-file, journal and gate-config
// readers. Every failure is an input_error whose field is the JSON path ("points[3].spec.K") and whose
// message says what is accepted.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "xs/common/error.hpp"

namespace xs::report {

// Deeper documents are refused before they can exhaust the stack of a recursive consumer (dump, ==).
inline constexpr int kMaxJsonDepth = 64;

std::string join_path(const std::string& path, const std::string& key);  // "points[3]" + "spec"
std::string index_path(const std::string& path, std::size_t index);       // "points" + 3 -> "points[3]"
const char* json_type_name(const nlohmann::json& j);                      // "string", "integer", ...

// The same input error one level further out: field "spec.K" under "points[3]" becomes
// "points[3].spec.K" (used where a nested reader does not know where its object sits).
Error nest_error(const Error& e, const std::string& outer_path);
// An error's message without its "field: " prefix.
std::string bare_message(const Error& e);

// An object with a closed set of keys: construction rejects a non-object and any key not in `allowed`.
class ObjectReader {
 public:
  ObjectReader(const nlohmann::json& j, std::string path, std::initializer_list<const char*> allowed);
  const nlohmann::json& required(const char* key) const;  // missing -> input_error
  const nlohmann::json* optional(const char* key) const;  // nullptr when absent; null counts as present
  std::string path(const char* key) const { return join_path(path_, key); }

 private:
  const nlohmann::json& j_;
  std::string path_;
};

double read_finite(const nlohmann::json& j, const std::string& path);
double read_non_negative(const nlohmann::json& j, const std::string& path);
std::int64_t read_integer(const nlohmann::json& j, const std::string& path, std::int64_t lo, std::int64_t hi);
std::uint64_t read_unsigned(const nlohmann::json& j, const std::string& path);
bool read_bool(const nlohmann::json& j, const std::string& path);
std::string read_string(const nlohmann::json& j, const std::string& path);
const nlohmann::json& read_array(const nlohmann::json& j, const std::string& path);
const nlohmann::json& read_object(const nlohmann::json& j, const std::string& path);

// Path of the first NaN/inf inside `j`, if any. JSON has no such values (nlohmann would print null),
// so writers refuse them instead of silently changing the number.
std::optional<std::string> find_non_finite(const nlohmann::json& j, const std::string& path);

// j.dump(indent), refusing NaN/inf (input_error naming the field) and strings that are not UTF-8.
std::string dump_strict(const nlohmann::json& j, int indent);

// "MAJOR.MINOR" exactly (1 to 4 digits each, nothing else), as schema.version of result and gate files.
bool parse_schema_version(const std::string& text, unsigned& major, unsigned& minor);

// A file's schema (name and "MAJOR.MINOR" version) beside the one this build reads, for the versioning rule of
// docs/result-schema.md: a reader accepts its own major version and any minor; a newer minor version only adds
// fields, which this build does not know.
struct SchemaVersions {
  std::string name;            // "xstage.result"
  unsigned file_major = 0, file_minor = 0;
  unsigned reader_major = 0, reader_minor = 0;
  bool file_is_newer() const { return file_major == reader_major && file_minor > reader_minor; }
};
// `e` as a reader of a file of schema `v` threw it: where the file is of a newer minor version and `e` refuses an
// unknown key (ObjectReader), the message says so, naming both versions, instead of calling the key unknown alone;
// any other error comes back unchanged.
Error with_schema_version(const Error& e, const SchemaVersions& v);

// Parses a whole document. Malformed or truncated text, duplicate keys in one object and nesting deeper
// than kMaxJsonDepth are input_error(source, ...) with the parser's position.
nlohmann::json parse_json_text(std::string_view text, const std::string& source);

}  // namespace xs::report
