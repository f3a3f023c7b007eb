// xstage gate layer: short, unique instance labels for the elements a [*] metric expands to:
// "periodic K=132 B=16KiB G=5us" for points, "K=66 V=1MiB" for match_by arrays.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/gate/gate_config.hpp"

namespace xs::gate {

// "name=value" with the unit suffix folded into the value: ("B_bytes", 16384) -> "B=16KiB",
// ("G_s", 5e-6) -> "G=5us", ("K", 132) -> "K=132", ("suite", "isolated") -> "suite=isolated".
std::string axis_text(const std::string& name, const nlohmann::json& value);

// One label per element (same order), unique among them. Points (matched by id + spec): the suite (or
// the id where the spec has none) and K, B, G where present; elements whose labels would collide get
// the id and every spec axis that tells them apart appended. Other arrays: their match_by values.
// Pass the elements of both files so that a candidate-only element cannot take a baseline label.
std::vector<std::string> element_labels(const std::vector<const nlohmann::json*>& elements, const MetricSpec& m);

}  // namespace xs::gate
