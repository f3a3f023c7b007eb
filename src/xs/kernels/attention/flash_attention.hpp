// xstage kernels layer (attention): public host API of the sm_90a FlashAttention forward with the
// Ulysses post-attention All-to-All fused into its epilogue (paper sections 4.3, 5.3). One kernel, three
// epilogue modes (config.hpp): FA-only, X-Stage-Fused, completion-coupled counterfactual.
#pragma once
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "xs/kernels/attention/config.hpp"
#include "xs/kernels/attention/layout.cuh"

namespace xs::kernels::attention {

inline constexpr int kMaxRanks = 16;

// Written by a thread whose mbarrier wait timed out, just before it traps (mapped pinned host memory,
// so it stays readable after the launch failed). A kernel with wgmma cannot printf: the call would make
// ptxas serialize every wgmma (warning C7510).
enum class WaitFlag : std::uint32_t { kQFull, kQEmpty, kKFull, kKEmpty, kVFull, kVEmpty, kUnitFull, kUnitEmpty, kCount };
struct WaitTimeoutReport {
  std::uint32_t valid = 0;  // 1 once written
  std::uint32_t flag = 0;   // WaitFlag
  std::uint32_t block = 0;
  std::uint32_t thread = 0;
  std::uint32_t tile = 0;
  std::uint32_t parity = 0;
};

struct FlashAttentionArgs {
  // [num_heads][seq_len][head_dim] bf16, 16-byte aligned, rows contiguous.
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;                 // kLocal: O, same layout as Q (ignored by the other modes)
  std::uint64_t out_bytes = 0;         // capacity of `out`, checked before launch
  int num_heads = 0;                   // heads this rank computes (H/P after the pre-attention A2A)
  int seq_len = 0;                     // M, every token of the sequence
  int head_dim = 128;                  // d: 64 or 128 (kBuiltHeadDims)
  float softmax_scale = 0.0f;          // 0: 1/sqrt(d)
  EpilogueMode mode = EpilogueMode::kLocal;
  // Ulysses destination (kFused, kCompletionCoupled): rank r receives
  // dst[r] = [seq_len/num_ranks][dst_num_heads][head_dim] bf16 (layout.cuh, UlyssesLayout).
  int num_ranks = 1;                   // P
  int dst_num_heads = 0;               // 0: num_heads (compact, single-sender emulation)
  int dst_head_offset = 0;             // this sender's first head in a destination row
  void* dst[kMaxRanks] = {};           // device-visible: local HBM, peer-mapped or mapped pinned host memory
  std::uint64_t dst_bytes[kMaxRanks] = {};  // capacity of each dst[r], checked before launch
  // Optional instrumentation: device memory of flash_attention_records_bytes (2 records per tile without a split
  // tail; nullptr: off).
  TileRecord* records = nullptr;
  std::uint64_t records_bytes = 0;

  UlyssesLayout ulysses() const {
    UlyssesLayout u;
    u.seq_len = static_cast<std::uint32_t>(seq_len);
    u.num_ranks = static_cast<std::uint32_t>(num_ranks);
    u.num_heads = static_cast<std::uint32_t>(num_heads);
    u.dst_num_heads = static_cast<std::uint32_t>(dst_num_heads > 0 ? dst_num_heads : num_heads);
    u.dst_head_offset = static_cast<std::uint32_t>(dst_head_offset);
    u.head_dim = static_cast<std::uint32_t>(head_dim);
    return u;
  }
  std::uint32_t num_tiles() const {
    return static_cast<std::uint32_t>(num_heads) * static_cast<std::uint32_t>(seq_len / TileShape::kBlockM);
  }
};

// Throws xs::input_error (exit 2) naming the field: M not a multiple of b_m = 128, a head dim other than 64 or
// 128, P not dividing M or above kMaxRanks, heads out of range, a null or misaligned pointer, a buffer
// smaller than what the launch writes. Host only; touches no device state.
void validate_flash_attention(const FlashAttentionConfig& config, const FlashAttentionArgs& args);

// Validates, encodes the TMA descriptors (cuTensorMapEncodeTiled via cudaGetDriverEntryPointByVersion:
// no libcuda link), raises the kernel's dynamic shared-memory limit and enqueues one persistent launch.
// Throws xs::Error (exit 3) on any CUDA failure, including the launch error. Stream-capturable.
void launch_flash_attention(const FlashAttentionConfig& config, const FlashAttentionArgs& args,
                            cudaStream_t stream);

// After a failed launch: "timeout waiting on mbarrier 'k_full' (block 3, thread 128, tile 17, parity 1)",
// or "" when no wait timed out. Clears the report.
std::string flash_attention_timeout_message();

// Grid size a launch will use on the current device (config.num_ctas or the SM count, at most num_tiles;
// with kv_cluster_size 2 a multiple of 2 and at most twice the clusters that fit on the device at once).
int flash_attention_grid_size(const FlashAttentionConfig& config, const FlashAttentionArgs& args);

// Bytes of TileRecords an instrumented launch writes on the current device: 2 per tile, or with a split tail
// (config.tail_kv_splits > 1) 2 per unit and cluster rank (scheduler.cuh record_slot). Validates first.
std::uint64_t flash_attention_records_bytes(const FlashAttentionConfig& config, const FlashAttentionArgs& args);

// Heads per band of the tile order a launch will use (config.heads_per_band, or auto_heads_per_band on the
// current device's L2 size when it is 0).
int flash_attention_heads_per_band(const FlashAttentionConfig& config, const FlashAttentionArgs& args);

}  // namespace xs::kernels::attention
