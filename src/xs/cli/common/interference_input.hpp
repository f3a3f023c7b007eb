// xstage cli layer: the interference term for a prediction, from a calibration file with the
// remote_store.loaded block (issue 28 item 2): the fitted term as a model::SlowdownSource, with provenance.
// A file without the block gives status "interference not calibrated", never slowdown 1.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "xs/model/slowdown_source.hpp"

namespace xs::cli {

struct InterferenceInput {
  model::SlowdownSource source;
  nlohmann::json provenance;  // file, hash, target, git sha, date, status, form and parameters
};

InterferenceInput interference_input_of(const nlohmann::json& calibration_doc, const std::string& file,
                                        const std::string& fnv1a64);

}  // namespace xs::cli
