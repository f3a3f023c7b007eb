// xstage report layer: the whole result file (schema check, free-form sections, points), file reading
// and the atomic writer (see result_file.hpp and docs/result-schema.md).
#include "xs/report/result_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "xs/common/error.hpp"
#include "xs/report/file_io.hpp"
#include "xs/report/json_read.hpp"
#include "xs/report/output_set.hpp"

namespace xs::report {
using nlohmann::json;

namespace {

std::string schema_version() { return fmt::format("{}.{}", kSchemaMajor, kSchemaMinor); }

// Checked before anything else so a file of another schema is named as such, not as "unknown key". Returns the
// file's minor version.
unsigned check_schema(const json& j) {
  const ObjectReader r(j, "schema", {"name", "version"});
  const std::string name = read_string(r.required("name"), r.path("name"));
  if (name != kSchemaName) {
    throw input_error(r.path("name"), fmt::format("expected \"{}\", got \"{}\"", kSchemaName, name));
  }
  const std::string version = read_string(r.required("version"), r.path("version"));
  unsigned major = 0, minor = 0;
  if (!parse_schema_version(version, major, minor)) {
    throw input_error(r.path("version"), "expected \"MAJOR.MINOR\" such as \"" + schema_version() + "\", got \"" +
                                             version + "\"");
  }
  if (major != static_cast<unsigned>(kSchemaMajor)) {
    throw input_error(r.path("version"), fmt::format("major version {} is not supported; this reader accepts {}.x",
                                                     major, kSchemaMajor));
  }
  return minor;
}

// meta/config/extra are objects, model/validation null or object; their contents are free-form but
// numeric, so NaN/inf held in memory is refused here too.
void check_section(const json& j, const std::string& path, bool nullable) {
  if (!(j.is_object() || (nullable && j.is_null()))) {
    throw input_error(path, fmt::format("expected {}, got {}", nullable ? "an object or null" : "an object",
                                        json_type_name(j)));
  }
  if (auto bad = find_non_finite(j, path)) throw input_error(*bad, "expected a finite number, got NaN or inf");
}

// Two points of one spec make a file ambiguous (which one does the gate or a refit use?): refused on
// reading and on writing.
void check_unique_points(const std::vector<PointRecord>& points) {
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto [it, inserted] = first.emplace(point_key(points[i].spec), i);
    if (!inserted)
      throw input_error(index_path("points", i), fmt::format("duplicate point: same spec as points[{}] ({} K={} "
                                                             "B={} G={})", it->second, points[i].id,
                                                             points[i].spec.num_producers,
                                                             points[i].spec.bytes_per_producer, points[i].spec.gap_s));
  }
}

// The same for application points (id and axes); `first_index` is the first one's index in points[].
void check_unique_app_points(const std::vector<AppPoint>& points, std::size_t first_index) {
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto [it, inserted] = first.emplace(app_point_key(points[i].id, points[i].axes), first_index + i);
    if (!inserted)
      throw input_error(index_path("points", first_index + i),
                        fmt::format("duplicate point: same id and axes as points[{}] ({})", it->second, points[i].id));
  }
}

}  // namespace

json to_json(const ResultFile& file) {
  check_unique_points(file.points);
  check_unique_app_points(file.app_points, file.points.size());
  json points = json::array();
  for (std::size_t i = 0; i < file.points.size(); ++i) {
    try {
      points.push_back(to_json(file.points[i]));
    } catch (const Error& e) {
      throw nest_error(e, index_path("points", i));
    }
  }
  for (std::size_t i = 0; i < file.app_points.size(); ++i) {
    try {
      points.push_back(to_json(file.app_points[i]));
    } catch (const Error& e) {
      throw nest_error(e, index_path("points", file.points.size() + i));
    }
  }
  check_section(file.meta, "meta", false);
  check_section(file.config, "config", false);
  check_section(file.model, "model", true);
  check_section(file.validation, "validation", true);
  check_section(file.extra, "extra", false);
  return {{"schema", {{"name", kSchemaName}, {"version", schema_version()}}},
          {"meta", file.meta},
          {"config", file.config},
          {"points", std::move(points)},
          {"model", file.model},
          {"validation", file.validation},
          {"extra", file.extra}};
}

namespace {

// Everything but the schema, which result_from_json has checked.
ResultFile result_body_from_json(const json& j, unsigned file_minor) {
  const ObjectReader r(j, "", {"schema", "meta", "config", "points", "model", "validation", "extra"});
  ResultFile file;
  file.schema_minor = file_minor;
  file.meta = r.required("meta");
  check_section(file.meta, "meta", false);
  file.config = r.required("config");
  check_section(file.config, "config", false);
  file.model = r.required("model");
  check_section(file.model, "model", true);
  file.validation = r.required("validation");
  check_section(file.validation, "validation", true);
  file.extra = r.required("extra");
  check_section(file.extra, "extra", false);
  const json& points = read_array(r.required("points"), "points");
  file.points.reserve(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (is_app_point_json(points[i]))
      file.app_points.push_back(app_point_from_json(points[i], index_path("points", i)));
    else
      file.points.push_back(record_from_json(points[i], index_path("points", i)));
  }
  check_unique_points(file.points);
  check_unique_app_points(file.app_points, file.points.size());
  return file;
}

}  // namespace

ResultFile result_from_json(const json& j) {
  read_object(j, "(document)");
  const auto schema = j.find("schema");
  if (schema == j.end()) throw input_error("schema", "required field is missing (expected {\"name\": \"xstage.result\", ...})");
  const unsigned file_minor = check_schema(*schema);
  try {
    return result_body_from_json(j, file_minor);
  } catch (const Error& e) {
    throw with_schema_version(e, result_schema(file_minor));
  }
}

SchemaVersions result_schema(unsigned file_minor) {
  return {kSchemaName, static_cast<unsigned>(kSchemaMajor), file_minor, static_cast<unsigned>(kSchemaMajor),
          static_cast<unsigned>(kSchemaMinor)};
}


json read_json_file(const std::string& path) { return parse_json_text(read_text_file(path), path); }

ResultFile parse_result_text(std::string_view text, const std::string& source) {
  const json j = parse_json_text(text, source);
  try {
    return result_from_json(j);
  } catch (const Error& e) {
    // Keep the JSON path as the field; say which file it is in the message.
    throw Error(e.code(), e.domain(), e.field(), source + ": " + e.what());
  }
}

ResultFile read_result_file(const std::string& path) { return parse_result_text(read_text_file(path), path); }

void write_json_atomic(const std::string& path, const json& j, int indent) {
  // Serialize first: a value that cannot be written fails before anything touches the file system.
  write_text_atomic(path, dump_strict(j, indent) + "\n");
}

void write_output_text(const std::string& path, std::string_view text) {
  write_outputs_atomic({{path, "", std::string(text), /*may_stream=*/true}}, /*create_folders=*/false);
}

void write_text_atomic(const std::string& given_path, std::string_view text) {
  // rename(2) would replace a device node (/dev/null as root), a fifo, /dev/stdout or a symlink: only a
  // regular file is replaced, and through a link its target (the link stays a link). The temporary is never
  // left behind, an interrupt included (output_set.hpp).
  check_output_path(given_path, "");
  write_outputs_atomic({{given_path, "", std::string(text)}}, /*create_folders=*/false);
}

}  // namespace xs::report
