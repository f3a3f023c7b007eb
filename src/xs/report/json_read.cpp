// xstage report layer: strict JSON reading helpers (see json_read.hpp).
#include "xs/report/json_read.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "xs/common/error.hpp"

namespace xs::report {
using nlohmann::json;

std::string join_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string index_path(const std::string& path, std::size_t index) {
  return fmt::format("{}[{}]", path, index);
}

const char* json_type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    default: return "binary";
  }
}

std::string bare_message(const Error& e) {
  // input_error() prints "field: message"; take the message back out so the field is not printed twice.
  std::string message = e.what();
  if (!e.field().empty() && message.rfind(e.field() + ": ", 0) == 0) message.erase(0, e.field().size() + 2);
  return message;
}

Error nest_error(const Error& e, const std::string& outer_path) {
  const std::string message = bare_message(e);
  const std::string field = e.field().empty() ? outer_path : join_path(outer_path, e.field());
  return Error(e.code(), e.domain(), field, field.empty() ? message : field + ": " + message);
}

namespace {
constexpr const char* kUnknownKey = "unknown key; accepted keys here: ";

Error wrong_type(const json& j, const std::string& path, const char* expected) {
  return input_error(path, fmt::format("expected {}, got {}", expected, json_type_name(j)));
}
}  // namespace

ObjectReader::ObjectReader(const json& j, std::string path, std::initializer_list<const char*> allowed)
    : j_(j), path_(std::move(path)) {
  if (!j_.is_object()) throw wrong_type(j_, path_.empty() ? "(document)" : path_, "an object");
  for (const auto& item : j_.items()) {
    bool known = false;
    for (const char* key : allowed) known = known || item.key() == key;
    if (known) continue;
    std::string accepted;
    for (const char* key : allowed) accepted += (accepted.empty() ? "" : ", ") + std::string(key);
    throw input_error(join_path(path_, item.key()), kUnknownKey + accepted);
  }
}

const json& ObjectReader::required(const char* key) const {
  const auto it = j_.find(key);
  if (it == j_.end()) throw input_error(path(key), "required field is missing");
  return *it;
}

const json* ObjectReader::optional(const char* key) const {
  const auto it = j_.find(key);
  return it == j_.end() ? nullptr : &*it;
}

double read_finite(const json& j, const std::string& path) {
  if (!j.is_number()) throw wrong_type(j, path, "a number (SI units)");
  const double value = j.get<double>();
  if (!std::isfinite(value)) throw input_error(path, "expected a finite number, got NaN or inf");
  return value;
}

double read_non_negative(const json& j, const std::string& path) {
  const double value = read_finite(j, path);
  if (value < 0) throw input_error(path, fmt::format("expected a number >= 0, got {}", value));
  return value;
}

std::int64_t read_integer(const json& j, const std::string& path, std::int64_t lo, std::int64_t hi) {
  if (!j.is_number_integer()) throw wrong_type(j, path, "an integer");
  // Unsigned values above int64 max are out of every range we accept; compare without converting.
  const bool too_big = j.is_number_unsigned() &&
                       j.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  const std::int64_t value = too_big ? std::numeric_limits<std::int64_t>::max() : j.get<std::int64_t>();
  if (too_big || value < lo || value > hi) {
    throw input_error(path, fmt::format("expected an integer in [{}, {}], got {}", lo, hi, j.dump()));
  }
  return value;
}

std::uint64_t read_unsigned(const json& j, const std::string& path) {
  if (!j.is_number_integer()) throw wrong_type(j, path, "a non-negative integer");
  if (!j.is_number_unsigned()) throw input_error(path, "expected a non-negative integer, got " + j.dump());
  return j.get<std::uint64_t>();
}

bool read_bool(const json& j, const std::string& path) {
  if (!j.is_boolean()) throw wrong_type(j, path, "true or false");
  return j.get<bool>();
}

std::string read_string(const json& j, const std::string& path) {
  if (!j.is_string()) throw wrong_type(j, path, "a string");
  return j.get<std::string>();
}

const json& read_array(const json& j, const std::string& path) {
  if (!j.is_array()) throw wrong_type(j, path, "an array");
  return j;
}

const json& read_object(const json& j, const std::string& path) {
  if (!j.is_object()) throw wrong_type(j, path, "an object");
  return j;
}

std::optional<std::string> find_non_finite(const json& j, const std::string& path) {
  if (j.is_number_float()) {
    if (std::isfinite(j.get<double>())) return std::nullopt;
    return path.empty() ? std::string("(document)") : path;
  }
  if (j.is_object()) {
    for (const auto& item : j.items()) {
      if (auto bad = find_non_finite(item.value(), join_path(path, item.key()))) return bad;
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (auto bad = find_non_finite(j[i], index_path(path, i))) return bad;
    }
  }
  return std::nullopt;
}

std::string dump_strict(const json& j, int indent) {
  if (auto bad = find_non_finite(j, "")) {
    throw input_error(*bad, "NaN or inf cannot be written: JSON has no such number (write a finite value)");
  }
  try {
    return j.dump(indent);  // default error handler: invalid UTF-8 throws type_error 316
  } catch (const json::exception& e) {
    throw input_error("", std::string("cannot serialize: ") + e.what());
  }
}

bool parse_schema_version(const std::string& text, unsigned& major, unsigned& minor) {
  const auto dot = text.find('.');
  auto digits = [](const std::string& part, unsigned& out) {
    if (part.empty() || part.size() > 4) return false;
    out = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return false;
      out = out * 10 + static_cast<unsigned>(c - '0');
    }
    return true;
  };
  return dot != std::string::npos && digits(text.substr(0, dot), major) && digits(text.substr(dot + 1), minor);
}

Error with_schema_version(const Error& e, const SchemaVersions& v) {
  std::string message = e.what();
  const std::size_t at = message.find(kUnknownKey);
  if (!v.file_is_newer() || at == std::string::npos) return e;
  const std::string accepted = message.substr(at + std::string(kUnknownKey).size());
  message.replace(at, std::string::npos,
                  fmt::format("a key of a newer schema version: the file is {} {}.{}, this build reads {} up to {}.{} "
                              "(a newer minor version adds fields this build does not know); read it with a newer "
                              "xstage build (keys {}.{} accepts here: {})",
                              v.name, v.file_major, v.file_minor, v.name, v.reader_major, v.reader_minor,
                              v.reader_major, v.reader_minor, accepted));
  return Error(e.code(), e.domain(), e.field(), message);
}

json parse_json_text(std::string_view text, const std::string& source) {
  // nlohmann keeps the last of two equal keys silently; a result file with two "B_bytes" is ambiguous, so
  // the callback tracks the keys of every open object and refuses repeats (and excessive depth).
  std::vector<std::set<std::string>> open_objects;
  std::string problem;
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxJsonDepth && problem.empty()) {
      problem = fmt::format("nesting deeper than {} levels", kMaxJsonDepth);
    }
    if (event == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end && !open_objects.empty()) {
      open_objects.pop_back();
    } else if (event == json::parse_event_t::key && !open_objects.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!open_objects.back().insert(key).second && problem.empty()) {
        problem = fmt::format("duplicate key \"{}\" in one object", key);
      }
    }
    // Once a problem is found, drop values so a hostile document cannot grow memory further.
    return problem.empty();
  };
  json result;
  try {
    result = json::parse(text.begin(), text.end(), check, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const json::exception& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 7: ..."; keep the tail.
    std::string what = e.what();
    const auto bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    throw input_error(source, "malformed or truncated JSON (" + what + ")");
  }
  if (!problem.empty()) throw input_error(source, "malformed JSON: " + problem);
  return result;
}

}  // namespace xs::report
