// xstage cli layer: the interference term from a calibration file (see interference_input.hpp).
#include "xs/cli/common/interference_input.hpp"

#include <fmt/format.h>

#include "xs/common/error.hpp"

namespace xs::cli {

using nlohmann::json;

InterferenceInput interference_input_of(const json& doc, const std::string& file, const std::string& fnv1a64) {
  InterferenceInput in;
  int loaded_points = 0;
  if (doc.is_object() && doc.contains("points") && doc["points"].is_array())
    for (const json& p : doc["points"])
      if (p.is_object() && p.value("id", std::string()).rfind("remote_store.loaded", 0) == 0) ++loaded_points;
  // A file that is no calibration at all (an application or bench result: no fitted model, no loaded points, no
  // interference block) is refused, not scored as "not calibrated" (hostile review of 2026-12-07: the judged file
  // itself was accepted as its own --interference). An older calibration without the block still loads.
  const bool has_model = doc.is_object() && doc.contains("model") && doc["model"].is_object();
  const bool has_block = doc.is_object() && doc.contains("extra") && doc["extra"].is_object() &&
                         doc["extra"].contains("interference");
  if (!has_model && !has_block && loaded_points == 0)
    throw input_error("--interference", fmt::format("{}: not a calibration file (no fitted model, no remote_store.loaded "
                                                    "points, no extra.interference block); --interference takes a "
                                                    "file written by xstage-calibrate", file));
  const json meta = doc.is_object() && doc.contains("meta") && doc["meta"].is_object() ? doc["meta"] : json::object();
  in.provenance = {{"file", file},
                   {"fnv1a64", fnv1a64},
                   {"target", doc.is_object() && doc.contains("config") && doc["config"].is_object()
                                  ? doc["config"].value("target", std::string())
                                  : std::string()},
                   {"git_sha", meta.value("git_sha", std::string())},
                   {"date_utc", meta.value("date_utc", std::string())},
                   {"loaded_points", loaded_points}};
  // The fitted term where the file carries it (extra.interference, written by xstage-calibrate or a refit);
  // loaded points without the block are data, not a term: not calibrated, with the reason.
  const model::InterferenceTerm term = model::interference_term_of_calibration(doc);
  in.source = model::slowdown_source_of(term, file);
  if (term.status == model::InterferenceStatus::kNotCalibrated && loaded_points > 0)
    in.source.why = fmt::format("{} has {} remote_store.loaded points but no extra.interference block (refit it: "
                                "the term is fitted by xstage-calibrate)", file, loaded_points);
  else if (term.status == model::InterferenceStatus::kNotCalibrated)
    in.source.why = fmt::format("{} has no remote_store.loaded points and no interference block", file);
  in.provenance["form"] = term.form;
  in.provenance["parameters"] = model::to_json(term).value("parameters", json::array());
  in.provenance["status"] = model::interference_status_name(in.source.status);
  in.provenance["why"] = in.source.why;
  return in;
}

}  // namespace xs::cli
