// xstage kernels layer: host launch API of the loaded-mainloop kernel (remote_store.loaded): a GEMM-like
// TMA -> shared-memory ring -> wgmma mainloop on K_SM persistent CTAs (or a pure TMA load stream), with
// storer warps on the same CTAs injecting remote stores in paced bursts, or (injection epilogue) the math warps
// storing a burst after their tiles themselves (loaded_kernel.cu).
#pragma once
#include <cstdint>

#include <cuda.h>
#include <cuda_runtime.h>

#include "xs/kernels/remote_store/layout.cuh"
#include "xs/kernels/remote_store/loaded_layout.cuh"

namespace xs::kernels::remote_store {

// Per CTA and tile (math thread 0): the tile's mainloop, from before its first stage wait to its last
// wgmma retired (the load-stream variant: its last stage released). Same SM: cycles. Injection epilogue:
// also the tile's epilogue, from just before thread 0's first store of the burst to after its last one
// issued (both 0 for a tile without a burst; equal in the baseline launch, which stores nothing).
struct LoadedTileRecord {
  std::uint64_t start_cycles = 0;
  std::uint64_t end_cycles = 0;
  std::uint64_t epilogue_start_cycles = 0;
  std::uint64_t epilogue_end_cycles = 0;
};

// Per CTA and burst (storer leader).
struct LoadedBurstRecord {
  std::uint64_t start_ns = 0;          // %globaltimer when the burst's first store could issue
  std::uint64_t start_cycles = 0;
  std::uint64_t issue_end_cycles = 0;  // every storer thread issued its stores of the burst
};

// Per CTA and launch.
struct LoadedCtaRecord {
  std::uint64_t first_cycles = 0, first_ns = 0;     // kernel start (thread 0)
  std::uint64_t last_cycles = 0, last_ns = 0;       // mainloop end (thread 0; epilogue: after the last tile's
                                                    // epilogue issued): the SM-clock window
  std::uint64_t store_done_cycles = 0;              // storers (epilogue: the math threads): fence.sc.sys after
                                                    // the last burst returned
  std::uint64_t store_done_ns = 0;
  std::uint32_t num_bursts = 0;                     // bursts this CTA issued in this launch
  std::uint32_t smid = 0;
};

struct LoadedConfig {
  bool wgmma = true;                    // false: the pure load stream (TMA loads, no wgmma, no C)
  std::uint32_t num_ctas = 1;           // K_SM: one persistent CTA per SM (the smem budget allows one)
  // 32 .. LoadedShape::kMaxStorerThreads, a multiple of 32; 0 for injection epilogue (no storer warps: the
  // math warps store), and only there.
  std::uint32_t storer_threads = 128;
  std::uint32_t threads_per_cta() const { return LoadedShape::kFirstStorerThread + storer_threads; }
};

struct LoadedArgs {
  LoadedProblem problem;
  CUtensorMap tm_a{};                   // A [num_blocks*128][k_elems] bf16, box [128][64], 128B swizzle
  CUtensorMap tm_b{};                   // B, the same shape
  float* c = nullptr;                   // [num_blocks][128][128] fp32 (wgmma variant; may be null)
  // Stores: CTA p's burst i is global burst burst_base[p] + i of `layout` (K = num_ctas producers of B
  // bytes, 16-B stores). max_bursts = 0: no stores (the baseline).
  void* dst = nullptr;
  BurstLayout layout;
  std::uint32_t max_bursts = 0;         // per CTA; the storers stop earlier when the CTA's mainloop ends
  std::uint64_t period_ns = 0;          // burst b starts no earlier than t0 + b * period_ns; 0: back to back
  std::uint64_t* burst_base = nullptr;  // device [num_ctas]: read at start, advanced by this launch's bursts
  // Injection epilogue (> 0): after every tiles_per_burst-th tile the 256 math threads store the CTA's next
  // burst (same layout, pattern and burst_base claim as the storers), then start the next tile; max_bursts is
  // then tiles_per_cta / tiles_per_burst (0: the baseline) and bursts / period_ns are unused. 0: paced storers.
  std::uint32_t epilogue_tiles_per_burst = 0;
  // Records (device memory), each may be null.
  LoadedTileRecord* tiles = nullptr;    // [num_ctas][tiles_per_cta]
  LoadedBurstRecord* bursts = nullptr;  // [num_ctas][max_bursts]
  LoadedCtaRecord* ctas = nullptr;      // [num_ctas]
  std::uint64_t timeout_cycles = 20'000'000'000ull;  // mbarrier waits trap beyond this (~10 s)
  std::uint32_t* status = nullptr;      // mapped host memory: LoadedStatus, readable after a trap
};

// CTAs of this configuration one SM can hold (0: it does not fit). Needs the current device.
cudaError_t loaded_ctas_per_sm(const LoadedConfig& config, int* ctas_per_sm);

// Enqueues the kernel; returns the launch error, or cudaErrorInvalidValue for a storer count outside
// [32, kMaxStorerThreads] or not a multiple of 32 (paced) or not 0 (epilogue), an epilogue max_bursts other than
// 0 or tiles_per_cta / epilogue_tiles_per_burst, a k_elems not a positive multiple of 64, or num_blocks 0.
cudaError_t launch_loaded(const LoadedConfig& config, const LoadedArgs& args, cudaStream_t stream);

}  // namespace xs::kernels::remote_store
