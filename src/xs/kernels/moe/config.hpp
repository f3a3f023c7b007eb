// xstage kernels layer (moe): the MegaMoE tile shapes, epilogue modes and launch choices as plain data.
// Host and device read the same constants; src/xs/moe's model, the schedulers' CPU tests and the launcher
// read them too (paper sections 4.2, 5.2; ../shared/design/megamoe.md section 3).
#pragma once
#include <cstdint>

namespace xs::kernels::moe {

// What the storer warps do with a finished Linear-2 tile (the paper's contrast, section 4.2).
enum class EpilogueMode : int {
  kFused = 0,              // storers issue the Combine rows and go on (post-issue progress through X-Stage)
  kCompletionCoupled = 1,  // storers issue, then fence.sc.sys before the staging slot is released
};
inline constexpr int kNumEpilogueModes = 2;
inline const char* epilogue_mode_name(EpilogueMode mode) {
  return mode == EpilogueMode::kFused ? "fused" : mode == EpilogueMode::kCompletionCoupled ? "completion_coupled" : "?";
}

// Precision of the GEMM operands (the Combine rows are bf16 in both).
enum class Precision : int { kBf16 = 0, kFp8 = 1 };
inline const char* precision_name(Precision p) { return p == Precision::kBf16 ? "bf16" : "fp8"; }

// Compile-time tile shape. b_m = 128 pool rows (one scheduler row block), b_n = kBlockN output columns of
// the GEMM, BK = 64 bf16 (128 B, the 128B-swizzle span) per k-block.
//   Linear-1 tile (p, n1): X_pool[p] [128 x h] * W1_e[n1 block]^T [h x b_n] -> b_n accumulator columns =
//     b_n/2 (gate, up) pairs -> b_n/2 columns of the intermediate after SwiGLU x top-k weight.
//   Linear-2 tile (p, n2): act[p] [128 x I] * W2_e[n2 block]^T [I x b_n] -> b_n columns of the output,
//     sent as 128 Combine row segments of b_n * 2 bytes (256 B at b_n = 128).
template <int kBlockNCols>
struct TileShape {
  static constexpr int kBlockM = 128;            // b_m
  static constexpr int kBlockN = kBlockNCols;    // b_n (128 or 256)
  static constexpr int kBlockK = 64;             // bf16 elements per k-block (128 B)
  static constexpr int kStages = kBlockN == 128 ? 5 : 3;  // TMA ring depth (227 KiB budget)
  static constexpr int kNumMathWarpgroups = 2;   // cooperative: rows [64c, 64c + 64) each (wgmma M = 64)
  static constexpr int kNumStorerWarps = 2;
  // Threads: warpgroup 0 = producer warp (TMA) + 2 storer warps + 1 idle warp; warpgroups 1, 2 = math.
  static constexpr int kNumThreads = 128 * (1 + kNumMathWarpgroups);
  static constexpr int kNumMathThreads = 128 * kNumMathWarpgroups;
  static constexpr int kNumStorerThreads = 32 * kNumStorerWarps;
  static constexpr int kElemBytes = 2;
  static constexpr int kL1OutCols = kBlockN / 2;  // intermediate columns one L1 tile produces
  static constexpr int kRowSegmentBytes = kBlockN * kElemBytes;  // one Combine row segment per tile row
  // setmaxnreg budget at b_n = 256 (128 fp32 accumulators per math thread), <= 65536 registers per SM;
  // b_n = 128 keeps the uniform launch-bounds allocation.
  // 72 / 208: at 40 the storer and Dispatch warps spilled (124 B per b_n = 256 instantiation, the spills issue 29
  // named); 72 x 128 + 208 x 256 = 62464, and the math warpgroups' 128 accumulators fit in 208 without spills.
  static constexpr int kSideRegisters = 72;
  static constexpr int kMathRegisters = 208;
};

inline constexpr int kMaxRanks = 16;        // P, emulated or real EP degree
inline constexpr int kMaxLocalExperts = 128; // E / P on this rank

// Run-time launch choices (plain data, no behaviour).
struct MegaMoeConfig {
  int num_ctas = 0;                            // K_SM; 0 = one per SM of the current device
  std::uint64_t timeout_cycles = 1ull << 34;   // every spin-wait traps after this many SM cycles (~8 s)
  // Residency: every CTA spins on flags other CTAs release, so all K_SM CTAs must run at once. true: a
  // cooperative launch (cudaLaunchAttributeCooperative, CUDA programming guide "Grid Synchronization"): the
  // driver starts the grid only with every CTA resident, or refuses it (cudaErrorCooperativeLaunchTooLarge).
  // false: the occupancy check alone (a grid that fits the device but shares it with another kernel can
  // spin on a CTA that has not started); kept only as a fallback where cooperative capture is unavailable.
  bool cooperative_launch = true;
  // Fault injection for the verification tests, never for measurements: Linear-2 tiles skip their wait on
  // l1_done (a planted ordering bug: an L2 tile may read intermediates before its L1 tiles wrote them).
  bool fault_skip_l2_dependency_wait = false;
};

}  // namespace xs::kernels::moe
