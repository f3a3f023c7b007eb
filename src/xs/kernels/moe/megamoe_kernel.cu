// xstage kernels layer (moe): the persistent sm_90a MegaMoE kernel (bf16, fp32 accumulation), its launcher
// and its instantiations (schedule x epilogue mode x b_n in {128, 256}).
//
// Warp roles (384 threads, one CTA per participating SM):
//   warp 0      producer: lane 0 issues every TMA load and owns the cross-CTA dependency waits
//   warps 1, 2  storers (64 threads): drain the staging slot tile by tile
//   warp 3      Dispatch of this CTA's later row blocks in the background (the first one is copied by all
//               384 threads at kernel start)
//   warpgroups 1, 2  math c = 0, 1: rows [64c, 64c + 64) of every tile, wgmma m64n128k16
// Pipeline: A/B stage ring (mbarriers full/empty, mainloop.cuh); registers + one staging slot = two
// buffers (slot_full/slot_empty, epilogue.cuh): the math warpgroups compute tile i+1 while the storers
// drain tile i and wait on slot_empty only to dump tile i+1 (the MMA-side staging wait).
// Cross-CTA protocol (epoch-tagged, never reset; layout.cuh SyncLayout): dispatch_flag[p] = epoch after
// Dispatch of row block p; l1_done[p] += 1 per finished Linear-1 tile; Linear-2 of p waits for
// l1_done[p] >= epoch * P1. The last CTA to finish advances epoch_word. Every wait times out naming its flag.
// Residency: the grid is launched cooperatively (config.hpp), so no CTA spins on one that never started.
// Shared memory (pipeline.cuh): 5 x 32 KiB stages + 32 KiB staging + 1 KiB row meta + barriers = 193 KiB.
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "xs/common/error.hpp"
#include "xs/kernels/common/mapped_report.hpp"
#include "xs/kernels/moe/epilogue.cuh"
#include "xs/kernels/moe/megamoe.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::kernels::moe {

template <int kBlockN, Precision kPrec, class Params>
__device__ void math_loop(const Params& p, std::uint8_t* smem, const Barriers& bars, std::uint32_t cta,
                          std::uint32_t warpgroup, std::uint32_t thread, std::uint64_t entry_ns) {
  using Smem = SmemLayout<kBlockN>;
  const std::uint32_t smem_base = ptx::smem_u32(smem);
  const std::uint32_t staging_addr = smem_base + Smem::kStagingOffset;
  auto* full_stamps = reinterpret_cast<volatile std::uint64_t*>(smem + Smem::kStampOffset);
  const bool recorder = p.records != nullptr && thread == 0 && warpgroup == 0;
  const TileSpace& tiles = p.problem.tiles;
  Accumulator<kBlockN> acc;
  ScheduleCursor cur = p.schedule.begin(p.problem, cta, p.num_ctas);
  TileId t;
  std::uint32_t it = 0, seq = 0;
  while (p.schedule.next(p.problem, cur, t)) {
    const std::uint32_t tile_idx = tiles.tile_index(t);
    std::uint64_t start_cycles = 0, start_ns = 0;
    if (recorder) {
      start_cycles = ptx::clock64_cycles();
      start_ns = ptx::globaltimer_ns();
    }
    std::uint64_t first_wait;
    if constexpr (kPrec == Precision::kFp8 && kBlockN == 128)
      first_wait = mainloop_fp8(p, acc.d, t, p.routing.row_block_expert[t.row_block], smem, smem_base, bars, warpgroup,
                                thread, it, tile_idx);
    else
      first_wait = mainloop<kBlockN>(p, acc, num_k_blocks<kPrec>(p, t), smem_base, bars, warpgroup, it, tile_idx);
    const std::uint64_t end_cycles = recorder ? ptx::clock64_cycles() : 0;
    const std::uint64_t wait = wait_barrier(p, bars.slot_empty, (seq & 1) ^ 1, WaitFlag::kSlotEmpty, tile_idx);
    if constexpr (kPrec == Precision::kFp8) {
      if (t.kind == TileKind::kL1)
        stage_l1_tile_fp8(acc.d, p.routing.pool_weight, t.row_block, staging_addr,
                          reinterpret_cast<float*>(smem + Smem::kActScaleOffset), warpgroup, thread);
      else
        stage_l2_tile<kBlockN>(acc, staging_addr, warpgroup, thread);
    } else if (t.kind == TileKind::kL1)
      stage_l1_tile<kBlockN>(acc, p.routing.pool_weight, t.row_block, staging_addr, warpgroup, thread);
    else
      stage_l2_tile<kBlockN>(acc, staging_addr, warpgroup, thread);
    if (thread == 0) full_stamps[warpgroup] = ptx::clock64_cycles();
    ptx::mbarrier_arrive(bars.slot_full);
    if (recorder) {
      TileRecord& rec = p.records[tile_idx];
      rec.cta = cta;
      rec.sequence = seq;
      rec.sm = ptx::smid();
      rec.start_ns = start_ns;
      rec.mainloop_start_cycles = start_cycles;
      rec.mainloop_end_cycles = end_cycles;
      rec.staging_wait_cycles = static_cast<std::uint32_t>(wait);
      rec.first_stage_wait_cycles = static_cast<std::uint32_t>(first_wait);
      if (seq == 0) rec.cta_boundary_ns = entry_ns;
      *reinterpret_cast<volatile std::uint32_t*>(smem + Smem::kLastTileOffset) = tile_idx;
    }
    ++seq;
  }
}

template <class Schedule, EpilogueMode kMode, int kBlockN, Precision kPrec>
__global__ void __launch_bounds__(TileShape<kBlockN>::kNumThreads, 1)
    megamoe_kernel(const __grid_constant__ KernelParams<Schedule> p, const __grid_constant__ CUtensorMap tm_pool,
                   const __grid_constant__ CUtensorMap tm_act, const __grid_constant__ CUtensorMap tm_w1,
                   const __grid_constant__ CUtensorMap tm_w2) {
  using Smem = SmemLayout<kBlockN>;
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  const std::uint32_t raw_addr = ptx::smem_u32(smem_raw);
  std::uint8_t* smem = smem_raw + (((raw_addr + 1023u) & ~1023u) - raw_addr);
  const Barriers bars = barriers_at<kBlockN>(smem);
  auto* epoch_smem = reinterpret_cast<std::uint32_t*>(smem + Smem::kEpochOffset);
  const std::uint32_t warpgroup = threadIdx.x / 128;
  const std::uint32_t thread = threadIdx.x % 128;
  const std::uint32_t cta = blockIdx.x;
  const std::uint64_t entry_ns = p.records != nullptr ? ptx::globaltimer_ns() : 0;
  if (threadIdx.x == 0) {
    *reinterpret_cast<std::uint32_t*>(smem + Smem::kLastTileOffset) = 0xFFFFFFFFu;
    init_barriers<kBlockN>(bars);
    ptx::prefetch_tensormap(&tm_pool);
    ptx::prefetch_tensormap(&tm_act);
    ptx::prefetch_tensormap(&tm_w1);
    ptx::prefetch_tensormap(&tm_w2);
    // Launch number: completed launches + 1 (every CTA reads it before the last one can advance it).
    *epoch_smem = ptx::ld_acquire_gpu_u32(p.sync + p.sync_layout.epoch_word()) + 1;
  }
  auto* dispatch_meta = reinterpret_cast<volatile std::int32_t*>(smem + Smem::kDispatchMetaOffset);
  const bool dispatch = p.dispatch_enabled != 0 && cta < p.problem.tiles.num_row_blocks;
  if (dispatch && threadIdx.x < 128) dispatch_meta[threadIdx.x] = p.routing.pool_arrival[cta * 128 + threadIdx.x];
  __syncthreads();
  const std::uint32_t epoch = *epoch_smem;
  // Dispatch of this CTA's first row block by all threads (the first tiles of every CTA wait on these).
  if (dispatch) {
    copy_row_block<2>(p, cta, dispatch_meta, threadIdx.x, TileShape<kBlockN>::kNumThreads);
    __syncthreads();
    if (threadIdx.x == 0) ptx::st_release_gpu_u32(p.sync + p.sync_layout.dispatch_word(cta), epoch);
  }
  if (warpgroup == 0) {
    if constexpr (kBlockN == 256) ptx::setmaxnreg_dec<TileShape<kBlockN>::kSideRegisters>();
    const std::uint32_t warp = thread / 32;
    if (warp == 0) {
      if (thread == 0) producer_loop<kBlockN, kPrec>(p, &tm_pool, &tm_act, &tm_w1, &tm_w2, smem, bars, cta, epoch);
    } else if (warp <= 2) {
      storer_loop<kBlockN, kMode>(p, smem, bars, cta, thread - 32, epoch);
    } else if (p.dispatch_enabled) {
      dispatch_background<kBlockN == 128 ? 16 : 8>(p, smem + Smem::kDispatchMetaOffset, cta, thread % 32, epoch);
    }
  } else {
    if constexpr (kBlockN == 256) ptx::setmaxnreg_inc<TileShape<kBlockN>::kMathRegisters>();
    math_loop<kBlockN, kPrec>(p, smem, bars, cta, warpgroup - 1, thread, entry_ns);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const std::uint32_t last_tile = *reinterpret_cast<volatile std::uint32_t*>(smem + Smem::kLastTileOffset);
    if (p.records != nullptr && last_tile != 0xFFFFFFFFu) p.records[last_tile].cta_boundary_ns = ptx::globaltimer_ns();
    ptx::fence_acq_rel_gpu();
    if (atomicAdd(p.sync + p.sync_layout.finished_word(), 1u) == p.num_ctas - 1) {
      atomicExch(p.sync + p.sync_layout.finished_word(), 0u);
      ptx::st_release_gpu_u32(p.sync + p.sync_layout.epoch_word(), epoch);
    }
  }
}

}  // namespace xs::kernels::moe

// ---- Host side -------------------------------------------------------------------------------------------
#include "xs/kernels/common/tensor_map.hpp"

namespace xs::kernels::moe {
namespace {

template <class Schedule>
using KernelFn = void (*)(KernelParams<Schedule>, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap);

// Runtime-to-template dispatch: one table per schedule type, indexed by [variant][EpilogueMode], variant
// 0 = bf16 b_n 128, 1 = bf16 b_n 256, 2 = fp8 b_n 128 (the instantiations that run; fp8 at b_n 256 would
// need 256 accumulator registers per thread).
template <class Schedule>
KernelFn<Schedule> kernel_for(EpilogueMode mode, int block_n, Precision precision) {
  using E = EpilogueMode;
  static constexpr KernelFn<Schedule> kTable[3][kNumEpilogueModes] = {
      {&megamoe_kernel<Schedule, E::kFused, 128, Precision::kBf16>,
       &megamoe_kernel<Schedule, E::kCompletionCoupled, 128, Precision::kBf16>},
      {&megamoe_kernel<Schedule, E::kFused, 256, Precision::kBf16>,
       &megamoe_kernel<Schedule, E::kCompletionCoupled, 256, Precision::kBf16>},
      {&megamoe_kernel<Schedule, E::kFused, 128, Precision::kFp8>,
       &megamoe_kernel<Schedule, E::kCompletionCoupled, 128, Precision::kFp8>},
  };
  const int variant = precision == Precision::kFp8 ? 2 : block_n == 256 ? 1 : 0;
  return kTable[variant][static_cast<int>(mode)];
}
struct LaunchShape {
  int threads;
  std::uint32_t smem_bytes;
};
LaunchShape launch_shape(int block_n) {
  return block_n == 256 ? LaunchShape{TileShape<256>::kNumThreads, SmemLayout<256>::kDynamicBytes}
                        : LaunchShape{TileShape<128>::kNumThreads, SmemLayout<128>::kDynamicBytes};
}

WaitTimeoutReport*& timeout_report_host() { return mapped_report_host<WaitTimeoutReport>(); }
WaitTimeoutReport* timeout_report_device() { return mapped_report_device<WaitTimeoutReport>(); }

// cudaFuncSetAttribute and the co-residency check once per (device, kernel): later launches (also under
// stream capture) skip both.
template <class Fn>
void prepare_kernel_once(Fn kernel, int grid, LaunchShape shape, bool cooperative) {
  static std::mutex mutex;
  static std::set<std::pair<int, const void*>> done;
  int device = 0;
  XS_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mutex);
  const void* key = reinterpret_cast<const void*>(kernel);
  if (done.count({device, key}) == 0) {
    XS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shape.smem_bytes)));
    done.insert({device, key});
  }
  int per_sm = 0;
  XS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, shape.threads, shape.smem_bytes));
  int sms = 0;
  XS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  int cooperative_supported = 0;
  XS_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative_supported, cudaDevAttrCooperativeLaunch, device));
  if (cooperative && cooperative_supported == 0)
    throw Error(ExitCode::kDeviceFailure, "cuda", "cooperative launch",
                "MegaMoE needs a cooperative launch (all CTAs resident at once) and GPU " + std::to_string(device) +
                    " does not support one");
  // Every CTA spins on flags other CTAs release: all of them must be resident at once.
  if (per_sm < 1 || grid > per_sm * sms)
    throw Error(ExitCode::kDeviceFailure, "cuda", "co-residency",
                "MegaMoE needs all " + std::to_string(grid) + " CTAs resident at once; this device fits " +
                    std::to_string(per_sm) + " per SM x " + std::to_string(sms) + " SMs");
}

bool aligned16(const void* ptr) { return (reinterpret_cast<std::uintptr_t>(ptr) & 15u) == 0; }

std::string num(long long v) { return std::to_string(v); }

template <class Schedule>
void launch_typed(const Schedule& schedule, const MegaMoeConfig& config, const MegaMoeArgs& a, int grid,
                  cudaStream_t stream) {
  KernelParams<Schedule> p;
  p.schedule = schedule;
  p.problem.tiles = a.tile_space();
  // A phase launch sees only its phase's tiles: with no Linear-1 tile per row, a Linear-2 tile's l1_done
  // target (epoch x P1) is 0; Dispatch and the waits on it are off (the pool and act of an earlier launch).
  if (a.phases == KernelPhases::kLinear1) p.problem.tiles.l2_tiles_per_row = 0;
  if (a.phases == KernelPhases::kLinear2) p.problem.tiles.l1_tiles_per_row = 0;
  p.dispatch_enabled = a.phases == KernelPhases::kAll ? 1u : 0u;
  p.l2_waits_for_l1 = a.phases == KernelPhases::kAll && !config.fault_skip_l2_dependency_wait ? 1u : 0u;
  p.problem.num_experts = static_cast<std::uint32_t>(a.num_experts);
  p.problem.expert_first_block = a.routing.expert_first_block;
  p.routing = a.routing;
  p.hidden = static_cast<std::uint32_t>(a.hidden);
  p.intermediate = static_cast<std::uint32_t>(a.intermediate);
  p.num_ctas = static_cast<std::uint32_t>(grid);
  const bool fp8 = a.precision == Precision::kFp8;
  p.pool_rows = static_cast<std::uint32_t>(128 * a.num_row_blocks);
  p.row_bytes_in = static_cast<std::uint32_t>(a.hidden * (fp8 ? 1 : 2));
  if (fp8) {
    p.arrival_scale = a.arrival_scale;
    p.pool_scale = a.pool_scale;
    p.w1_scale = a.w1_scale;
    p.w2_scale = a.w2_scale;
    p.act_scale = a.act_scale;
  }
  p.arrival = static_cast<const std::uint8_t*>(a.arrival);
  p.pool = static_cast<std::uint8_t*>(a.pool);
  p.act = static_cast<std::uint8_t*>(a.act);
  for (int r = 0; r < kMaxRanks; ++r) p.dst[r] = static_cast<std::uint8_t*>(a.dst[r]);
  p.sync = a.sync_words;
  p.sync_layout.num_row_blocks = static_cast<std::uint32_t>(a.num_row_blocks);
  p.records = a.records;
  p.timeout_cycles = config.timeout_cycles;
  p.timeout_report = timeout_report_device();
  const std::uint64_t pool_rows = std::uint64_t{128} * a.num_row_blocks;
  // Boxes of [rows][128 B]: 64 bf16 or 128 e4m3 columns (the 128B swizzle span).
  const auto dtype = fp8 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const std::uint32_t eb = fp8 ? 1 : 2, box_cols = 128 / eb;
  const CUtensorMap tm_pool = make_tile_map_2d(a.pool, dtype, eb, pool_rows, a.hidden, 128, box_cols, "pool");
  const CUtensorMap tm_act = make_tile_map_2d(a.act, dtype, eb, pool_rows, a.intermediate, 128, box_cols, "act");
  const CUtensorMap tm_w1 = make_tile_map_2d(a.w1, dtype, eb, std::uint64_t{2} * a.intermediate * a.num_experts,
                                             a.hidden, a.block_n, box_cols, "w1");
  const CUtensorMap tm_w2 = make_tile_map_2d(a.w2, dtype, eb, std::uint64_t{1} * a.hidden * a.num_experts,
                                             a.intermediate, a.block_n, box_cols, "w2");
  const KernelFn<Schedule> kernel = kernel_for<Schedule>(a.mode, a.block_n, a.precision);
  const LaunchShape shape = launch_shape(a.block_n);
  prepare_kernel_once(kernel, grid, shape, config.cooperative_launch);
  cudaLaunchConfig_t launch = {};
  launch.gridDim = dim3(static_cast<unsigned>(grid));
  launch.blockDim = dim3(static_cast<unsigned>(shape.threads));
  launch.dynamicSmemBytes = shape.smem_bytes;
  launch.stream = stream;
  cudaLaunchAttribute cooperative[1];
  cooperative[0].id = cudaLaunchAttributeCooperative;
  cooperative[0].val.cooperative = 1;
  launch.attrs = cooperative;
  launch.numAttrs = config.cooperative_launch ? 1 : 0;
  // The driver refuses (cudaErrorCooperativeLaunchTooLarge) rather than start a grid that cannot be resident.
  XS_CUDA_CHECK(cudaLaunchKernelEx(&launch, kernel, p, tm_pool, tm_act, tm_w1, tm_w2));
  XS_CUDA_CHECK_LAUNCH();
}

}  // namespace

int megamoe_grid_size(const MegaMoeConfig& config) {
  if (config.num_ctas > 0) return config.num_ctas;
  int device = 0, sms = 0;
  XS_CUDA_CHECK(cudaGetDevice(&device));
  XS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

void validate_megamoe(const MegaMoeConfig& config, const MegaMoeArgs& a) {
  if (a.block_n != 128 && a.block_n != 256)
    throw input_error("block_n", "b_n = " + num(a.block_n) + " is not built; use 128 or 256");
  if (a.precision != Precision::kBf16 && a.precision != Precision::kFp8)
    throw input_error("precision", "unknown precision; accepted: bf16, fp8");
  if (a.precision == Precision::kFp8) {
    if (a.block_n != 128) throw input_error("block_n", "fp8 W8A8 is built for b_n = 128 only");
    if (a.hidden % 128 != 0 || a.intermediate % 128 != 0)
      throw input_error("hidden", "fp8 W8A8 needs h and I multiples of 128 (128-K scale groups)");
    if (!a.arrival_scale || !a.pool_scale || !a.w1_scale || !a.w2_scale || !a.act_scale)
      throw input_error("arrival_scale/pool_scale/w1_scale/w2_scale/act_scale",
                        "an fp8 launch needs every scale tensor (megamoe.hpp)");
    // The producer bulk-copies each k-block's 128 row scales (512 B) into shared memory.
    for (const auto& [name, ptr] : {std::pair<const char*, const void*>{"pool_scale", a.pool_scale},
                                    std::pair<const char*, const void*>{"act_scale", a.act_scale}})
      if (reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0)
        throw input_error(name, "an fp8 scale tensor read by bulk copy must be 16-byte aligned");
  }
  if (a.hidden <= 0 || a.hidden % a.block_n != 0)
    throw input_error("hidden", "h = " + num(a.hidden) + " must be a positive multiple of the tile width b_n = " +
                                    num(a.block_n));
  if (a.intermediate <= 0 || (2 * a.intermediate) % a.block_n != 0 || a.intermediate % 64 != 0)
    throw input_error("intermediate", "I = " + num(a.intermediate) + ": 2I must be a positive multiple of b_n = " +
                                          num(a.block_n) + " and I a multiple of 64");
  if (a.num_experts < 1 || a.num_experts > kMaxLocalExperts)
    throw input_error("num_experts", "experts on this rank must be in [1, " + num(kMaxLocalExperts) + "]");
  if (a.top_k < 1 || a.tokens_per_rank < 1)
    throw input_error("top_k", "top_k and tokens_per_rank must be >= 1");
  if (a.num_ranks < 1 || a.num_ranks > kMaxRanks)
    throw input_error("num_ranks", "P = " + num(a.num_ranks) + " must be in [1, " + num(kMaxRanks) + "]");
  if (a.num_row_blocks < 1 || a.num_arrivals < 0)
    throw input_error("num_row_blocks", "the problem has no row blocks (no pair routed to this rank)");
  if (config.num_ctas < 0) throw input_error("num_ctas", "K_SM must be >= 0 (0: one per SM)");
  int device = 0, sms = 0;
  XS_CUDA_CHECK(cudaGetDevice(&device));
  XS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (config.num_ctas > sms)
    throw input_error("num_ctas", "K_SM = " + num(config.num_ctas) + " is above this device's " + num(sms) + " SMs");
  switch (a.schedule.kind) {
    case ScheduleKind::kInterleaved: {
      if (a.schedule.lead_rows < 1)
        throw input_error("lead_rows", "D = " + num(a.schedule.lead_rows) +
                                           ": D = 0 can deadlock an instance on its own unfinished Linear-1 tiles "
                                           "of the same row block; use D >= 1");
      break;
    }
    case ScheduleKind::kExpertWave:
      if (a.schedule.experts_per_wave < 1)
        throw input_error("experts_per_wave", "an expert wave needs at least 1 expert");
      break;
    case ScheduleKind::kSerial: break;
    default: throw input_error("schedule", "unknown schedule kind");
  }
  const std::uint64_t pool_rows = std::uint64_t{128} * a.num_row_blocks;
  if (!a.arrival || !a.pool || !a.w1 || !a.w2 || !a.act || !aligned16(a.arrival) || !aligned16(a.pool) ||
      !aligned16(a.w1) || !aligned16(a.w2) || !aligned16(a.act))
    throw input_error("arrival/pool/w1/w2/act", "every tensor must be non-null and 16-byte aligned");
  const RoutingTables& r = a.routing;
  if (!r.pool_arrival || !r.pool_dst_rank || !r.pool_dst_slot || !r.pool_weight || !r.row_block_expert ||
      !r.expert_first_block)
    throw input_error("routing", "every routing table must be a device pointer (layout.cuh RoutingTables)");
  const std::uint64_t need_dst = combine_bytes_per_rank(static_cast<std::uint32_t>(a.tokens_per_rank),
                                                        static_cast<std::uint32_t>(a.top_k),
                                                        static_cast<std::uint32_t>(a.hidden));
  for (int rank = 0; rank < a.num_ranks; ++rank) {
    if (!a.dst[rank] || !aligned16(a.dst[rank]))
      throw input_error("dst", "dst[" + num(rank) + "] must be non-null and 16-byte aligned");
    if (a.dst_bytes[rank] < need_dst)
      throw input_error("dst", "dst[" + num(rank) + "] holds " + num(static_cast<long long>(a.dst_bytes[rank])) +
                                   " bytes; a rank receives [T = " + num(a.tokens_per_rank) + "][top_k = " +
                                   num(a.top_k) + "][h = " + num(a.hidden) + "] bf16 = " +
                                   num(static_cast<long long>(need_dst)));
  }
  SyncLayout sync;
  sync.num_row_blocks = static_cast<std::uint32_t>(a.num_row_blocks);
  if (!a.sync_words || a.sync_bytes < sync.bytes())
    throw input_error("sync_words", "needs " + num(static_cast<long long>(sync.bytes())) +
                                        " bytes of zeroed device memory (2 + 2 x row blocks words)");
  if (a.records != nullptr && a.records_bytes < std::uint64_t{a.tile_space().num_tiles()} * sizeof(TileRecord))
    throw input_error("records", "instrumentation needs one " + num(sizeof(TileRecord)) + "-byte record per tile = " +
                                     num(static_cast<long long>(a.tile_space().num_tiles() * sizeof(TileRecord))) +
                                     " bytes");
  if (pool_rows * a.hidden >= (1ull << 40)) throw input_error("num_row_blocks", "pool too large");
  if (static_cast<int>(a.mode) < 0 || static_cast<int>(a.mode) >= kNumEpilogueModes)
    throw input_error("mode", "unknown epilogue mode");
  if (a.phases != KernelPhases::kAll && a.phases != KernelPhases::kLinear1 && a.phases != KernelPhases::kLinear2)
    throw input_error("phases", "unknown phase selection; accepted: all, linear1, linear2");
}

void launch_megamoe(const MegaMoeConfig& config, const MegaMoeArgs& a, cudaStream_t stream) {
  validate_megamoe(config, a);
  const int grid = megamoe_grid_size(config);
  switch (a.schedule.kind) {
    case ScheduleKind::kExpertWave:
      launch_typed(ExpertWave{static_cast<std::uint32_t>(a.schedule.experts_per_wave)}, config, a, grid, stream);
      break;
    case ScheduleKind::kInterleaved:
      launch_typed(Interleaved{static_cast<std::uint32_t>(a.schedule.lead_rows)}, config, a, grid, stream);
      break;
    case ScheduleKind::kSerial: launch_typed(Serial{}, config, a, grid, stream); break;
  }
}

std::string megamoe_timeout_message() {
  volatile WaitTimeoutReport* r = timeout_report_host();
  if (r == nullptr || r->valid == 0) return "";
  static const char* const kNames[] = {"stage_full", "stage_empty", "slot_full", "slot_empty", "dispatch_flag",
                                       "l1_done"};
  const std::uint32_t flag = r->flag;
  const bool counter = flag == static_cast<std::uint32_t>(WaitFlag::kDispatchFlag) ||
                       flag == static_cast<std::uint32_t>(WaitFlag::kL1Done);
  const std::string msg = std::string("timeout waiting on '") +
                          (flag < static_cast<std::uint32_t>(WaitFlag::kCount) ? kNames[flag] : "?") + "' (block " +
                          std::to_string(r->block) + ", thread " + std::to_string(r->thread) +
                          (counter ? ", row block " : ", tile ") + std::to_string(r->tile) +
                          (counter ? ", expected >= " : ", parity ") + std::to_string(r->expected) + ")";
  r->valid = 0;
  return msg;
}

}  // namespace xs::kernels::moe
