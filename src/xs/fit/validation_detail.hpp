// xstage fit layer, internal: the pieces both validations share (validate.cpp, cross_validate.cpp): the
// regime of a point, one point's prediction by one model, and the per-regime summaries of a set of rows.
#pragma once
#include <string>
#include <vector>

#include "xs/fit/validation.hpp"

namespace xs::fit::detail {

Regime classify(const PointSpec& spec, const FittedModel& full, const RegimeBoundaries& boundaries);
// A row with the point's identity and measurements, no prediction, and `reason` (empty: to be predicted).
ValidationRow unpredicted_row(const PointRecord& point, std::size_t index, Regime regime, const std::string& reason);
// A row predicted by `model`, or unpredicted with the reason when it needs a parameter `model` lacks.
ValidationRow predict_row(const PointRecord& point, std::size_t index, const FittedModel& model, Regime regime);
// Fills rows-derived fields: regimes, counts, unpredicted reasons.
void summarise(Validation& validation);

}  // namespace xs::fit::detail
