// xstage attention judge layer: how much the FA score can tell a right calibration from a wrong one (issue 27).
// The same points judged against each calibration mutated by a known factor: R x0.5, R x2, T_iss^0 x10 (its rows
// and the bursts that bound it). A tally that hardly moves under a calibration known to be wrong says the data
// cannot tell them apart, whatever the agreements count. Nothing here enters a prediction or an outcome of the
// unmutated score. Plain C++.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/attention/point/fa_point.hpp"

namespace xs::attention::judge {

struct FaSensitivityPoint {
  FaA2aPointSpec spec;
  FaA2aPointResult result;
};

// One mutation of a calibration file's JSON (in place).
struct FaMutation {
  std::string name;  // "R x0.5"
  void (*apply)(nlohmann::json& calibration);
};
const std::vector<FaMutation>& fa_mutations();

// For each mutation: the model's tally over every (calibration, point) pair whose target matches, and how many
// of the unmutated run's agreements it turned into disagreements. `calibrations` are (path, file JSON) pairs.
nlohmann::json fa_score_sensitivity(const std::vector<FaSensitivityPoint>& points,
                                    const std::vector<std::pair<std::string, nlohmann::json>>& calibrations);

}  // namespace xs::attention::judge
