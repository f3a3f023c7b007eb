// xstage attention host layer: one fa_a2a point as result-file JSON (section 5.3's quantities beside the
// Burst-Gap predictions from a calibration, no refitting), and the Table-3-style summary. Plain C++.
// The keys are documented in docs/result-schema.md (extra.fa_a2a).
#pragma once
#include <cstdio>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/attention/point/fa_point.hpp"
#include "xs/attention/model/fa_calibration.hpp"

namespace xs::attention {

// Measured: T_FA, T_A2A, T_serial, T_fused, T_cc (median/p10/p90, seconds), E_res = T_fused - T_FA,
// E_cc,meas = T_cc - T_FA, H (eq. 21), speedup T_serial / T_fused, FA TFLOPS, sigma, spans, burst alignment,
// verification; `measured.hiding`: E_res/T_FA, E_res/T_A2A and H at the sender-side boundary (where
// measured) and at remote-visible completion.
// With a calibration (attention/judge/fa_judgement.hpp): the frozen prediction (computed only from the
// calibration, the configuration and the FA-only variant), its outcome against the measured residual beside
// the trivial predictors, the diagnostics, and `agreement`, a one-line summary.
// `model_target` is the target the calibration measured ("" = unknown): a point on another target gets
// no prediction (a host calibration says nothing about HBM), only a note.
nlohmann::json fa_point_json(const FaA2aPointSpec& spec, const FaA2aPointResult& result,
                             const model::FaCalibration* calibration, const std::string& model_target);

// Table 3 layout: one column per M, rows T_FA, T_serial, T_fused, T_cc, E_res, H, speedup, predictions,
// verdict checks. Reads files written before issue 13 too (missing keys print "-").
void print_fa_table(const std::vector<nlohmann::json>& points, std::FILE* out);

}  // namespace xs::attention
