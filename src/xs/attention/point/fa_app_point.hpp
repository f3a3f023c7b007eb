// xstage attention host layer: one fa_a2a point in the common application-point form of every application
// suite (report/app_point.hpp: points[] of the result file, the journal's lines), and back to the per-point
// object of fa_point_json (extra.fa_a2a, the Table-3 printout, scripts/plot_fa_a2a.py). Plain C++.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/attention/point/fa_point.hpp"
#include "xs/common/axes.hpp"
#include "xs/report/app_point.hpp"

namespace xs::attention {

inline constexpr const char* kFaSuiteId = "fa_a2a";
inline constexpr int kFaMaxRanks = 16;  // = src/xs/kernels/attention kMaxRanks (static_assert in fa_runner.cpp)

// The point's shape and flags before any GPU is touched (dry run, sweep, runner, xstage-fa-point alike):
// throws input_error (exit 2) naming the flag: "--M" (a positive multiple of 128), "--heads" (>= 1, heads * M
// < 2^31), "--head-dim" (a built head dim), "--P" (1..16, dividing M), "--device" (>= 0),
// "--launches-per-graph" (>= 1), "--reps" (>= 1), "--ctas" (>= 0), "--fa-schedule" (a MainloopSchedule
// name: baseline, pingpong, pingpong_full).
void validate_fa_point_spec(const FaA2aPointSpec& spec);

// The sweep's axes and their order: targets slowest, then heads, M fastest (common/axes.hpp).
Product<StringAxis, IntegerAxis, IntegerAxis> fa_sweep_space(const std::vector<std::string>& targets,
                                                              const std::vector<long long>& heads,
                                                              const std::vector<long long>& seq_lens);

// The sweep's points in fa_sweep_space's order: `prototype` with each M, heads and target, every one checked (M in
// 1..1M and heads in 1..1024 first, then validate_fa_point_spec) before any is returned. The suite's dry run and
// the sweep (run/fa_bench.cpp) both expand through it.
std::vector<FaA2aPointSpec> fa_sweep_points(const FaA2aPointSpec& prototype, const std::vector<std::string>& targets,
                                            const std::vector<long long>& heads,
                                            const std::vector<long long>& seq_lens);

// Everything that shapes a point's measurement: M, heads, head_dim, P, target, num_ctas,
// launches_per_graph, repetitions, verify, device, and fa_schedule when it is not "baseline". The journal
// key and (in sweep order) the config hash.
nlohmann::json fa_canonical_spec(const FaA2aPointSpec& spec);
std::string fa_point_id(const FaA2aPointSpec& spec);  // "fa_a2a.<target>"

// axes = fa_canonical_spec; variants fa, a2a, a2a_bulk, serial, fused, completion_coupled (seconds per
// launch, one sample per round) and fa_heads_major (the former FA-only layout, an extra); paired
// fused_minus_fa (E_res) and completion_coupled_minus_fa (E_cc,meas): the remote-visible completion
// boundary. The sender-side boundary (fa_runner.hpp) of the same runs as variants fa_sender_side,
// serial_sender_side, fused_sender_side, completion_coupled_sender_side and paired
// fused_minus_fa_sender_side, completion_coupled_minus_fa_sender_side. extra: fa_only_layout, remote_bytes,
// destinations, boundaries
// (what each suffix means), burst_alignment (store_phase_spread_median_s, peak/mean_concurrent_storers);
// verification (checked = spec.verify on a point that ran); prediction and, in extra, measured, agreement
// and prediction_note from `legacy` (fa_point_json of the same spec and result).
report::AppPoint fa_app_point(const FaA2aPointSpec& spec, const FaA2aPointResult& result,
                              const nlohmann::json& legacy);
// The fa_point_json object of a point (measured or read back from a journal).
nlohmann::json fa_legacy_json(const report::AppPoint& point);

}  // namespace xs::attention
