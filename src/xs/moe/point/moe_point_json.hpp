// xstage moe point: a megamoe point's spec as its result-file axes (points[].axes, the journal key), written and
// read here only, so the sweep's writer (run/moe_bench.cpp) and the readers (advisor/advisor_score_io.cpp) cannot
// drift. Plain C++.
#pragma once
#include <nlohmann/json.hpp>

#include "xs/moe/point/moe_point.hpp"

namespace xs::moe {

// shape (its name, hidden, intermediate, experts, top_k), precision, routing, zipf_alpha, gain, routing_seed, T, P,
// K_SM, block_n, target, D, experts_per_wave, overlap_waves, launches_per_graph, repetitions, verify,
// verify_rotation, cooperative_launch, instrument and variants (every family when the spec names none).
void to_json(nlohmann::json& axes, const MoePointSpec& spec);

// The spec of a point's axes. Required, in this order (input_error "axes.<key>": "missing or not a number" or
// "missing or not a string"): shape, hidden, intermediate, experts, top_k, precision, T, P, K_SM, block_n,
// routing, zipf_alpha, gain, routing_seed, target. The run's knobs (D, experts_per_wave, overlap_waves,
// launches_per_graph, repetitions, verify, verify_rotation, cooperative_launch, instrument, variants) where present
// (a wrong type is an input_error naming it), else the spec's defaults; experts_per_wave as one integer (files
// before the widths were swept; 0 there: none given) is that one width, or none. What the axes do not hold (device,
// seeds of the inputs, the exchange) stays at its default.
void from_json(const nlohmann::json& axes, MoePointSpec& spec);

}  // namespace xs::moe
