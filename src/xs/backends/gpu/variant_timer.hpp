// xstage backends/gpu layer (CUDA): times the variants of an application point against each other. Each variant
// is captured once as a CUDA graph of back-to-back launches; rounds replay every variant once, starting at
// a rotating offset, so clock drift (DVFS) and other tenants affect every variant alike and same-round
// differences (bench::paired_difference: E_res = T_fused - T_FA per round) pair measurements taken
// seconds, not minutes, apart.
#pragma once
#include <functional>
#include <vector>

#include <cuda_runtime.h>

#include "xs/bench/app_bench.hpp"
#include "xs/bench/point_harness.hpp"

namespace xs::runtime {

// Enqueues one launch of a variant (kernels, copies) on the stream; must be capturable into a graph.
using VariantEnqueue = std::function<void(cudaStream_t)>;
// Waits for the stream and turns a failure into xs::Error (a suite may add its kernels' timeout report).
using StreamSync = std::function<void(cudaStream_t, const char* what)>;

// Every rank of a run whose traffic crosses ranks calls it before each replay, so that all ranks replay the
// same variant of the same round together (an All-to-All cannot be timed against another rank's FA-only).
using ReplayBarrier = std::function<void()>;

// One CUDA graph of `launches` back-to-back launches, captured once from enqueue(stream, launch index)
// (thread-local capture; a throwing enqueue ends the capture and rethrows). Throws xs::Error (exit 3) on CUDA
// failures.
class CapturedGraph {
 public:
  CapturedGraph(const std::function<void(cudaStream_t, int launch)>& enqueue, int launches, cudaStream_t stream);
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  void launch(cudaStream_t stream) const;  // enqueues one replay
  int launches() const { return launches_; }

 private:
  int launches_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Captures each variant's graph of `launches_per_graph` launches now, in order; the returned replay runs variant
// v's graph once, timed with events: seconds per launch (the harness's round-robin calls it, bench/point_harness).
// input_error for no variant or launches_per_graph < 1. Throws xs::Error (exit 3) on CUDA failures.
bench::RoundReplay graph_replay(const std::vector<VariantEnqueue>& variants, int launches_per_graph,
                                cudaStream_t stream, const StreamSync& synchronize = {});

// Returns [variant][round] seconds per launch (event time of one replay / launches_per_graph), the
// `warmup` leading rounds dropped, `repetitions` rounds kept (bench::time_round_robin over graph_replay). Throws xs::Error (exit 3) on CUDA failures;
// input_error for launches_per_graph < 1, warmup < 0, repetitions < 1 or no variant. `barrier`, when given,
// runs before every replay (after the previous one's stream synchronization).
std::vector<std::vector<double>> time_variants(const std::vector<VariantEnqueue>& variants, int launches_per_graph,
                                               int warmup, int repetitions, cudaStream_t stream,
                                               const StreamSync& synchronize = {}, const ReplayBarrier& barrier = {});

using bench::paired_difference;  // same-round differences of two variants' rounds, summarized

}  // namespace xs::runtime
