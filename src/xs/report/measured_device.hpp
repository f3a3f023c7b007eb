// xstage report layer: the GPU a result file was measured on, read one way everywhere (the gate's provenance,
// fa-score's out-of-sample check, the FA calibration loader, fa-result's warning). Plain C++.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace xs::report {

struct MeasuredDevice {
  std::string name;  // meta.devices[meta.device_index].name; "" where not recorded
  std::string uuid;  // ... .uuid; "" where not recorded
};

// meta.devices[meta.device_index] (index 0 where none is recorded). Absent fields stay empty. A device_index that
// is not an index into meta.devices, or a name or uuid that is not a string, is bad input: input_error naming
// `path` and the field.
MeasuredDevice measured_device(const nlohmann::json& meta, const std::string& path);

// A GPU name as compared: surrounding blanks dropped, inner runs of blanks as one, case-blind.
std::string device_key(const std::string& name);

}  // namespace xs::report
