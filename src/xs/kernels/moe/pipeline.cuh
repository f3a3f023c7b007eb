// xstage kernels layer (moe): the MegaMoE kernel's by-value parameters, shared-memory carve-up, mbarriers
// and the timed spin-waits every role uses. Device code (the SmemLayout constants are host-visible too).
#pragma once
#include <cstdint>

#include "xs/kernels/common/ptx_hopper.cuh"
#include "xs/kernels/moe/layout.cuh"
#include "xs/kernels/moe/megamoe.hpp"

namespace xs::kernels::moe {

// ---- Shared memory (bytes from a 1024-aligned base) ---------------------------------------------------
//   stage[s]  A: [128 rows][64 cols] bf16, 128B swizzle (16 KiB)  B: [b_n rows][64 cols] (16 or 32 KiB)
//   staging   one tile of output: [128 rows][b_n (L2) or b_n/2 (L1) cols] bf16, 16-B chunks XOR-swizzled
//             by row % 8 (conflict-free fragment writes and 16-B row reads)          32 or 64 KiB
//   row_meta  the staged L2 tile's 128 (dst rank, slot) pairs, filled by the storers           1 KiB
//   dispatch  the 128 arrival rows of the row block being dispatched                          512 B
//   act scale fp8 only: the staged L1 tile's 128 per-row act scales (math -> storers)          512 B
//   stamps    math warpgroups' "slot full" clock64 stamps (2 x 8 B); the launch epoch (4 B)
//   scales    fp8 only, per stage: the k-block's 128 row scales (Linear-1: the pool rows' 128-K group scale;
//             Linear-2: the act rows' two 64-column group scales, [2][128]), loaded by the producer with the
//             stage (bulk copy, same full barrier)                                  kStages x 1 KiB
//   barriers  full[s], empty[s], slot_full, slot_empty
template <int kBlockN>
struct SmemLayout {
  using Shape = TileShape<kBlockN>;
  static constexpr std::uint32_t kABytes = Shape::kBlockM * Shape::kBlockK * 2;   // 16 KiB
  static constexpr std::uint32_t kBBytes = kBlockN * Shape::kBlockK * 2;          // 16 or 32 KiB
  static constexpr std::uint32_t kStageBytes = kABytes + kBBytes;
  static constexpr std::uint32_t kStagingBytes = Shape::kBlockM * kBlockN * 2;
  static constexpr std::uint32_t kStagingOffset = Shape::kStages * kStageBytes;
  static constexpr std::uint32_t kRowMetaOffset = kStagingOffset + kStagingBytes;
  static constexpr std::uint32_t kDispatchMetaOffset = kRowMetaOffset + Shape::kBlockM * 8;
  static constexpr std::uint32_t kActScaleOffset = kDispatchMetaOffset + Shape::kBlockM * 4;
  static constexpr std::uint32_t kStampOffset = kActScaleOffset + Shape::kBlockM * 4;
  static constexpr std::uint32_t kEpochOffset = kStampOffset + 16;
  static constexpr std::uint32_t kLastTileOffset = kEpochOffset + 4;  // the CTA's last tile (instrumentation)
  static constexpr std::uint32_t kScaleStageBytes = 2 * Shape::kBlockM * 4;            // [2][128] floats
  static constexpr std::uint32_t kScaleOffset = (kLastTileOffset + 4 + 127u) & ~127u;  // bulk copies: 16-B aligned
  static constexpr std::uint32_t kBarrierOffset = kScaleOffset + Shape::kStages * kScaleStageBytes;
  static constexpr std::uint32_t kNumBarriers = 2 * Shape::kStages + 2;
  static constexpr std::uint32_t kUsedBytes = kBarrierOffset + kNumBarriers * 8;
  static constexpr std::uint32_t kDynamicBytes = kUsedBytes + 1024;  // + slack to round the base up
  XS_HD static constexpr std::uint32_t a_offset(std::uint32_t s) { return s * kStageBytes; }
  XS_HD static constexpr std::uint32_t b_offset(std::uint32_t s) { return s * kStageBytes + kABytes; }
  XS_HD static constexpr std::uint32_t scale_offset(std::uint32_t s) { return kScaleOffset + s * kScaleStageBytes; }
};
static_assert(SmemLayout<128>::kDynamicBytes <= 227 * 1024, "b_n = 128 shared memory over 227 KiB");
static_assert(SmemLayout<256>::kDynamicBytes <= 227 * 1024, "b_n = 256 shared memory over 227 KiB");
static_assert(SmemLayout<128>::kStageBytes % 1024 == 0 && SmemLayout<256>::kStageBytes % 1024 == 0,
              "128B-swizzled TMA tiles need 1024-byte alignment");

// Byte offset of bf16 element (row, col) in the staging tile of `row_bytes` per row (a multiple of 128).
XS_HD std::uint32_t staging_offset(std::uint32_t row, std::uint32_t col, std::uint32_t row_bytes) {
  const std::uint32_t chunk = col / 8;
  return row * row_bytes + ((chunk ^ (row % 8)) * 16) + (col % 8) * 2;
}
// fp8 L1 staging: [128 rows][64 e4m3] = 64 B per row, 16-B chunks XOR-swizzled by row % 4.
XS_HD std::uint32_t staging_offset_fp8(std::uint32_t row, std::uint32_t col) {
  return row * 64 + (((col / 16) ^ (row % 4)) * 16) + col % 16;
}

// Elements per k-block: one 128-byte swizzle row of A and B (64 bf16 or 128 e4m3).
template <Precision kPrec>
inline constexpr std::uint32_t kBlockKElems = kPrec == Precision::kBf16 ? 64 : 128;

template <class Schedule>
struct KernelParams {
  Schedule schedule;
  ScheduleProblem problem;         // tile space + expert_first_block (device memory)
  RoutingTables routing;
  std::uint32_t hidden = 0;        // h
  std::uint32_t intermediate = 0;  // I
  std::uint32_t num_ctas = 0;      // K_SM: scheduler instances
  std::uint32_t pool_rows = 0;     // num_row_blocks * 128
  std::uint32_t row_bytes_in = 0;  // bytes of an arrival / pool row: h x element size (2 bf16, 1 e4m3)
  // fp8 W8A8 scales (megamoe.hpp); null in bf16 launches.
  const float* arrival_scale = nullptr;
  float* pool_scale = nullptr;
  const float* w1_scale = nullptr;
  const float* w2_scale = nullptr;
  float* act_scale = nullptr;
  const std::uint8_t* arrival = nullptr;
  std::uint8_t* pool = nullptr;
  std::uint8_t* act = nullptr;
  std::uint8_t* dst[kMaxRanks] = {};
  std::uint32_t* sync = nullptr;
  SyncLayout sync_layout;
  TileRecord* records = nullptr;
  std::uint32_t dispatch_enabled = 1;   // 0 (phase launches): no Dispatch, and Linear-1 waits for no flag
  std::uint32_t l2_waits_for_l1 = 1;    // 0: phase launches, or the planted ordering bug (config.hpp)
  std::uint64_t timeout_cycles = 0;
  WaitTimeoutReport* timeout_report = nullptr;  // mapped pinned host memory
};

struct Barriers {
  std::uint64_t* full;    // [kStages] count 1 + tx: producer's expect_tx, TMA completes the stage bytes
  std::uint64_t* empty;   // [kStages] count 256: every math thread after its wgmmas on the stage retired
  std::uint64_t* slot_full;   // count 256: every math thread after writing its part of the staging tile
  std::uint64_t* slot_empty;  // count 64: every storer thread after reading the tile (and, coupled, fencing)
};

template <int kBlockN>
__device__ __forceinline__ Barriers barriers_at(std::uint8_t* smem) {
  auto* b = reinterpret_cast<std::uint64_t*>(smem + SmemLayout<kBlockN>::kBarrierOffset);
  constexpr int S = TileShape<kBlockN>::kStages;
  return Barriers{b, b + S, b + 2 * S, b + 2 * S + 1};
}

template <int kBlockN>
__device__ __forceinline__ void init_barriers(const Barriers& bars) {
  using Shape = TileShape<kBlockN>;
  for (int s = 0; s < Shape::kStages; ++s) {
    ptx::mbarrier_init(bars.full + s, 1);
    ptx::mbarrier_init(bars.empty + s, Shape::kNumMathThreads);
  }
  ptx::mbarrier_init(bars.slot_full, Shape::kNumMathThreads);
  ptx::mbarrier_init(bars.slot_empty, Shape::kNumStorerThreads);
  ptx::fence_mbarrier_init();
}

static __device__ unsigned int moe_timeout_claim = 0;

// Records which wait timed out in the host-visible report, then traps (the launch fails and
// megamoe_timeout_message() names the flag). No printf: it would serialize the wgmmas (ptxas C7510).
template <class Params>
__device__ __noinline__ void report_timeout(const Params& p, WaitFlag flag, std::uint32_t tile,
                                            std::uint32_t expected) {
  volatile WaitTimeoutReport* r = p.timeout_report;
  // The first thread to time out claims the report (a device-memory word: no atomics on the mapped host
  // report): the waits it starved time out later and must not overwrite the cause. A trap ends the
  // context, so the claim never needs a reset.
  if (r != nullptr && atomicCAS(&moe_timeout_claim, 0u, 1u) == 0u) {
    r->flag = static_cast<std::uint32_t>(flag);
    r->block = blockIdx.x;
    r->thread = threadIdx.x;
    r->tile = tile;
    r->expected = expected;
    __threadfence_system();
    r->valid = 1;
    __threadfence_system();
  }
  __trap();
}

// mbarrier phase wait with a timeout; returns the cycles spent waiting. The clock is read before the first
// try: mbarrier.try_wait may suspend the thread for a while and still return true, so timing only the
// retries would count such waits as zero.
template <class Params>
__device__ __forceinline__ std::uint64_t wait_barrier(const Params& p, std::uint64_t* bar, std::uint32_t parity,
                                                      WaitFlag flag, std::uint32_t tile) {
  const std::uint64_t start = ptx::clock64_cycles();
  while (!ptx::mbarrier_try_wait_parity(bar, parity)) {
    if (ptx::clock64_cycles() - start > p.timeout_cycles) report_timeout(p, flag, tile, parity);
  }
  return ptx::clock64_cycles() - start;
}

// Spin until the global word reaches `target` (acquire, gpu scope), with a timeout naming the flag;
// returns the cycles spent spinning.
template <class Params>
__device__ __forceinline__ std::uint64_t wait_counter(const Params& p, const std::uint32_t* word, std::uint32_t target,
                                                      WaitFlag flag, std::uint32_t tile) {
  if (ptx::ld_acquire_gpu_u32(word) >= target) return 0;
  const std::uint64_t start = ptx::clock64_cycles();
  while (ptx::ld_acquire_gpu_u32(word) < target) {
    if (ptx::clock64_cycles() - start > p.timeout_cycles) report_timeout(p, flag, tile, target);
  }
  return ptx::clock64_cycles() - start;
}

}  // namespace xs::kernels::moe
