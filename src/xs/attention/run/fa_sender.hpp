// xstage attention layer (CUDA): the sender-side boundary of the fa_a2a variants (issue 13 item 3, paper
// section 5.1: "a CUDA event completes after the kernel has consumed its source staging and issued the
// remote stores; a barrier synchronizes remote visibility once after the back-to-back replay").
//
// Why not events: a kernel boundary waits until the grid's stores are performed, so an event after a
// launch (and the next launch of a back-to-back graph) includes that launch's post-issue drain; the event
// times of fa_runner (t_*) are therefore the remote-visible completion boundary. The sender-side boundary
// is taken inside the kernel instead: every launch of a round is instrumented (TileRecord), and its
// sender-side time is launch_sender_span_s (attention/run/fa_burst.hpp): %globaltimer from the earliest tile
// start of any CTA to the latest "every thread of the warpgroup issued its stores" stamp. The drain after
// the last store is outside it; a drain that stalls later issues (backpressure) is inside it, as it should
// be. The L launches of a round run back to back on the stream with ONE stream synchronization after them
// (the remote-visibility barrier); the round's value is the mean over its L launches. Instrumentation adds
// one warpgroup barrier and a record write per tile to every variant alike; paired differences cancel it.
#pragma once
#include <cstddef>
#include <functional>
#include <vector>

#include <cuda_runtime.h>

#include "xs/kernels/attention/flash_attention.hpp"

namespace xs::attention {

struct SenderVariant {
  // Enqueues one instrumented launch writing its tile records to `records` (2 per record slot: per tile, or with a split tail per unit and cluster rank, scheduler.cuh).
  std::function<void(cudaStream_t, kernels::attention::TileRecord* records)> enqueue;
  // Optional copy-engine work after each launch (serial's A2A), timed with events around it and added to
  // the launch's span: a copy has no issue-versus-visibility split, its completion is its own boundary.
  std::function<void(cudaStream_t)> after;
};

// Called for every kept launch with its records (e.g. the burst alignment of the fused launches).
using SenderLaunchSink = std::function<void(std::size_t variant, const std::vector<kernels::attention::TileRecord>&)>;

// Returns [variant][round] sender-side seconds per launch. Rounds visit the variants round-robin from a
// rotating start (bench::time_round_robin, as backends/gpu/variant_timer), so same-round differences pair
// measurements taken close together; the `warmup` leading rounds are dropped. Throws xs::Error (exit 3) on CUDA failures.
std::vector<std::vector<double>> time_sender_side(const std::vector<SenderVariant>& variants,
                                                  std::uint32_t num_record_slots, int launches_per_round, int warmup,
                                                  int repetitions, cudaStream_t stream,
                                                  const SenderLaunchSink& sink = {},
                                                  const std::function<void()>& round_barrier = {});

// The same instrumented launches as a CUDA graph, as the timed replays run them (backends/gpu/variant_timer): the
// variant's L launches (each writing its own records) captured once, then warmup + repetitions replays with one
// stream synchronization each; sink(launch index over the kept replays, its records) for every kept launch.
// `variant.after` is not allowed here (input_error). Throws xs::Error (exit 3) on CUDA failures.
void replay_instrumented_graph(const SenderVariant& variant, std::uint32_t num_record_slots, int launches_per_round,
                               int warmup, int repetitions, cudaStream_t stream,
                               const std::function<void(std::size_t, const std::vector<kernels::attention::TileRecord>&)>& sink);

}  // namespace xs::attention
