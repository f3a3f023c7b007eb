// xstage attention host layer: an fa_a2a point of a result file (points[i], written by fa_app_point with
// fa_point_json's `measured` in its extra) read back into the spec and measured result, so a committed run
// can be judged again against another calibration (add_prediction_json) without measuring it again.
// Plain C++.
#pragma once
#include <nlohmann/json.hpp>

#include "xs/attention/point/fa_point.hpp"

namespace xs::attention {

// From `axes`: M, heads, head_dim, P, target, num_ctas, launches_per_graph, repetitions, verify (required);
// device, and the kernel's knobs (point/fa_knobs.hpp from_json: fa_canonical_spec omits them at the values every
// earlier point ran, which an absent key means). A point of another suite, or without a required key, is an input_error
// whose field is the JSON path of the key (e.g. "axes.M"), relative to the point.
FaA2aPointSpec fa_point_spec_from_json(const nlohmann::json& point);

// status and reason; for a point that ran, everything add_prediction_json and judged_boundary read:
// from extra.measured the median/p10/p90 of T_FA, T_A2A, T_A2A_bulk, T_serial, T_fused, T_cc, E_res and
// E_cc (paired), the sender-side ones where measured.sender_side holds them (with its clock_normalized E_res and
// T_FA, and its critical_path), sigma (fused and FA-only),
// qloop_s, store_span_fused_s (store_span_cc_s, fence_span_cc_s), K, num_tiles, volume_bytes, fa_only_layout
// and the burst alignment; each time's samples from variants / paired (band_of needs their count), and the
// verification outcome. A missing key is an input_error naming its path ("extra.measured.sigma_s_per_kv_tile").
FaA2aPointResult fa_point_result_from_json(const nlohmann::json& point);

}  // namespace xs::attention
