// xstage kernels layer (attention): the FlashAttention-forward tile shape and launch choices as plain
// data. Host and device read the same constants; src/xs/attention's model and the CPU tests read them too.
#pragma once
#include <cstdint>
#include <string_view>

namespace xs::kernels::attention {

// Name -> value of an enum whose values are 0 .. kCount - 1, named by name_of: true and *out; anything else ->
// false, *out untouched. The parse_* functions below are this with their table.
template <typename E, int kCount>
inline bool parse_enum_name(std::string_view name, const char* (*name_of)(E), E* out) {
  for (int i = 0; i < kCount; ++i) {
    if (name == name_of(static_cast<E>(i))) {
      *out = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

// What a consumer warpgroup does with a finished output tile (paper section 5.3's variants).
enum class EpilogueMode : int {
  kLocal = 0,               // FA-only: O[head][token][d] in local HBM
  kFused = 1,               // X-Stage-Fused: 16-byte stores to the Ulysses owner's buffer, then next tile
  kCompletionCoupled = 2,   // counterfactual: as kFused, then fence.sc.sys and wait before the next tile
};
inline constexpr int kNumEpilogueModes = 3;
inline const char* epilogue_mode_name(EpilogueMode mode) {
  switch (mode) {
    case EpilogueMode::kLocal: return "local";
    case EpilogueMode::kFused: return "fused";
    case EpilogueMode::kCompletionCoupled: return "completion_coupled";
  }
  return "?";
}

// How the two consumer warpgroups share the SM's tensor cores in the Q-loop (flash_attention_kernel.cu,
// pingpong.cuh). Every schedule computes the same instructions on the same data in each warpgroup, so all
// three write the same bits; they differ only in when a warpgroup may issue its wgmmas.
//   kBaseline      each warpgroup issues as soon as its K/V tiles are there (intra-warpgroup overlap only:
//                  S_j = Q K_j^T and O += P_{j-1} V_{j-1} issued together, softmax(S_j) while PV runs).
//                  The measured, proven path.
//   kPingPong      + inter-warpgroup ping-pong (FlashAttention-3's scheduler barrier): the issue of each
//                  loop step's S_j + PV_{j-1} pair alternates between the warpgroups through two named
//                  barriers, so one warpgroup's softmax runs while the other's GEMMs occupy the tensor cores.
//                  A tile's first S_0 and last PV stay outside the turn (as FA3 does).
//   kPingPongFull  as kPingPong, and the first S_0 and the last PV of every tile take the turn too.
enum class MainloopSchedule : int { kBaseline = 0, kPingPong = 1, kPingPongFull = 2 };
inline constexpr int kNumMainloopSchedules = 3;
inline const char* mainloop_schedule_name(MainloopSchedule schedule) {
  switch (schedule) {
    case MainloopSchedule::kBaseline: return "baseline";
    case MainloopSchedule::kPingPong: return "pingpong";
    case MainloopSchedule::kPingPongFull: return "pingpong_full";
  }
  return "?";
}
// "baseline" | "pingpong" | "pingpong_full" -> true and *out; anything else -> false, *out untouched.
inline bool parse_mainloop_schedule(std::string_view name, MainloopSchedule* out) {
  return parse_enum_name<MainloopSchedule, kNumMainloopSchedules>(name, mainloop_schedule_name, out);
}
inline constexpr const char* kMainloopScheduleNames = "baseline, pingpong, pingpong_full";

// How the persistent CTAs pick their output tiles (scheduler.cuh). Both write the same bits; they differ
// only in which CTA computes which tile.
//   kStatic   CTA c runs tiles c, c + grid, c + 2 grid, ...: the launch ends with its slowest CTA.
//   kDynamic  CTA c runs tile c first, then takes the next unclaimed tile from a global counter
//             (atomicAdd) while its current tile loads: a CTA on a slower SM takes fewer tiles.
enum class TileSchedulerKind : int { kStatic = 0, kDynamic = 1 };
inline constexpr int kNumTileSchedulerKinds = 2;
inline const char* tile_scheduler_name(TileSchedulerKind kind) {
  return kind == TileSchedulerKind::kStatic ? "static" : kind == TileSchedulerKind::kDynamic ? "dynamic" : "?";
}
inline bool parse_tile_scheduler(std::string_view name, TileSchedulerKind* out) {
  return parse_enum_name<TileSchedulerKind, kNumTileSchedulerKinds>(name, tile_scheduler_name, out);
}
inline constexpr const char* kTileSchedulerNames = "static, dynamic";

// The cache operator of the epilogue's 16-byte output stores (every epilogue mode, so FA-only and fused stay
// the same work). Both write the same bits.
//   kDefault    st.global (.wb): the output lines stay in L2 like any other.
//   kStreaming  st.global.cs: allocated evict-first, so a launch's output does not displace the next launch's
//               Q/K/V in L2 (issue 13: an FA launch right after another one runs ~12% longer at M = 8K).
enum class StoreCachePolicy : int { kDefault = 0, kStreaming = 1 };
inline constexpr int kNumStoreCachePolicies = 2;
inline const char* store_cache_policy_name(StoreCachePolicy policy) {
  return policy == StoreCachePolicy::kDefault ? "default" : policy == StoreCachePolicy::kStreaming ? "streaming" : "?";
}
inline bool parse_store_cache_policy(std::string_view name, StoreCachePolicy* out) {
  return parse_enum_name<StoreCachePolicy, kNumStoreCachePolicies>(name, store_cache_policy_name, out);
}
inline constexpr const char* kStoreCachePolicyNames = "default, streaming";

// Compile-time tile shape of the sm_90a kernel, one instantiation per built head dim (kBuiltHeadDims).
//   b_m = 128 query rows per CTA tile, split 2 x 64 over the consumer warpgroups (wgmma M = 64);
//   b_n = 128 keys per KV tile; a 2-stage K ring and a 2-stage V ring.
template <int D>
struct TileShapeD {
  static_assert(D == 64 || D == 128, "head dims 64 and 128 are built");
  static constexpr int kHeadDim = D;            // d
  static constexpr int kBlockM = 128;           // b_m, rows per output tile
  static constexpr int kBlockN = 128;           // b_n, keys per KV tile
  static constexpr int kStages = 2;             // K/V ring depth
  static constexpr int kNumConsumerWarpgroups = 2;
  static constexpr int kRowsPerConsumer = kBlockM / kNumConsumerWarpgroups;  // 64 = wgmma M
  static constexpr int kNumThreads = 128 * (1 + kNumConsumerWarpgroups);     // producer WG + consumers
  static constexpr int kNumConsumerThreads = 128 * kNumConsumerWarpgroups;
  // setmaxnreg budget: 40*128 + 232*256 = 64512 <= 65536 registers per SM (one CTA per SM).
  static constexpr int kProducerRegisters = 40;
  static constexpr int kConsumerRegisters = 232;
  static constexpr int kElemBytes = 2;          // bf16 in and out
  // TMA box: 64 columns (128 bytes, the 128B-swizzle span) x rows; a tile is d / 64 column halves.
  static constexpr int kSwizzleCols = 64;
  static constexpr int kNumColHalves = kHeadDim / kSwizzleCols;
  static constexpr int kAccumulators = kHeadDim / 2;  // O fragment floats per consumer thread (64 x d / 128)
};
inline constexpr int kBuiltHeadDims[] = {64, 128};
inline constexpr bool head_dim_is_built(int d) { return d == 64 || d == 128; }
// The head dim 128 shape: the default everything else (model, reports) reads.
using TileShape = TileShapeD<128>;

// The split tail's default pieces (FlashAttentionConfig::tail_kv_splits; the bench's --fa-tail-splits).
inline constexpr int kDefaultTailKvSplits = 1;

// Run-time launch choices (CUB-style policy: plain data, no behaviour).
struct FlashAttentionConfig {
  int num_ctas = 0;                             // persistent grid; 0 = one per SM of the current device
  std::uint64_t timeout_cycles = 1ull << 34;    // spin-wait limit (about 8 s at 2 GHz), then trap
  MainloopSchedule schedule = MainloopSchedule::kBaseline;  // consumer warpgroups' wgmma issue order
  TileSchedulerKind tile_scheduler = TileSchedulerKind::kDynamic;  // which CTA computes which tile
  StoreCachePolicy store_cache = StoreCachePolicy::kDefault;        // the output stores' cache operator
  // CTAs per thread-block cluster that share every K/V tile (kKvClusterSizes). 1: each CTA loads its own.
  // 2: the two CTAs of a cluster run the two m-blocks of one head in step; each loads half of every K/V
  // tile (64 of its 128 keys) and multicasts it to both, so the K/V traffic from L2 to the SMs halves.
  // Needs M a multiple of 2 b_m and the baseline schedule (the only one built with clusters).
  int kv_cluster_size = 1;
  // Heads per band of the tile order (scheduler.cuh): 1 (default) = the m-block-fastest order; 0 = auto_heads_per_band
  // on the device's L2 size; else a divisor of the number of heads. Measured on the H200 side by side with cuDNN
  // (results/h200/archive/2026-12-02-11fe4a5/fa_a2a-bands/): auto lost 1.3% at 8K and 0.8% at 16K-32K (K/V clusters 2), so 1 stays.
  int heads_per_band = 1;
  // A diagnostic (issue 13, the 8K gap): the consumer warpgroup's named barrier after its output stores, which
  // instrumented launches always take (to stamp the stores' end), also in uninstrumented ones. Same bits.
  bool store_barrier = false;
  // Split tail (scheduler.cuh; issue 13, the idle tail of the last round: 6-13% of the CTA time at M = 8K,
  // results/h200/archive/2026-12-02-fbcbd97/fa_a2a-by-position/): the last tail_split_units tile units of the order run in
  // tail_kv_splits pieces over disjoint KV ranges; the warpgroup that finishes a tile's last piece combines the
  // others' partial O, row max and row sum (split_combine.cuh) and stores the tile. 1: off (every tile whole).
  // Summation order differs from the whole tile's, so the bits may differ in the last place.
  int tail_kv_splits = kDefaultTailKvSplits;
  int tail_split_units = 0;  // 0: one per cluster of the grid (the last round); else that many (at most all)
};

inline constexpr int kMaxTailKvSplits = 8;

// The split tail's resolved sizes (scheduler.cuh kv_splits, split_units) for a launch of num_tile_units units
// of num_kv_tiles KV tiles each on num_clusters clusters: equally long pieces (the largest divisor of the KV
// tiles up to tail_kv_splits: the kernel's Q-loop count must be a kernel parameter); units capped at all.
struct TailSplit {
  int kv_splits = 1;
  int split_units = 0;
};
inline constexpr TailSplit resolve_tail_split(int tail_kv_splits, int tail_split_units, int num_tile_units,
                                              int num_clusters, int num_kv_tiles) {
  int splits = tail_kv_splits < num_kv_tiles ? tail_kv_splits : num_kv_tiles;
  while (splits > 1 && num_kv_tiles % splits != 0) --splits;
  if (splits <= 1 || num_tile_units <= 0) return TailSplit{1, 0};
  const int wanted = tail_split_units > 0 ? tail_split_units : (num_clusters > 0 ? num_clusters : 1);
  return TailSplit{splits, wanted < num_tile_units ? wanted : num_tile_units};
}

// The widest band of heads whose K and V (2 x M x d x 2 bytes per head) fit in kHeadBandL2Fraction of the
// L2 cache: co-running CTAs then read every K/V tile of the band from L2, and write contiguous Ulysses rows.
// The largest divisor of num_heads that fits; 1 when even one head does not. Host and device, CPU-tested.
inline constexpr double kHeadBandL2Fraction = 0.75;
inline constexpr int auto_heads_per_band(int num_heads, int seq_len, int head_dim, long long l2_bytes) {
  const double kv_bytes_per_head = 2.0 * seq_len * head_dim * 2.0;
  for (int hb = num_heads; hb > 1; --hb)
    if (num_heads % hb == 0 && hb * kv_bytes_per_head <= kHeadBandL2Fraction * static_cast<double>(l2_bytes))
      return hb;
  return 1;
}
inline constexpr int kKvClusterSizes[] = {1, 2};
inline constexpr int kMaxKvClusterSize = 2;
inline constexpr bool kv_cluster_size_is_built(int n) { return n == 1 || n == 2; }

}  // namespace xs::kernels::attention
