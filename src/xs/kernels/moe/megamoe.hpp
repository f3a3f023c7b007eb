// xstage kernels layer (moe): public host API of the persistent sm_90a MegaMoE kernel (paper sections
// 2.2, 4.2, 5.2): Dispatch -> Linear-1 (gate, up) -> SwiGLU x top-k weight -> Linear-2 -> Combine, the
// Combine rows written by the Linear-2 epilogue's storer warps with 16-byte stores to dst[rank]. One
// kernel family; the schedule (ExpertWave, Interleaved, Serial) is a template parameter and nothing else
// differs between schedules.
#pragma once
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "xs/kernels/moe/config.hpp"
#include "xs/kernels/moe/layout.cuh"

namespace xs::kernels::moe {

enum class ScheduleKind : int { kExpertWave = 0, kInterleaved = 1, kSerial = 2 };
inline constexpr int kNumScheduleKinds = 3;
inline const char* schedule_kind_name(ScheduleKind k) {
  return k == ScheduleKind::kExpertWave ? "expert_wave" : k == ScheduleKind::kInterleaved ? "interleaved" : "serial";
}

// Which stages a launch runs. kAll is the MoE layer. The phase launches measure one GEMM phase whole, as a
// grouped GEMM library would run it (no Dispatch, no waits): kLinear1 runs every Linear-1 tile on a pool an
// earlier kAll launch dispatched; kLinear2 every Linear-2 tile (with its Combine stores) on the intermediates
// an earlier kAll launch wrote. A phase launch needs its own zeroed sync_words (its epochs count apart).
enum class KernelPhases : int { kAll = 0, kLinear1 = 1, kLinear2 = 2 };
inline const char* kernel_phases_name(KernelPhases p) {
  return p == KernelPhases::kAll ? "all" : p == KernelPhases::kLinear1 ? "linear1" : "linear2";
}

struct ScheduleChoice {
  ScheduleKind kind = ScheduleKind::kInterleaved;
  int experts_per_wave = 1;  // ExpertWave
  int lead_rows = 1;         // Interleaved: D >= 1 (D = 0 can deadlock an instance on itself)
};

// Written by a thread whose spin-wait timed out, just before it traps (mapped pinned host memory).
enum class WaitFlag : std::uint32_t {
  kStageFull, kStageEmpty, kSlotFull, kSlotEmpty, kDispatchFlag, kL1Done, kCount
};
struct WaitTimeoutReport {
  std::uint32_t valid = 0;
  std::uint32_t flag = 0;
  std::uint32_t block = 0;
  std::uint32_t thread = 0;
  std::uint32_t tile = 0;     // TileSpace::tile_index, or the row block for dispatch/l1 waits
  std::uint32_t expected = 0; // parity or the counter value waited for
};

struct MegaMoeArgs {
  // Shape of this rank's problem.
  int hidden = 0;            // h, a multiple of b_n
  int intermediate = 0;      // I, 2I a multiple of b_n
  int num_experts = 0;       // experts on this rank (E / P)
  int top_k = 0;
  int tokens_per_rank = 0;   // T: destination rows per rank = T * top_k
  int num_ranks = 1;         // P (emulated or real)
  int num_row_blocks = 0;    // pool rows / 128
  int num_arrivals = 0;      // rows of `arrival`
  int block_n = 128;         // b_n: 128 (built) or 256
  Precision precision = Precision::kBf16;
  EpilogueMode mode = EpilogueMode::kFused;
  ScheduleChoice schedule;
  KernelPhases phases = KernelPhases::kAll;
  // Device tensors (bf16, 16-byte aligned, rows contiguous).
  const void* arrival = nullptr;  // [num_arrivals][h]        tokens as they arrived (Dispatch input)
  void* pool = nullptr;           // [num_row_blocks*128][h]   expert-sorted pool (Dispatch output)
  const void* w1 = nullptr;       // [E][2I][h]  row 2j = gate_j, row 2j+1 = up_j (pre-interleaved)
  const void* w2 = nullptr;       // [E][h][I]
  void* act = nullptr;            // [num_row_blocks*128][I]   SwiGLU x weight, bf16 (L1 output)
  // fp8 W8A8 (precision kFp8, b_n = 128): arrival, pool, w1, w2 and act hold e4m3 (1 byte per element)
  // instead of bf16; an element's value is e4m3 x its fp32 scale. The Combine rows stay bf16.
  const float* arrival_scale = nullptr;  // [num_arrivals][h/128]  per token, per 128-K group
  float* pool_scale = nullptr;           // [h/128][pool rows]     written by Dispatch (group-major: one
                                         //                        k-block's 128 row scales are contiguous)
  const float* w1_scale = nullptr;       // [E][2I/128][h/128]     per 128 x 128 block of the interleaved W1
  const float* w2_scale = nullptr;       // [E][h/128][I/128]      per 128 x 128 block of W2
  float* act_scale = nullptr;            // [I/64][pool rows]      per row, per 64 intermediate columns (one
                                         //                        L1 tile's b_n/2): s = amax/448 (1 if amax is
                                         //                        0), q = e4m3_rn_satfinite(a / s)
  RoutingTables routing;          // device arrays, layout.cuh
  void* dst[kMaxRanks] = {};      // Combine destination of each rank: local HBM, mapped host, peer
  std::uint64_t dst_bytes[kMaxRanks] = {};
  std::uint32_t* sync_words = nullptr;  // SyncLayout words, zeroed once, never reset between launches
  std::uint64_t sync_bytes = 0;
  TileRecord* records = nullptr;  // num_tiles() records, or nullptr (no instrumentation)
  std::uint64_t records_bytes = 0;

  TileSpace tile_space() const {
    TileSpace t;
    t.num_row_blocks = static_cast<std::uint32_t>(num_row_blocks);
    t.l1_tiles_per_row = block_n > 0 ? static_cast<std::uint32_t>(2 * intermediate / block_n) : 0;
    t.l2_tiles_per_row = block_n > 0 ? static_cast<std::uint32_t>(hidden / block_n) : 0;
    return t;
  }
};

// Throws xs::input_error (exit 2) naming the field: h or I not a multiple of the tile, an unbuilt b_n or
// precision, K_SM above the SM count, D < 1, experts_per_wave < 1, null/misaligned pointers, buffers
// smaller than what the launch writes. Host only; touches no device state except reading the SM count.
void validate_megamoe(const MegaMoeConfig& config, const MegaMoeArgs& args);

// Validates, encodes the TMA descriptors, checks co-residency (one CTA per SM for every participating SM)
// and enqueues one persistent launch, cooperative unless config.cooperative_launch is off (then the
// occupancy check is the only refusal). Throws xs::Error (exit 3) on a CUDA failure, also when the driver
// refuses the cooperative launch. Stream-capturable after one launch outside capture.
void launch_megamoe(const MegaMoeConfig& config, const MegaMoeArgs& args, cudaStream_t stream);

// After a failed launch: "timeout waiting on 'l1_done' (block 3, thread 0, tile 17, expected 64)", or "".
std::string megamoe_timeout_message();

// Grid size a launch will use on the current device (config.num_ctas or the SM count).
int megamoe_grid_size(const MegaMoeConfig& config);

}  // namespace xs::kernels::moe
