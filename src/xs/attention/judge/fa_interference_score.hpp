// xstage attention judge layer: FA-A2A E_res(M) predicted with the interference term, scored per M (issue 28
// item 4) with the fa_score machinery (bootstrap interval of the measured median; agrees / disagrees / not
// decided) at both boundaries, beside the constant predictors (E_res = 0; unhidden = bytes / R) and the
// interference-free frozen rule (fa_frozen_aligned_v2); a leave-one-M-out term fitted on the application data
// (reference only); and issue 28's bar: |point - measured| <= max(20% of measured, 1% of T_FA) at every M in
// [8192, 65536], with the trend in M right.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/attention/point/fa_app_point.hpp"
#include "xs/attention/model/fa_calibration.hpp"
#include "xs/model/slowdown_source.hpp"

namespace xs::attention::judge {

// The model's terms and frozen predictions (attention/model/) are what the judge scores.
using namespace xs::attention::model;

struct FaScoredPoint {
  std::string file;
  std::size_t index = 0;
  FaA2aPointSpec spec;
  FaA2aPointResult result;
};

inline constexpr int kFaBarMinM = 8192, kFaBarMaxM = 65536;
inline constexpr double kFaBarRelative = 0.20, kFaBarFractionOfTfa = 0.01;

// The summary (schema xstage.fa_interference_score).
nlohmann::json score_fa_with_interference(const std::vector<FaScoredPoint>& points, const FaCalibration& calibration,
                                          const xs::model::SlowdownSource& term, bool reference_fit);

}  // namespace xs::attention::judge
