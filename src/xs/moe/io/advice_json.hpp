// xstage moe host layer: an advisor's answer as JSON for a result file: the summary a reader needs (schedule,
// D, reason, fluid times and the predicted speedup or its bracket) and every report row as one flat object
// (keys of docs/predict-moe.md). Plain C++.
#pragma once
#include <nlohmann/json.hpp>

#include "xs/moe/advisor/moe_advisor.hpp"

namespace xs::moe {

// {"schedule", "D", "reason", "fluid_wave_s" (at Q, else Q = inf), "fluid_wave_worst_s" (slowest Q allowed;
//  = fluid_wave_s with Q identified), "fluid_interleaved_s", "predicted_speedup_low", "predicted_speedup_high",
//  "report": {row key: value}}. Non-finite numbers become null.
nlohmann::json advice_json(const Advice& advice);

}  // namespace xs::moe
