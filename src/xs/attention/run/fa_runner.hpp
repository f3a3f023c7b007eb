// xstage attention layer (CUDA): one point of the fa_a2a sweep (paper section 5.3). Runs FA-only,
// A2A-only (copy engine), Serial (FA then the copy), X-Stage-Fused and completion-coupled on the same
// fresh random inputs; verifies every output (poisoned first) and times each variant with CUDA Graph
// replay + events (median over repetitions). `xstage-bench fa_a2a` wires this in.
// FA-only is layout-matched (issue 13 item 1): it runs the fused epilogue (the same [token][H][d] Ulysses
// rank slices, the same 16-byte stores and bytes) into a local HBM buffer, so E_res = T_fused - T_FA
// isolates the remote path; the serial A2A copies those slices. The former heads-major [H][M][d] FA-only
// is timed beside it as t_fa_heads_major (the layout bias the issue measured on `local`).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "xs/attention/point/fa_point.hpp"
#include "xs/backends/nccl/rank_windows.hpp"

namespace xs::attention {

// A real All-to-All across P ranks (one process per GPU, or a thread per GPU): what a rank's point needs from
// outside. Each rank owns a receive window of P * bytes_per_rank, sender s's block at s * bytes_per_rank
// ([M/P tokens][H][d], the sender's heads: the layout ncclAlltoAll produces, so the fused stores and the
// Serial/A2A-only collective deliver the same bytes to the same place). Made by the suite (fa_bench) from NCCL
// symmetric windows; plain pointers and callbacks here, so this header needs neither CUDA nor NCCL. The
// windows must hold >= P x the point's bytes per rank; `description` goes into the result's `destinations`.
struct FaExchange : runtime::WindowExchange {
  // Serial / A2A-only: one all-to-all of bytes_per_peer per pair from `send` ([P] blocks) into `recv` (the
  // own window), enqueued on the cudaStream_t `stream`; capturable in a CUDA graph.
  std::function<void(const void* send, void* recv, std::size_t bytes_per_peer, void* stream)> alltoall;
};

// Never throws for "cannot run here" (returns status skipped with the reason); throws xs::Error for bad
// input (exit 2) and CUDA failures (exit 3).
FaA2aPointResult run_fa_a2a_point(const FaA2aPointSpec& spec);

// The exchange over a run's NCCL windows (backends/nccl/rank_windows.hpp): `windows` and `comm` must outlive it.
std::shared_ptr<const FaExchange> fa_exchange_over(const runtime::RankWindows& windows, bench::RankComm& comm);

}  // namespace xs::attention
