// xstage moe layer (CUDA): one point of the megamoe sweep (paper section 5.2). Builds the emulated rank's
// problem from the seeded routing, fills fresh random inputs, runs the fp32 reference once, then every
// variant plan (moe_variants.hpp: expert-wave at each swept width, interleaved (D), serial, the
// completion-coupled twins, serial_then_copy, unfused_overlapped, the whole-phase launches) on the same
// inputs: each verified against the reference in a rotated order, on intermediates and destinations poisoned
// just before it (verification_gate.hpp's rule) and bitwise against the first that passed, timed round-robin
// with CUDA-graph replay, and instrumented once for the per-tile distributions.
#pragma once
#include "xs/moe/point/moe_point.hpp"
#include "xs/moe/point/problem.hpp"
#include "xs/moe/point/routing.hpp"

namespace xs::moe {

// Never throws for "cannot run here" (status skipped with the reason: one GPU for peer/nccl, fp8 not
// built, no sm_90); throws xs::Error for bad input (exit 2) and CUDA failures (exit 3).
MoePointResult run_moe_point(const MoePointSpec& spec);
// The same with the routing (generate_routing(routing_params_of(spec))) and its problem already built.
MoePointResult run_moe_point(const MoePointSpec& spec, const Routing& routing, const MoeProblem& problem);

// The Combine exchange over a run's NCCL windows (backends/nccl/rank_windows.hpp): `windows` and `comm` must outlive it.
std::shared_ptr<const MoeExchange> moe_exchange_over(const runtime::RankWindows& windows, bench::RankComm& comm);

}  // namespace xs::moe
