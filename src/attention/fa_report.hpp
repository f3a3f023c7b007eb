// xstage attention host layer: one fa_a2a point as result-file JSON (section 5.3's quantities beside the
// Burst-Gap predictions from a calibration, no refitting), and the Table-3-style summary. Plain C++.
#pragma once
#include <cstdio>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "attention/fa_runner.hpp"
#include "model/platform_model.hpp"

namespace xs::attention {

// Measured: T_FA, T_A2A, T_serial, T_fused, T_cc (median/p10/p90, seconds), E_res = T_fused - T_FA,
// E_cc,meas = T_cc - T_FA, H (eq. 21), speedup T_serial / T_fused, FA TFLOPS, sigma, spans, verification.
// With a platform model: G*, M_ub*, dt(M) (eq. 18), E_drain, dt_cc/E_cc (eq. 17), the design test
// (eq. 10) at G = G_Qloop(M), and `agreement`: whether the measured residual matches the verdict
// (piggyback predicts E_res within 2% of T_FA).
// `model_target` is the target the calibration measured ("" = unknown): a point on another target gets
// no prediction (a host calibration says nothing about HBM), only a note.
nlohmann::json fa_point_json(const FaA2aPointSpec& spec, const FaA2aPointResult& result,
                             const std::optional<model::PlatformModel>& platform, const std::string& model_target);

// Table 3 layout: one column per M, rows T_FA, T_serial, T_fused, T_cc, E_res, H, speedup, predictions.
void print_fa_table(const std::vector<nlohmann::json>& points, std::FILE* out);

inline constexpr double kFullHidingResidualFraction = 0.02;  // "full hiding": E_res <= 2% of T_FA

}  // namespace xs::attention
