// xstage kernels layer (attention): the persistent sm_90a FlashAttention forward (bf16 in/out, fp32
// accumulation, d = 64 or 128, non-causal) with the Ulysses post-attention All-to-All in its epilogue, its
// launcher and its instantiations (one per MainloopSchedule, EpilogueMode and built head dim).
// Its host-only parts: the argument checks in flash_attention_validate.cpp; the tile scheduler, the buffer sizing
// and the per-device buffers in flash_attention_workspace.cpp (shared through flash_attention_internal.hpp).
//
// Warp roles (384 threads, one CTA per SM, setmaxnreg 40 / 232):
//   warpgroup 0      producer: thread 0 issues every TMA load (Q once per tile, K/V per KV tile);
//                    the other 127 threads leave after the register hand-off.
//   warpgroups 1, 2  consumers c = 0, 1: query rows [64c, 64c + 64) of the CTA's 128-row tile; each
//                    runs the Q-loop (mainloop.cuh) and then its own epilogue (epilogue.cuh).
// Pipeline: Q (1 stage) and K, V (2-stage rings), mbarrier full/empty pairs (mainloop.cuh lists counts
// and parities). Tile order: TileSchedulerKind (config.hpp); the producer hands each tile index to the
// consumers through a shared-memory slot. MainloopSchedule (config.hpp) picks when a consumer may issue its wgmmas: kBaseline as
// soon as its tiles are there; the ping-pong schedules take turns through named barriers 3 and 4
// (pingpong.cuh). Tile boundary: the warpgroup that owns the output tile stages it, issues its stores and
// starts the next tile's Q-loop right away; that Q-loop is the post-issue drain window (paper 4.3).
// Shared memory (layout.cuh): Q 32 KiB + K 2 x 32 KiB + V 2 x 32 KiB + staging 2 x 17 KiB + barriers
// = 194 KiB (+1 KiB alignment slack) of the 227 KiB opt-in limit at d = 128; at d = 64 the Q/K/V tiles
// and the staging halve (Q 16 + K 2 x 16 + V 2 x 16 + staging 2 x 9 KiB).
#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include <cuda.h>

#include "xs/kernels/attention/epilogue.cuh"
#include "xs/kernels/attention/flash_attention.hpp"
#include "xs/kernels/attention/flash_attention_internal.hpp"
#include "xs/kernels/attention/mainloop.cuh"
#include "xs/kernels/attention/pingpong.cuh"
#include "xs/kernels/attention/split_combine.cuh"
#include "xs/kernels/common/tensor_map.hpp"
#include "xs/common/error.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::kernels::attention {

// kSplitTail: built with the split tail's pieces and merge (config tail_kv_splits > 1); without it the consumer
// is the whole-tile code alone (every tile [0, M / b_n), no merge path beside the hot loop).
template <EpilogueMode kMode, int D, MainloopSchedule kSchedule, int kCluster, bool kSplitTail>
__device__ __forceinline__ void consumer_loop(const KernelParams& p, std::uint8_t* smem, const Barriers& bars,
                                              std::uint32_t cta_idx, std::uint32_t consumer,
                                              std::uint32_t thread) {
  using SmemLayout = SmemLayoutD<D>;
  constexpr std::uint32_t S = TileShape::kStages;
  const std::uint32_t smem_base = ptx::smem_u32(smem);
  // This warpgroup's 64 Q rows: +64 rows x 128 B inside each column half (a multiple of the 1024-B atom).
  const std::uint32_t q_addr = smem_base + SmemLayout::kQOffset + consumer * TileShape::kRowsPerConsumer * 128;
  const std::uint32_t staging_addr = smem_base + SmemLayout::staging_offset(static_cast<int>(consumer));
  const bool instrument = p.records != nullptr;
  const std::uint32_t arrival_addr = smem_base + SmemLayout::kSplitArrivalOffset + 4 * consumer;
  // Ping-pong turns (pingpong.cuh): every loop step's S_j + PV_{j-1} issue, and with kPingPongFull also a
  // tile's first S_0 and last PV. kBaseline compiles none of it (its code is the same as before the switch).
  constexpr bool kTurnSteps = kSchedule != MainloopSchedule::kBaseline;
  constexpr bool kTurnEnds = kSchedule == MainloopSchedule::kPingPongFull;
  const IssueTurn turn{consumer};
  if constexpr (kTurnSteps) turn.start(kTurnEnds || p.num_kv_tiles > 1);  // ping-pong: no split tail (validated)

  float o[TileShapeD<D>::kAccumulators];
  float s[64];
  std::uint32_t pf[32];
  std::uint32_t kv_iter = 0;
  // Tiles come through the producer's slot (mainloop.cuh producer_loop, either tile scheduler): written
  // before it arms q_full, rewritten only after this tile's q_empty; past the last tile, the loop ends. The
  // wait for the next tile's Q sits at the bottom of the loop (a rotated loop: with the wait at the top,
  // ptxas spills 200-240 bytes of the d = 128 consumers, CUDA 13.0).
  const std::uint32_t slot = tile_slot_addr<D>(smem_base);
  TileStamps stamps;
  auto stamp_tile_start = [&] {  // a tile starts before its wait for Q
    if (instrument && thread == 0) {
      stamps.qloop_start_cycles = ptx::clock64_cycles();
      stamps.qloop_start_ns = ptx::globaltimer_ns();
    }
  };
  std::uint32_t local_idx = 0;
  stamp_tile_start();
  wait_barrier(p, bars.q_full, 0, WaitFlag::kQFull, p.scheduler.first_tile(cta_idx));
  for (std::uint32_t tile = ptx::ld_shared_b32(slot); p.scheduler.valid(tile); ++local_idx) {
    const TileCoord coord = p.scheduler.coord(tile);
    const bool last_tile = ptx::ld_shared_b32(slot + 4) == 0;  // the CTA's last turns
    // The unit's KV range (whole tile: [0, M / b_n); split tail: one piece of it, scheduler.cuh).
    // The Q-loop's trip count must be provably warp-uniform, or the loop's wgmma descriptors leave the uniform
    // datapath (the KV ring position carried from tile to tile turns per-thread): a count computed from the
    // unit read out of shared memory did that (48 R2UR per iteration against 16, 10-14% more cycles per launch,
    // f9798235 and e936ef2; a __shfl_sync broadcast of the unit did not help). So: whether this unit is a piece
    // comes from a warp vote (uniform by construction), and the count is one of two kernel parameters (the
    // pieces are equally long: resolve_tail_split takes a divisor of the KV tiles).
    const std::uint32_t unit = kSplitTail ? ptx::ld_shared_b32(slot + 8) : 0u;
    const bool piece = kSplitTail && __all_sync(0xFFFFFFFFu, unit >= p.first_piece_unit);
    const std::uint32_t num_kv = piece ? p.piece_kv_tiles : p.num_kv_tiles;
    if (instrument) {
      stamps.record_slot = kSplitTail ? ptx::ld_shared_b32(slot + 12) : tile;
      stamps.kv_begin = kSplitTail ? p.scheduler.kv_begin(unit) : 0u;
      stamps.kv_count = num_kv;
    }
#pragma unroll
    for (int i = 0; i < TileShapeD<D>::kAccumulators; ++i) o[i] = 0.0f;
    float m[2] = {-INFINITY, -INFINITY};
    float l[2] = {0.0f, 0.0f};
    float corr[2];

    // KV tile 0: S_0, softmax, P_0 (O is still zero, nothing to rescale).
    std::uint32_t stage = kv_iter % S;
    wait_barrier(p, bars.k_full + stage, (kv_iter / S) & 1, WaitFlag::kKFull, tile);
    if constexpr (kTurnEnds) turn.take();
    issue_qk<D>(s, q_addr, smem_base + SmemLayout::k_offset(static_cast<int>(stage)));
    if constexpr (kTurnEnds) turn.pass(false);
    ptx::wgmma_wait_group<0>();
    ptx::fence_operands(s);
    release_kv_stage<kCluster>(bars.k_empty + stage, thread);
    if (num_kv == 1) ptx::mbarrier_arrive(bars.q_empty);
    online_softmax(s, m, l, corr, p.scale_log2);
    convert_p(s, pf);
    std::uint32_t prev_stage = stage;
    std::uint32_t prev_iter = kv_iter;
    ++kv_iter;

    for (std::uint32_t j = 1; j < num_kv; ++j, ++kv_iter) {
      stage = kv_iter % S;
      // Both waits before the first issue, so the softmax never waits on a barrier with wgmmas in flight.
      wait_barrier(p, bars.k_full + stage, (kv_iter / S) & 1, WaitFlag::kKFull, tile);
      wait_barrier(p, bars.v_full + prev_stage, (prev_iter / S) & 1, WaitFlag::kVFull, tile);
      if constexpr (kTurnSteps) turn.take();
      issue_qk<D>(s, q_addr, smem_base + SmemLayout::k_offset(static_cast<int>(stage)));
      issue_pv<D>(o, pf, smem_base + SmemLayout::v_offset(static_cast<int>(prev_stage)));
      if constexpr (kTurnSteps) turn.pass(!kTurnEnds && last_tile && j + 1 == num_kv);
      ptx::wgmma_wait_group<1>();  // S_j done, PV_{j-1} may still run
      ptx::fence_operands(s);
      release_kv_stage<kCluster>(bars.k_empty + stage, thread);
      if (j + 1 == num_kv) ptx::mbarrier_arrive(bars.q_empty);
      online_softmax(s, m, l, corr, p.scale_log2);
      ptx::wgmma_wait_group<0>();  // PV_{j-1} done: O and P's registers are free again
      ptx::fence_operands(o);
      ptx::fence_operands(pf);
      release_kv_stage<kCluster>(bars.v_empty + prev_stage, thread);
      rescale_o(o, corr);
      convert_p(s, pf);
      prev_stage = stage;
      prev_iter = kv_iter;
    }
    wait_barrier(p, bars.v_full + prev_stage, (prev_iter / S) & 1, WaitFlag::kVFull, tile);
    if constexpr (kTurnEnds) turn.take();
    issue_pv<D>(o, pf, smem_base + SmemLayout::v_offset(static_cast<int>(prev_stage)));
    if constexpr (kTurnEnds) turn.pass(last_tile);
    ptx::wgmma_wait_group<0>();
    ptx::fence_operands(o);
    ptx::fence_operands(pf);
    release_kv_stage<kCluster>(bars.v_empty + prev_stage, thread);
    if (instrument && thread == 0) stamps.qloop_end_cycles = ptx::clock64_cycles();

    if (!piece) {
      normalize_o(o, l);
      store_output_tile<kMode, D>(p, o, coord, tile, consumer, thread, staging_addr, stamps, cta_idx, local_idx);
    } else if (finish_split_piece<D>(p, o, m, l, tile, p.scheduler.kv_part(unit), consumer, thread, arrival_addr)) {
      store_output_tile<kMode, D>(p, o, coord, tile, consumer, thread, staging_addr, stamps, cta_idx, local_idx);
    } else if (instrument && thread == 0) {  // a piece that left its partial: no output stores
      const std::uint64_t end_cycles = ptx::clock64_cycles();
      write_tile_record(p, stamps, tile, consumer, cta_idx, local_idx, stamps.qloop_end_cycles, end_cycles,
                        ptx::globaltimer_ns(), 0, true);
    }
    stamp_tile_start();
    wait_barrier(p, bars.q_full, (local_idx + 1) & 1, WaitFlag::kQFull, 0xFFFFFFFFu);  // the next tile: unknown yet
    tile = ptx::ld_shared_b32(slot);
  }
}

template <EpilogueMode kMode, int D, MainloopSchedule kSchedule, int kCluster, bool kSplitTail>
__global__ void __launch_bounds__(TileShape::kNumThreads, 1)
    flash_attention_kernel(const __grid_constant__ KernelParams p, const __grid_constant__ CUtensorMap tm_q,
                           const __grid_constant__ CUtensorMap tm_k, const __grid_constant__ CUtensorMap tm_v) {
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  // 128B-swizzled TMA destinations and wgmma atoms need 1024-byte alignment: round the base up.
  const std::uint32_t raw_addr = ptx::smem_u32(smem_raw);
  std::uint8_t* smem = smem_raw + (((raw_addr + 1023u) & ~1023u) - raw_addr);
  const Barriers bars = barriers_at<D>(smem);
  const std::uint32_t warpgroup = threadIdx.x / 128;
  const std::uint32_t thread = threadIdx.x % 128;
  if (threadIdx.x == 0) {
    init_barriers<kCluster>(bars);
    ptx::prefetch_tensormap(&tm_q);
    ptx::prefetch_tensormap(&tm_k);
    ptx::prefetch_tensormap(&tm_v);
  }
  __syncthreads();
  // Cluster: the peer's barriers are initialised before anyone multicasts into it or arrives on them.
  if constexpr (kCluster > 1) ptx::cluster_sync();
  const std::uint32_t cluster_rank = kCluster > 1 ? ptx::cluster_ctarank() : 0u;
  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<TileShape::kProducerRegisters>();
    if (thread == 0) producer_loop<D, kCluster, kSplitTail>(p, &tm_q, &tm_k, &tm_v, smem, bars, blockIdx.x, cluster_rank);
  } else {
    ptx::setmaxnreg_inc<TileShape::kConsumerRegisters>();
    consumer_loop<kMode, D, kSchedule, kCluster, kSplitTail>(p, smem, bars, blockIdx.x, warpgroup - 1, thread);
  }
  // Cluster: no CTA leaves while the other may still arrive on its barriers or write its mailbox.
  if constexpr (kCluster > 1) ptx::cluster_sync();
}

// ---- Host side ---------------------------------------------------------------------------------------
namespace {

using KernelFn = void (*)(KernelParams, CUtensorMap, CUtensorMap, CUtensorMap);
// Runtime-to-template dispatch: one table indexed by [MainloopSchedule][head dim index][EpilogueMode]
// (kBuiltHeadDims order).
// Clusters of 2 (kv_cluster_size) are built for the baseline schedule only: one more row, kKvClusterKernels;
// the split tail (tail_kv_splits > 1) likewise, with and without clusters: kSplitTailKernels[cluster size - 1].
template <MainloopSchedule kSchedule, int kCluster = 1, bool kSplitTail = false>
constexpr KernelFn kKernelsOf[2][kNumEpilogueModes] = {
    {&flash_attention_kernel<EpilogueMode::kLocal, 64, kSchedule, kCluster, kSplitTail>,
     &flash_attention_kernel<EpilogueMode::kFused, 64, kSchedule, kCluster, kSplitTail>,
     &flash_attention_kernel<EpilogueMode::kCompletionCoupled, 64, kSchedule, kCluster, kSplitTail>},
    {&flash_attention_kernel<EpilogueMode::kLocal, 128, kSchedule, kCluster, kSplitTail>,
     &flash_attention_kernel<EpilogueMode::kFused, 128, kSchedule, kCluster, kSplitTail>,
     &flash_attention_kernel<EpilogueMode::kCompletionCoupled, 128, kSchedule, kCluster, kSplitTail>},
};
constexpr const KernelFn (*kKernels[kNumMainloopSchedules])[kNumEpilogueModes] = {
    kKernelsOf<MainloopSchedule::kBaseline>, kKernelsOf<MainloopSchedule::kPingPong>,
    kKernelsOf<MainloopSchedule::kPingPongFull>};
constexpr const KernelFn (*kKvClusterKernels)[kNumEpilogueModes] = kKernelsOf<MainloopSchedule::kBaseline, 2>;
constexpr const KernelFn (*kSplitTailKernels[kMaxKvClusterSize])[kNumEpilogueModes] = {
    kKernelsOf<MainloopSchedule::kBaseline, 1, true>, kKernelsOf<MainloopSchedule::kBaseline, 2, true>};
static_assert(static_cast<int>(MainloopSchedule::kPingPongFull) + 1 == kNumMainloopSchedules,
              "kKernels rows follow MainloopSchedule");
static_assert(kBuiltHeadDims[0] == 64 && kBuiltHeadDims[1] == 128, "kKernels rows follow kBuiltHeadDims");
int head_dim_index(int head_dim) { return head_dim == 64 ? 0 : 1; }
// The instantiation a (validated) launch runs, and a small id for raise_smem_limit_once.
KernelFn select_kernel(const FlashAttentionConfig& config, const FlashAttentionArgs& a, int* kernel_id) {
  const int dim = head_dim_index(a.head_dim);
  const int mode = static_cast<int>(a.mode);
  constexpr int kWholeTileIds = (kNumMainloopSchedules + 1) * 2 * kNumEpilogueModes;
  if (config.tail_kv_splits > 1) {
    *kernel_id = kWholeTileIds + ((config.kv_cluster_size - 1) * 2 + dim) * kNumEpilogueModes + mode;
    return kSplitTailKernels[config.kv_cluster_size - 1][dim][mode];
  }
  if (config.kv_cluster_size == 2) {
    *kernel_id = (kNumMainloopSchedules * 2 + dim) * kNumEpilogueModes + mode;
    return kKvClusterKernels[dim][mode];
  }
  const int schedule = static_cast<int>(config.schedule);
  *kernel_id = (schedule * 2 + dim) * kNumEpilogueModes + mode;
  return kKernels[schedule][dim][mode];
}
std::uint32_t dynamic_smem_bytes(int head_dim) {
  return head_dim == 64 ? SmemLayoutD<64>::kDynamicBytes : SmemLayoutD<128>::kDynamicBytes;
}

// [rows][d] bf16, box [box_rows][64 cols], 128B swizzle (matches SmemLayoutD and the wgmma descriptors):
// 128 rows, or b_n / kv_cluster_size for K and V when a cluster's CTAs load halves of each tile.
CUtensorMap make_tile_map(const void* base, std::uint64_t rows, int head_dim, std::uint32_t box_rows,
                          const char* name) {
  return make_tile_map_2d(base, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, TileShape::kElemBytes, rows,
                          static_cast<std::uint64_t>(head_dim), box_rows, TileShape::kSwizzleCols, name);
}

// cudaFuncSetAttribute once per (device, kernel): later launches (also under stream capture) skip it.
void raise_smem_limit_once(KernelFn kernel, int kernel_id, std::uint32_t dynamic_bytes) {
  static std::mutex mutex;
  static std::set<std::pair<int, int>> done;
  int device = 0;
  XS_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mutex);
  if (!done.insert({device, kernel_id}).second) return;
  XS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(dynamic_bytes)));
}

// Launch attributes of a cluster launch: kv_cluster_size CTAs along x.
struct ClusterLaunch {
  cudaLaunchAttribute attribute{};
  cudaLaunchConfig_t config{};
  ClusterLaunch(int cluster_size, int grid, std::uint32_t smem_bytes, cudaStream_t stream) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = static_cast<unsigned>(cluster_size);
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.gridDim = dim3(static_cast<unsigned>(grid));
    config.blockDim = dim3(TileShape::kNumThreads);
    config.dynamicSmemBytes = smem_bytes;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
};

// How many clusters of the kernel fit on the current device at once (one CTA per SM; a cluster's CTAs share
// a GPC, so an odd SM count in a GPC leaves an SM idle). Once per (device, kernel).
int max_active_clusters(KernelFn kernel, int kernel_id, int cluster_size, std::uint32_t smem_bytes) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, int> of_kernel;
  int device = 0;
  XS_CUDA_CHECK(cudaGetDevice(&device));
  raise_smem_limit_once(kernel, kernel_id, smem_bytes);
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(device, kernel_id);
  const auto it = of_kernel.find(key);
  if (it != of_kernel.end()) return it->second;
  int sms = 0;
  XS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  ClusterLaunch launch(cluster_size, sms - sms % cluster_size, smem_bytes, nullptr);
  int clusters = 0;
  XS_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config));
  if (clusters < 1)
    throw Error(ExitCode::kDeviceFailure, "cuda", "kv_cluster_size",
                "no cluster of " + std::to_string(cluster_size) +
                    " FlashAttention CTAs fits on this device (cudaOccupancyMaxActiveClusters = 0)");
  of_kernel[key] = clusters;
  return clusters;
}

}  // namespace

int flash_attention_grid_size(const FlashAttentionConfig& config, const FlashAttentionArgs& args) {
  int ctas = config.num_ctas;
  if (ctas == 0) {
    int device = 0;
    XS_CUDA_CHECK(cudaGetDevice(&device));
    XS_CUDA_CHECK(cudaDeviceGetAttribute(&ctas, cudaDevAttrMultiProcessorCount, device));
  }
  const int tiles = static_cast<int>(args.num_tiles());
  ctas = ctas < tiles ? ctas : tiles;
  const int cs = config.kv_cluster_size;
  if (cs > 1) {
    check_kernel_choice(config, args);  // the caller may ask before its buffers exist
    int kernel_id = 0;
    const KernelFn kernel = select_kernel(config, args, &kernel_id);
    const int fit = cs * max_active_clusters(kernel, kernel_id, cs, dynamic_smem_bytes(args.head_dim));
    ctas = ctas < fit ? ctas : fit;
    ctas -= ctas % cs;
  }
  return ctas;
}

void launch_flash_attention(const FlashAttentionConfig& config, const FlashAttentionArgs& a, cudaStream_t stream) {
  validate_flash_attention(config, a);
  const int grid = flash_attention_grid_size(config, a);
  KernelParams p;
  p.scheduler = scheduler_of(config, a, grid);
  if (a.records != nullptr && a.records_bytes < std::uint64_t{p.scheduler.num_record_slots()} * 2 * sizeof(TileRecord))
    throw input_error("records", "instrumentation buffer holds " + std::to_string(a.records_bytes) +
                                     " bytes; this launch (split tail included) writes 2 records per unit and cluster "
                                     "rank = " +
                                     std::to_string(std::uint64_t{p.scheduler.num_record_slots()} * 2 * sizeof(TileRecord)) +
                                     " (flash_attention_records_bytes)");
  if (p.scheduler.splits()) {
    const std::uint64_t floats =
        a.head_dim == 64 ? SplitPartialLayout<64>::total_floats(p.scheduler.num_split_tiles(), p.scheduler.kv_splits)
                         : SplitPartialLayout<128>::total_floats(p.scheduler.num_split_tiles(), p.scheduler.kv_splits);
    if (floats * sizeof(float) > kMaxSplitWorkspaceBytes)
      throw input_error("tail_split_units", std::to_string(p.scheduler.split_units) + " split units of " +
                                                std::to_string(p.scheduler.kv_splits) + " pieces need " +
                                                std::to_string(floats * sizeof(float)) +
                                                " bytes of partial results, above the " +
                                                std::to_string(kMaxSplitWorkspaceBytes) +
                                                "-byte cap; split fewer units (0: one per cluster)");
    const SplitWorkspace ws = split_workspace_device(floats, std::uint64_t{p.scheduler.num_split_tiles()} * 2, stream);
    p.split_partials = ws.partials;
    p.split_counters = ws.counters;
  }
  p.seq_len = static_cast<std::uint32_t>(a.seq_len);
  p.num_kv_tiles = static_cast<std::uint32_t>(a.seq_len / TileShape::kBlockN);
  p.first_piece_unit = p.scheduler.num_whole_units();
  p.piece_kv_tiles = p.scheduler.splits() ? p.num_kv_tiles / p.scheduler.kv_splits : p.num_kv_tiles;
  const float scale = a.softmax_scale > 0 ? a.softmax_scale : 1.0f / std::sqrt(static_cast<float>(a.head_dim));
  p.scale_log2 = scale * 1.4426950408889634f;
  p.ulysses = a.ulysses();
  p.out = static_cast<std::uint8_t*>(a.out);
  for (int r = 0; r < kMaxRanks; ++r) p.dst[r] = static_cast<std::uint8_t*>(a.dst[r]);
  p.records = a.records;
  p.streaming_stores = config.store_cache == StoreCachePolicy::kStreaming ? 1u : 0u;
  p.store_barrier = config.store_barrier ? 1u : 0u;
  if (config.tile_scheduler == TileSchedulerKind::kDynamic) p.tile_counters = tile_counters_device();
  p.timeout_cycles = config.timeout_cycles;
  p.timeout_report = timeout_report_device();
  const std::uint64_t rows = static_cast<std::uint64_t>(a.num_heads) * a.seq_len;
  const auto kv_box_rows = static_cast<std::uint32_t>(TileShape::kBlockN / config.kv_cluster_size);
  const CUtensorMap tm_q = make_tile_map(a.q, rows, a.head_dim, TileShape::kBlockM, "Q");
  const CUtensorMap tm_k = make_tile_map(a.k, rows, a.head_dim, kv_box_rows, "K");
  const CUtensorMap tm_v = make_tile_map(a.v, rows, a.head_dim, kv_box_rows, "V");
  int kernel_id = 0;
  const KernelFn kernel = select_kernel(config, a, &kernel_id);
  const std::uint32_t smem_bytes = dynamic_smem_bytes(a.head_dim);
  raise_smem_limit_once(kernel, kernel_id, smem_bytes);
  if (config.kv_cluster_size == 1) {
    kernel<<<grid, TileShape::kNumThreads, smem_bytes, stream>>>(p, tm_q, tm_k, tm_v);
    XS_CUDA_CHECK_LAUNCH();
  } else {
    ClusterLaunch launch(config.kv_cluster_size, grid, smem_bytes, stream);
    XS_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, kernel, p, tm_q, tm_k, tm_v));
    XS_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace xs::kernels::attention
