// xstage kernels layer: the loaded-mainloop kernel of remote_store.loaded and its launcher: what remote
// stores in flight cost the computation beside them (issue 28).
//
// Warp roles (one persistent CTA per SM; 288 + storer_threads threads):
//   warps 0-7  two math warpgroups. Per tile: for each k-block, wait the stage's full mbarrier, four wgmma
//              m64n128k16 (rows [64 wg, 64 wg + 64) of the 128 x 128 tile), commit, retire the previous
//              k-block and arrive on its stage's empty mbarrier (MegaMoE's bf16 mainloop, src/xs/kernels/moe). The
//              load-stream variant arrives on empty as soon as the stage is full: TMA loads only.
//   warp 8     the TMA producer (lane 0): for each k-block, wait the stage's empty mbarrier, expect_tx 32 KiB,
//              TMA the A and B boxes [128][64] bf16 (128B swizzle) into the stage.
//   warps 9..  the storers: burst b of B bytes (16-B stores; contiguous slice or scattered 256-B rows of the
//              BurstLayout ring) starts no earlier than t0 + b * period_ns (%globaltimer), until the CTA's
//              mainloop is done or max_bursts were issued; burst 0 always (storer_issues_burst, so a launch
//              with stores claims >= 1 burst per CTA however its warps are scheduled); then fence.sc.sys.
// Injection epilogue (args.epilogue_tiles_per_burst > 0): no storer warps (288 threads). After every
// tiles_per_burst-th tile (and its C store) the 256 math threads store the CTA's next burst themselves, the
// same STG sequence as a storer burst (store_slice / store_rows over 256 threads), and only then wait for the
// next tile's first stage: closed loop, as an application's epilogue. Each math thread fences
// (fence.sc.sys) after its last tile; a named barrier over the math threads (kMathBarrier) then lets thread 0
// record the drain tail and advance burst_base (every math thread read it at its start, before the barrier).
// Pipeline and flags: kStages (4) x 32 KiB ring; full[s] counts 1 arrival + 32 KiB of tx, empty[s] 256
// arrivals. Iteration i (over all k-blocks of the CTA) uses stage i % kStages with full parity (i / kStages) & 1;
// the producer waits empty with the opposite parity. mainloop_done (shared word, atomics) tells the storers
// that math thread 0 finished its tiles; go (shared word) passes the storer leader's decision to the others
// between two named-barrier syncs. Every mbarrier wait has a clock64 timeout that writes LoadedStatus to a
// mapped host word and traps (no printf: it would serialize the wgmmas). The storers' pacing wait ends at the
// latest with mainloop_done, which the timed-out waits bound.
// Shared memory: 128 KiB ring + 8 mbarriers + 2 words + 1 KiB alignment slack (LoadedShape::kSmemBytes).
#include "xs/kernels/common/ptx_hopper.cuh"
#include "xs/kernels/remote_store/loaded.hpp"
#include "xs/kernels/remote_store/store_pattern.cuh"

namespace xs::kernels::remote_store {
namespace {

using Shape = LoadedShape;
constexpr std::uint32_t kS = Shape::kStages;
constexpr std::uint32_t kStorerBarrier = 1;  // named barrier id of the storer warps (0 is __syncthreads)
constexpr std::uint32_t kMathBarrier = 2;    // injection epilogue: the 256 math threads, once after the last tile

__device__ unsigned int loaded_timeout_claim = 0;

// The first thread to time out reports its wait; the waits it starved time out later and must not
// overwrite the cause. A trap ends the context, so the claim is never reset.
__device__ __noinline__ void trap_on_timeout(std::uint32_t* status, LoadedStatus code) {
  if (status != nullptr && atomicCAS(&loaded_timeout_claim, 0u, 1u) == 0u) {
    ptx::st_release_sys_u32(status, static_cast<std::uint32_t>(code));
    ptx::fence_sc_sys();
  }
  __trap();
}

__device__ __forceinline__ void wait_stage(const LoadedArgs& a, std::uint64_t* bar, std::uint32_t parity,
                                           LoadedStatus code) {
  const std::uint64_t start = ptx::clock64_cycles();
  while (!ptx::mbarrier_try_wait_parity(bar, parity))
    if (ptx::clock64_cycles() - start > a.timeout_cycles) trap_on_timeout(a.status, code);
}

// ---- TMA producer (one thread) -------------------------------------------------------------------------
__device__ void produce(const LoadedArgs& a, std::uint8_t* smem, std::uint64_t* full, std::uint64_t* empty,
                        std::uint32_t cta) {
  const LoadedProblem& p = a.problem;
  const std::uint32_t kbs = p.k_blocks();
  std::uint32_t it = 0;
  for (std::uint32_t j = 0; j < p.tiles_per_cta; ++j) {
    const auto row = static_cast<std::int32_t>(p.tile_block(cta, j) * Shape::kBlockM);
    for (std::uint32_t kb = 0; kb < kbs; ++kb, ++it) {
      const std::uint32_t s = it % kS;
      wait_stage(a, empty + s, ((it / kS) & 1) ^ 1, LoadedStatus::kStageEmptyTimeout);
      ptx::mbarrier_arrive_expect_tx(full + s, Shape::kStageBytes);
      const auto k = static_cast<std::int32_t>(kb * Shape::kBlockK);
      ptx::tma_load_2d(smem + s * Shape::kStageBytes, &a.tm_a, full + s, k, row);
      ptx::tma_load_2d(smem + s * Shape::kStageBytes + Shape::kTileBytes, &a.tm_b, full + s, k, row);
    }
  }
  // Tail: every stage released, so no TMA write is outstanding when the CTA exits.
  for (std::uint32_t i = 0; i < kS; ++i, ++it)
    wait_stage(a, empty + it % kS, ((it / kS) & 1) ^ 1, LoadedStatus::kStageEmptyTimeout);
}

// ---- Math warpgroups ------------------------------------------------------------------------------------
// Accumulator fragment of wgmma m64n128 (ptx_hopper.cuh): thread t of warp w (in its warpgroup) holds rows
// 16w + t/4 (+8) and columns 8j + 2(t%4) (+1), d[4j + 2*row_half + col_odd].
__device__ __forceinline__ void store_tile(const float (&acc)[64], float* c_block, std::uint32_t thread_idx) {
  const std::uint32_t wg = thread_idx / 128, warp = (thread_idx / 32) % 4, lane = thread_idx % 32;
  const std::uint32_t row0 = 64 * wg + 16 * warp + lane / 4;
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float2* dst = reinterpret_cast<float2*>(c_block + (row0 + 8 * half) * Shape::kBlockN + 8 * j + 2 * (lane % 4));
      *dst = make_float2(acc[4 * j + 2 * half], acc[4 * j + 2 * half + 1]);
    }
}

// Injection epilogue: math thread thread_idx's share of burst burst_idx (global index of the layout) of CTA
// cta, the bytes a storer burst writes (seeded pattern, fresh slice or scattered 256-B rows).
__device__ __forceinline__ void store_epilogue(const LoadedArgs& a, const RowPermutation& perm,
                                               std::uint64_t burst_idx, std::uint32_t cta, std::uint32_t thread_idx) {
  const BurstLayout& layout = a.layout;
  const auto num_elems = static_cast<std::uint32_t>(layout.bytes_per_producer / 16);
  std::uint8_t* const ring = static_cast<std::uint8_t*>(a.dst);
  const std::uint32_t seed = pattern_seed(burst_idx, cta);
  if (layout.scattered()) {
    store_rows<16>(ring, perm, layout.logical_row(burst_idx, cta, 0), seed, thread_idx, Shape::kNumMathThreads,
                   num_elems);
  } else {
    store_slice<16>(ring + layout.slice_offset_bytes(burst_idx, cta), seed, thread_idx, Shape::kNumMathThreads,
                    num_elems);
  }
}

// Returns the bursts this thread stored (injection epilogue; 0 otherwise).
template <bool kWgmma>
__device__ std::uint32_t compute(const LoadedArgs& a, std::uint32_t smem_base, std::uint64_t* full,
                                 std::uint64_t* empty, std::uint32_t cta, std::uint32_t thread_idx) {
  const LoadedProblem& p = a.problem;
  const std::uint32_t kbs = p.k_blocks();
  const std::uint32_t wg = thread_idx / 128;
  const std::uint32_t tiles_per_burst = a.epilogue_tiles_per_burst;  // 0: paced storers, no epilogue
  const bool epilogue_stores = tiles_per_burst > 0 && a.max_bursts > 0;
  const std::uint64_t burst_base = epilogue_stores ? a.burst_base[cta] : 0;
  const RowPermutation perm = a.layout.row_permutation();
  std::uint32_t num_bursts = 0;
  float acc[64];
  std::uint32_t it = 0;
  for (std::uint32_t j = 0; j < p.tiles_per_cta; ++j) {
    const std::uint64_t start_cycles = ptx::clock64_cycles();
    std::uint32_t prev = 0;
    for (std::uint32_t kb = 0; kb < kbs; ++kb, ++it) {
      const std::uint32_t s = it % kS;
      wait_stage(a, full + s, (it / kS) & 1, LoadedStatus::kStageFullTimeout);
      if constexpr (kWgmma) {
        const std::uint32_t a_addr = smem_base + s * Shape::kStageBytes + wg * 64 * 128;
        const std::uint32_t b_addr = smem_base + s * Shape::kStageBytes + Shape::kTileBytes;
        ptx::fence_operands(acc);
        ptx::wgmma_fence();
#pragma unroll
        for (std::uint32_t kk = 0; kk < Shape::kBlockK / 16; ++kk) {
          // K-major, 128B swizzle: SBO = 8 rows x 128 B; k-step kk (16 elements) is +32 B in the swizzle row.
          const std::uint64_t da = ptx::make_smem_desc_sw128(a_addr + kk * 32, 16, 1024);
          const std::uint64_t db = ptx::make_smem_desc_sw128(b_addr + kk * 32, 16, 1024);
          ptx::wgmma_m64n128k16_f32_bf16_ss(acc, da, db, (kb > 0 || kk > 0) ? 1u : 0u);
        }
        ptx::wgmma_commit_group();
        ptx::fence_operands(acc);
        if (kb > 0) {
          ptx::wgmma_wait_group<1>();  // k-block kb-1 retired: its stage may be refilled
          ptx::fence_operands(acc);
          ptx::mbarrier_arrive(empty + prev);
        }
        prev = s;
      } else {
        ptx::mbarrier_arrive(empty + s);  // load stream: the data landed, nothing reads it
      }
    }
    if constexpr (kWgmma) {
      ptx::wgmma_wait_group<0>();
      ptx::fence_operands(acc);
      ptx::mbarrier_arrive(empty + prev);
    }
    const std::uint64_t end_cycles = ptx::clock64_cycles();
    LoadedTileRecord record{start_cycles, end_cycles, 0, 0};
    if constexpr (kWgmma) {
      if (a.c != nullptr && p.writes_output(cta, j))
        store_tile(acc, a.c + static_cast<std::size_t>(p.tile_block(cta, j)) * Shape::kBlockM * Shape::kBlockN,
                   thread_idx);
    }
    if (tiles_per_burst > 0 && (j + 1) % tiles_per_burst == 0) {
      record.epilogue_start_cycles = ptx::clock64_cycles();
      if (epilogue_stores) {
        store_epilogue(a, perm, burst_base + num_bursts, cta, thread_idx);
        ++num_bursts;
      }
      record.epilogue_end_cycles = ptx::clock64_cycles();
    }
    if (thread_idx == 0 && a.tiles != nullptr) a.tiles[static_cast<std::size_t>(cta) * p.tiles_per_cta + j] = record;
  }
  return num_bursts;
}

// Injection epilogue, after the last tile: each math thread waits until its own stores were performed
// system-wide; then thread 0 records when all had (the drain tail) and advances the CTA's burst claim.
__device__ void finish_epilogue(const LoadedArgs& a, std::uint32_t cta, std::uint32_t thread_idx,
                                std::uint32_t num_bursts) {
  if (num_bursts > 0) ptx::fence_sc_sys();
  ptx::named_barrier_sync(kMathBarrier, Shape::kNumMathThreads);  // every math thread fenced and read burst_base
  if (thread_idx != 0) return;
  if (a.ctas != nullptr) {
    a.ctas[cta].store_done_cycles = ptx::clock64_cycles();
    a.ctas[cta].store_done_ns = ptx::globaltimer_ns();
    a.ctas[cta].num_bursts = num_bursts;
  }
  if (a.max_bursts > 0) a.burst_base[cta] += num_bursts;
}

// ---- Storer warps ---------------------------------------------------------------------------------------
__device__ __forceinline__ bool mainloop_done(std::uint32_t* done_word) { return atomicOr(done_word, 0u) != 0u; }

__device__ void store_bursts(const LoadedArgs& a, std::uint32_t cta, std::uint32_t t, std::uint32_t n,
                             std::uint32_t* done_word, volatile std::uint32_t* go_word) {
  const bool leader = t == 0;
  const BurstLayout layout = a.layout;
  const std::uint32_t num_elems = static_cast<std::uint32_t>(layout.bytes_per_producer / 16);
  std::uint8_t* const ring = static_cast<std::uint8_t*>(a.dst);
  const RowPermutation perm = layout.row_permutation();
  const std::uint64_t base = a.max_bursts > 0 ? a.burst_base[cta] : 0;
  const std::uint64_t t0_ns = ptx::globaltimer_ns();
  std::uint32_t b = 0;
  for (;; ++b) {
    if (leader) {
      if (b > 0 && b < a.max_bursts && a.period_ns != 0) {
        const std::uint64_t due_ns = t0_ns + static_cast<std::uint64_t>(b) * a.period_ns;
        while (ptx::globaltimer_ns() < due_ns && !mainloop_done(done_word)) {
        }
      }
      *go_word = storer_issues_burst(b, a.max_bursts, b > 0 && mainloop_done(done_word)) ? 1u : 0u;
    }
    ptx::named_barrier_sync(kStorerBarrier, n);
    if (*go_word == 0u) break;  // uniform over the storers
    const std::uint64_t burst_idx = base + b;
    const std::uint32_t seed = pattern_seed(burst_idx, cta);
    LoadedBurstRecord record;
    if (leader) {
      record.start_ns = ptx::globaltimer_ns();
      record.start_cycles = ptx::clock64_cycles();
    }
    if (layout.scattered()) {
      store_rows<16>(ring, perm, layout.logical_row(burst_idx, cta, 0), seed, t, n, num_elems);
    } else {
      store_slice<16>(ring + layout.slice_offset_bytes(burst_idx, cta), seed, t, n, num_elems);
    }
    ptx::named_barrier_sync(kStorerBarrier, n);  // every storer issued its stores; go may be rewritten
    if (leader) {
      record.issue_end_cycles = ptx::clock64_cycles();
      if (a.bursts != nullptr) a.bursts[static_cast<std::size_t>(cta) * a.max_bursts + b] = record;
    }
  }
  if (b > 0) ptx::fence_sc_sys();  // each thread waits until its own stores were performed system-wide
  ptx::named_barrier_sync(kStorerBarrier, n);
  if (leader) {
    if (a.ctas != nullptr) {
      a.ctas[cta].store_done_cycles = ptx::clock64_cycles();
      a.ctas[cta].store_done_ns = ptx::globaltimer_ns();
      a.ctas[cta].num_bursts = b;
    }
    if (a.max_bursts > 0) a.burst_base[cta] = base + b;
  }
}

template <bool kWgmma>
__global__ void __launch_bounds__(512, 1) loaded_kernel(const __grid_constant__ LoadedArgs args) {
  extern __shared__ std::uint8_t smem_raw[];
  // The 128B swizzle needs 1024-byte aligned tiles; the dynamic base is only guaranteed 16-byte aligned.
  const std::uint32_t raw_addr = ptx::smem_u32(smem_raw);
  std::uint8_t* smem = smem_raw + ((1024u - (raw_addr & 1023u)) & 1023u);
  auto* full = reinterpret_cast<std::uint64_t*>(smem + Shape::kBarrierOffset);
  std::uint64_t* empty = full + kS;
  auto* flags = reinterpret_cast<std::uint32_t*>(smem + Shape::kFlagsOffset);  // [0] mainloop_done, [1] go
  const std::uint32_t tid = threadIdx.x;
  const std::uint32_t cta = blockIdx.x;
  if (tid == 0) {
    if (args.ctas != nullptr) {
      args.ctas[cta].first_ns = ptx::globaltimer_ns();
      args.ctas[cta].first_cycles = ptx::clock64_cycles();
      args.ctas[cta].smid = ptx::smid();
    }
    for (std::uint32_t s = 0; s < kS; ++s) {
      ptx::mbarrier_init(full + s, 1);
      ptx::mbarrier_init(empty + s, Shape::kNumMathThreads);
    }
    flags[0] = 0;
    flags[1] = 0;
    ptx::fence_mbarrier_init();
  }
  if (tid == Shape::kProducerWarp * 32) {
    ptx::prefetch_tensormap(&args.tm_a);
    ptx::prefetch_tensormap(&args.tm_b);
  }
  __syncthreads();
  if (tid < Shape::kNumMathThreads) {
    const std::uint32_t num_bursts = compute<kWgmma>(args, ptx::smem_u32(smem), full, empty, cta, tid);
    if (tid == 0) {
      atomicExch(&flags[0], 1u);
      if (args.ctas != nullptr) {
        args.ctas[cta].last_cycles = ptx::clock64_cycles();
        args.ctas[cta].last_ns = ptx::globaltimer_ns();
      }
    }
    if (args.epilogue_tiles_per_burst > 0) finish_epilogue(args, cta, tid, num_bursts);
  } else if (tid < Shape::kFirstStorerThread) {
    if (tid == Shape::kProducerWarp * 32) produce(args, smem, full, empty, cta);
  } else {
    store_bursts(args, cta, tid - Shape::kFirstStorerThread, blockDim.x - Shape::kFirstStorerThread, &flags[0],
                 &flags[1]);
  }
}

using LoadedKernelFn = void (*)(LoadedArgs);

cudaError_t prepare(const LoadedConfig& config, LoadedKernelFn* fn) {
  // 0: injection epilogue (no storer warps); launch_loaded checks that the args agree.
  if (config.storer_threads != 0 && (config.storer_threads < 32 || config.storer_threads > Shape::kMaxStorerThreads ||
                                     config.storer_threads % 32 != 0))
    return cudaErrorInvalidValue;
  *fn = config.wgmma ? loaded_kernel<true> : loaded_kernel<false>;  // the runtime-to-template dispatch
  return cudaFuncSetAttribute(*fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(Shape::kSmemBytes));
}

}  // namespace

cudaError_t loaded_ctas_per_sm(const LoadedConfig& config, int* ctas_per_sm) {
  LoadedKernelFn fn = nullptr;
  if (const cudaError_t err = prepare(config, &fn); err != cudaSuccess) return err;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas_per_sm, fn, static_cast<int>(config.threads_per_cta()),
                                                       Shape::kSmemBytes);
}

cudaError_t launch_loaded(const LoadedConfig& config, const LoadedArgs& args, cudaStream_t stream) {
  const LoadedProblem& p = args.problem;
  if (p.k_elems == 0 || p.k_elems % Shape::kBlockK != 0 || p.num_blocks == 0 || p.num_ctas != config.num_ctas ||
      (args.max_bursts > 0 && (args.dst == nullptr || args.burst_base == nullptr ||
                               args.layout.num_producers != config.num_ctas ||
                               args.layout.bytes_per_producer % 16 != 0)))
    return cudaErrorInvalidValue;
  const std::uint32_t tpb = args.epilogue_tiles_per_burst;
  if ((tpb > 0) != (config.storer_threads == 0)) return cudaErrorInvalidValue;  // epilogue <=> no storer warps
  if (tpb > 0 && (tpb > p.tiles_per_cta || (args.max_bursts != 0 && args.max_bursts != p.tiles_per_cta / tpb)))
    return cudaErrorInvalidValue;
  LoadedKernelFn fn = nullptr;
  if (const cudaError_t err = prepare(config, &fn); err != cudaSuccess) return err;
  fn<<<config.num_ctas, config.threads_per_cta(), Shape::kSmemBytes, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace xs::kernels::remote_store
