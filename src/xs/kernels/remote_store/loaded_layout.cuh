// xstage kernels layer: shapes, tile schedule and shared-memory budget of the loaded-mainloop kernel
// (loaded_kernel.cu). Header-only and callable from host and device, so CPU tests enumerate the schedule and
// the host verifier recomputes what the kernel claims to have written.
#pragma once
#include <cstdint>

#include "xs/kernels/remote_store/layout.cuh"

namespace xs::kernels::remote_store {

// The mainloop of MegaMoE's bf16 GEMM tile: a 128 x 128 output tile, k-blocks of 64 bf16 (one 128-byte
// swizzle row), A and B tiles of [128 rows][64 k] = 16 KiB each through a kStages ring.
struct LoadedShape {
  static constexpr std::uint32_t kBlockM = 128, kBlockN = 128, kBlockK = 64, kStages = 4;
  static constexpr std::uint32_t kTileBytes = kBlockM * kBlockK * 2;  // A or B: [128][64] bf16 = 16 KiB
  static constexpr std::uint32_t kStageBytes = 2 * kTileBytes;       // A then B
  // Warp roles: warps 0-7 the two math warpgroups (rows [64 wg, 64 wg + 64) of the tile), warp 8 the TMA
  // producer (lane 0), warps 9.. the storers.
  static constexpr std::uint32_t kNumMathThreads = 256;
  static constexpr std::uint32_t kProducerWarp = 8;
  static constexpr std::uint32_t kFirstStorerThread = 288;
  static constexpr std::uint32_t kMaxStorerThreads = 224;  // a CTA of at most 512 threads
  // Shared memory: the ring (1024-aligned for the 128B swizzle), then 2 * kStages mbarriers and two words
  // (mainloop_done, storer go flag), plus 1 KiB so the base can be aligned up at run time.
  static constexpr std::uint32_t kBarrierOffset = kStages * kStageBytes;         // 128 KiB
  static constexpr std::uint32_t kFlagsOffset = kBarrierOffset + 2 * kStages * 8;
  static constexpr std::uint32_t kSmemBytes = kFlagsOffset + 16 + 1024;
  static_assert(kSmemBytes <= 227u * 1024u, "the loaded kernel must fit one H100/H200 SM's shared memory");
};

// The GEMM and its schedule. A and B are [num_blocks * 128][k_elems] bf16, row-major (K-major operands);
// C is [num_blocks][128][128] fp32. CTA c runs tiles j = 0 .. tiles_per_cta-1, the virtual tile
// v = c + j * num_ctas, on operand block v % num_blocks: C[b] = A[b rows] * B[b rows]^T (a "diagonal" GEMM,
// so consecutive tiles use distinct operand blocks). Working set: num_blocks * 2 * 128 * k_elems * 2 bytes;
// a small num_blocks keeps it in L2, a large one streams it from HBM. Only the first visit of a block
// (v < num_blocks) writes C, so each C block has one writer.
struct LoadedProblem {
  std::uint32_t num_blocks = 8;
  std::uint32_t k_elems = 512;       // GEMM K, a multiple of kBlockK
  std::uint32_t tiles_per_cta = 32;
  std::uint32_t num_ctas = 1;        // K_SM

  XS_HD std::uint32_t k_blocks() const { return k_elems / LoadedShape::kBlockK; }
  XS_HD std::uint64_t virtual_tile(std::uint32_t cta, std::uint32_t j) const {
    return static_cast<std::uint64_t>(cta) + static_cast<std::uint64_t>(j) * num_ctas;
  }
  XS_HD std::uint32_t tile_block(std::uint32_t cta, std::uint32_t j) const {
    return static_cast<std::uint32_t>(virtual_tile(cta, j) % num_blocks);
  }
  XS_HD bool writes_output(std::uint32_t cta, std::uint32_t j) const { return virtual_tile(cta, j) < num_blocks; }
  XS_HD std::uint64_t operand_rows() const { return static_cast<std::uint64_t>(num_blocks) * LoadedShape::kBlockM; }
  XS_HD std::uint64_t working_set_bytes() const { return 2 * operand_rows() * k_elems * 2; }
  XS_HD std::uint64_t output_elems() const {
    return static_cast<std::uint64_t>(num_blocks) * LoadedShape::kBlockM * LoadedShape::kBlockN;
  }
};

// The storers' claim: CTA p's bursts are global bursts base_p .. base_p + n_p - 1 of BurstLayout's ring
// (producer p = CTA p, B bytes each, fresh contiguous slices or scattered 256-B rows; layout.cuh). Burst
// counts differ per CTA (each stores until its own mainloop ends), so the last writer of a slot is per
// producer: the largest b < n_p with b = slot (mod num_slots), as last_row_writer does for rows.
XS_HD bool last_slice_writer(const BurstLayout& layout, std::uint64_t num_bursts_written, std::uint32_t slot,
                             std::uint64_t* burst_idx) {
  if (slot >= num_bursts_written) return false;
  *burst_idx = slot + (num_bursts_written - 1 - slot) / layout.num_slots * layout.num_slots;
  return true;
}

// The storers' decision before burst b of a launch (the leader's; the go word passes it to the others). Burst 0
// is issued whatever the mainloop's progress, so every CTA of a launch with stores claims at least one burst at
// any relative speed of its warps: a sanitizer or the warp scheduler may run the storers only after the
// mainloop ended. Later bursts only while the mainloop runs, and never past the cap.
XS_HD bool storer_issues_burst(std::uint32_t burst_idx, std::uint32_t max_bursts, bool mainloop_done) {
  return burst_idx < max_bursts && (burst_idx == 0 || !mainloop_done);
}

// The storers' loop without the stores: the bursts a CTA issues when its leader first sees the mainloop done
// in the check before burst `done_seen_at` (0: already done before the first check). CPU tests enumerate it.
XS_HD std::uint32_t storer_bursts_issued(std::uint32_t max_bursts, std::uint64_t done_seen_at) {
  std::uint32_t b = 0;
  while (storer_issues_burst(b, max_bursts, b >= done_seen_at)) ++b;
  return b;
}

// One CTA's burst count in the records of one launch, judged against what the kernel guarantees at any speed.
enum class StorerCount : std::uint32_t {
  kValid = 0,   // 1 .. max_bursts - 1: the storers stopped when the mainloop ended (0 in a launch without stores)
  kAtCap = 1,   // max_bursts: the storers ran out of bursts; the CTA's later tiles may have run without stores
  kNone = 2,    // 0 in a launch with stores: burst 0 was not issued (a kernel or record bug)
  kOverCap = 3, // more than max_bursts: the records are corrupt
};
XS_HD StorerCount judge_storer_count(std::uint32_t num_bursts, std::uint32_t max_bursts) {
  if (max_bursts == 0) return num_bursts == 0 ? StorerCount::kValid : StorerCount::kOverCap;
  if (num_bursts == 0) return StorerCount::kNone;
  if (num_bursts > max_bursts) return StorerCount::kOverCap;
  return num_bursts == max_bursts ? StorerCount::kAtCap : StorerCount::kValid;
}

// Device status word (mapped host memory, readable after a trap): which spin-wait timed out.
enum class LoadedStatus : std::uint32_t {
  kOk = 0,
  kStageFullTimeout = 1,   // math warps waiting for a TMA stage (full mbarrier)
  kStageEmptyTimeout = 2,  // TMA producer waiting for the math warps to free a stage (empty mbarrier)
};
XS_HD const char* loaded_status_flag(std::uint32_t status) {
  switch (static_cast<LoadedStatus>(status)) {
    case LoadedStatus::kOk: return "none";
    case LoadedStatus::kStageFullTimeout: return "stage full mbarrier (math warps waiting for TMA)";
    case LoadedStatus::kStageEmptyTimeout: return "stage empty mbarrier (TMA producer waiting for the math warps)";
  }
  return "unknown status code";
}

}  // namespace xs::kernels::remote_store
