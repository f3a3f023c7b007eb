// xstage cli layer: which inputs of a score were measured before the launches it judges (issue 27's frozen-input
// rule), from the files' own `meta.date_utc`. A calibration or rate file dated after the earliest judged result
// file makes the score in-sample for it, whatever the tool does with it.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace xs::cli {

// {"earliest_judged_result_utc": date | null, "judged_device": GPU name | "" | "mixed",
//  "<name>": {"date_utc": date | null, "predates_data": bool[, "refit_date_utc": date | null][, "device": name]
//             [, "same_device_as_data": bool]}, ..., "every_input_predates_data": bool,
//  "every_input_from_the_judged_device": bool}. A missing or malformed date is unknown, never "before"
// (report/utc_instant), and a judged file without one makes the earliest unknown. A refit predates only where its fit
// date (meta.refit.date_utc, not before its measurement) does. Devices (meta.devices[0].name; "simulator" for
// meta.backend "sim"): an input is from the judged GPU only where both name the same one (report::device_key:
// trimmed, case-blind); an input naming none beside data that name one, a simulator input, or judged files on several
// GPUs ("mixed") are not.
nlohmann::json input_dates(const std::vector<nlohmann::json>& judged_docs,
                           const std::vector<std::pair<std::string, nlohmann::json>>& inputs);
// The stderr note a tool prints where not every input predates the data or one was measured on another GPU ("" where
// neither).
std::string input_dates_note(const nlohmann::json& dates);

}  // namespace xs::cli
