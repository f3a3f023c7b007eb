// xstage moe layer (CUDA): one point of the megamoe sweep (paper section 5.2). Builds the emulated rank's
// problem from the seeded routing, fills fresh random inputs, runs the fp32 reference once, then every
// variant — expert-wave, interleaved (D), serial, the completion-coupled twins and the unfused pipeline
// (serial to local send buffers + copy-engine Combine) — on the same inputs: each verified against the
// reference (destinations poisoned first) and bitwise against the first variant, timed round-robin with
// CUDA-graph replay, and instrumented once for the per-tile distributions.
#pragma once
#include "moe/moe_point.hpp"
#include "moe/problem.hpp"
#include "moe/routing.hpp"

namespace xs::moe {

// Never throws for "cannot run here" (status skipped with the reason: one GPU for peer/nccl, fp8 not
// built, no sm_90); throws xs::Error for bad input (exit 2) and CUDA failures (exit 3).
MoePointResult run_moe_point(const MoePointSpec& spec);
// The same with the routing (generate_routing(routing_params_of(spec))) and its problem already built.
MoePointResult run_moe_point(const MoePointSpec& spec, const Routing& routing, const MoeProblem& problem);

// The Combine exchange over a run's NCCL windows (runtime/rank_windows.hpp): `windows` and `comm` must outlive it.
std::shared_ptr<const MoeExchange> moe_exchange_over(const runtime::RankWindows& windows, bench::RankComm& comm);

}  // namespace xs::moe
