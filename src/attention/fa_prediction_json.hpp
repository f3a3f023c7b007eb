// xstage attention host layer: the `prediction` block of one fa_a2a point and the checks of its verdicts
// against the measurement (issue 13 items 2, 4, 5). Plain C++; fa_report.cpp calls it.
#pragma once
#include <nlohmann/json.hpp>

#include "attention/fa_runner.hpp"
#include "model/platform_model.hpp"

namespace xs::attention {

// Adds `prediction` and `agreement` to `point` (the fa_point_json object), or nothing where no sigma was
// measured. Per point:
// - sigma: FA-only and fused-launch sigma, their ratio, which applies (attention/fa_model.hpp
//   choose_sigma) and the predictions with each (`by_sigma`);
// - with the applied sigma, the paper's eq. 10-20 quantities (legacy keys), E_issue, E_load and two burst
//   cases, `aligned` (the paper's test) and `phase_aware` (fa_verdict.hpp), each with its verdict, its
//   predicted E_res and `check`: the verdict against the measured E_res band at the judged boundary
//   (fa_report.hpp), with the measured quantities that explain a disagreement.
void add_prediction_json(const FaA2aPointSpec& spec, const FaA2aPointResult& result,
                         const model::PlatformModel& platform, nlohmann::json& point);

}  // namespace xs::attention
