// xstage backends/nccl layer: the NCCL all-to-all reference bandwidth a run's topology record carries (issue 14):
// ncclAlltoAll (NCCL >= 2.28; grouped ncclSend/ncclRecv before) of bytes_per_peer per rank pair, timed with
// CUDA events, the slowest rank per iteration, the median over iterations, and the received bytes verified.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/backends/nccl/nccl_comm.hpp"

namespace xs::runtime {

struct NcclAlltoallOptions {
  std::size_t bytes_per_peer = 1 << 20;  // what each rank sends to each rank (itself included)
  int warmup_iterations = 2;
  int timed_iterations = 10;
  std::uint64_t seed = 1;  // the pattern each sender writes (alltoall_pattern_byte)
};

struct NcclAlltoallReference {
  std::size_t bytes_per_peer = 0;
  int num_ranks = 0;         // communicator size P
  std::string method;        // "ncclAlltoAll" or "ncclSend/ncclRecv group"
  int nccl_version = 0;      // ncclGetVersion
  std::vector<double> time_s;  // per timed iteration: the slowest rank's event time (max over all ranks)
  double median_time_s = 0;
  double algbw_bps = 0;      // P * bytes_per_peer / median_time_s
  double busbw_bps = 0;      // algbw * (P-1)/P; 0 for one rank (a local copy)
  bool verified = false;     // every local rank received exactly what every sender wrote for it
  std::string verification_error;  // first mismatch, when not verified
};

// The record for a run's topology section: SI numbers (s, B/s), the per-iteration times, the verification.
// Inline (plain C++) so CPU tests check it.
inline nlohmann::json to_json(const NcclAlltoallReference& ref) {
  nlohmann::json j = {{"method", ref.method},
                      {"nccl_version", ref.nccl_version},
                      {"num_ranks", ref.num_ranks},
                      {"bytes_per_peer", ref.bytes_per_peer},
                      {"time_s", ref.time_s},
                      {"median_time_s", ref.median_time_s},
                      {"algbw_bps", ref.algbw_bps},
                      {"busbw_bps", ref.busbw_bps},
                      {"verified", ref.verified}};
  if (!ref.verified) j["verification_error"] = ref.verification_error;
  return j;
}

// Collective over the communicator (every rank calls it with the same options). Throws input_error for bad
// options (see validate_alltoall_args), Error "nccl"/"cuda" (exit 3) on a failure, input_error "target" when
// built without NCCL. The timing is reduced across ranks with ncclAllReduce(max), so every rank, in this
// process or another, returns the same time_s.
NcclAlltoallReference nccl_alltoall_reference(const NcclCommGroup& comms, const NcclAlltoallOptions& options);

// Enqueues one all-to-all on `stream` (a cudaStream_t) through `comm` (one member of an NcclCommGroup): block p
// of `send` (at p * bytes_per_peer) goes to world rank p, rank p's block lands at p * bytes_per_peer of `recv`.
// Capturable in a CUDA graph; every rank must enqueue (and replay) it in the same order. The fa_a2a Serial and
// A2A-only variants across ranks. Throws Error "nccl" (exit 3) on failure, input_error "target" when built
// without NCCL, input_error "comm" for a null communicator or buffer.
void enqueue_nccl_alltoall(ncclComm* comm, const void* send, void* recv, std::size_t bytes_per_peer, void* stream);

}  // namespace xs::runtime
