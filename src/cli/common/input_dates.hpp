// xstage cli layer: which inputs of a score were measured before the launches it judges (issue 27's frozen-input
// rule), from the files' own `meta.date_utc`. A calibration or rate file dated after the earliest judged result
// file makes the score in-sample for it, whatever the tool does with it.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace xs::cli {

// {"earliest_judged_result_utc": date | null, "judged_device": GPU name | "",
//  "<name>": {"date_utc": date | null, "predates_data": bool[, "device": name, "same_device_as_data": bool]}, ...,
//  "every_input_predates_data": bool}. A missing or malformed date is unknown, never "before" (report/utc_instant);
// a device is compared only where both sides name one (meta.devices[0].name).
nlohmann::json input_dates(const std::vector<nlohmann::json>& judged_docs,
                           const std::vector<std::pair<std::string, nlohmann::json>>& inputs);
// The stderr note a tool prints where not every input predates the data or one was measured on another GPU ("" where
// neither).
std::string input_dates_note(const nlohmann::json& dates);

}  // namespace xs::cli
