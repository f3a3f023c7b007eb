// xstage fit layer: the platform model of a calibration file on disk, read through the strict result-file reader.
// model/ computes from a `model` section and reads no files; this is where a file becomes one.
#pragma once
#include <string>
#include <string_view>

#include "xs/model/platform_model.hpp"

namespace xs::fit {

// From a whole result/calibration file on disk, through the strict result-file reader
// (report::parse_result_text: schema, duplicate/unknown keys, points); input_error otherwise, and for a file
// whose R is not identified ("it cannot predict").
model::PlatformModel load_platform_model(const std::string& path);
// The same from the file's bytes already read (`source` names them in errors): a caller that also hashes
// or reads other sections of the file uses one read, so all of it comes from the same bytes.
model::PlatformModel platform_model_from_result_text(std::string_view text, const std::string& source);

}  // namespace xs::fit
