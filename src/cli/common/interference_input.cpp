// xstage cli layer: the interference term from a calibration file (see interference_input.hpp).
#include "cli/common/interference_input.hpp"

#include <fmt/format.h>

namespace xs::cli {

using nlohmann::json;

InterferenceInput interference_input_of(const json& doc, const std::string& file, const std::string& fnv1a64) {
  InterferenceInput in;
  int loaded_points = 0;
  if (doc.is_object() && doc.contains("points") && doc["points"].is_array())
    for (const json& p : doc["points"])
      if (p.is_object() && p.value("id", std::string()).rfind("remote_store.loaded", 0) == 0) ++loaded_points;
  const json meta = doc.is_object() && doc.contains("meta") && doc["meta"].is_object() ? doc["meta"] : json::object();
  in.provenance = {{"file", file},
                   {"fnv1a64", fnv1a64},
                   {"target", doc.is_object() && doc.contains("config") && doc["config"].is_object()
                                  ? doc["config"].value("target", std::string())
                                  : std::string()},
                   {"git_sha", meta.value("git_sha", std::string())},
                   {"date_utc", meta.value("date_utc", std::string())},
                   {"loaded_points", loaded_points}};
  in.source.label = file;
  if (loaded_points == 0) {
    in.source.status = model::InterferenceStatus::kNotCalibrated;
    in.source.why = fmt::format("{} has no remote_store.loaded points", file);
  } else {
    in.source.status = model::InterferenceStatus::kNotCalibrated;
    in.source.why = fmt::format("{} has {} remote_store.loaded points, but this build has no fitter for the term",
                                file, loaded_points);
  }
  in.provenance["status"] = model::interference_status_name(in.source.status);
  in.provenance["why"] = in.source.why;
  return in;
}

}  // namespace xs::cli
