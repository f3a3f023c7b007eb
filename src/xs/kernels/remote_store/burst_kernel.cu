// xstage kernels layer: the remote-store burst kernel (paper section 3.1) and its launcher.
//
// Each producer (a CTA or a warp) runs, after a %globaltimer start barrier shared by all producers:
//   for b in [0, N):  stamp start | store B bytes, W bytes per store, all threads (contiguous slice, or
//                     256-B rows at permuted ring slots in scattered mode) | sync | stamp
//                     issue end | [completion: fence.sc.sys, sync, stamp fence end] | gap G (clock64 spin)
// T_iss of one producer-burst is issue_end - start in SM cycles; the host aggregates (runtime layer).
// Barrier/flag protocol: one device word start_time_ns; the first producer to arrive CASes it from 0 to
// arrival + start_lead_ns and every producer spins until %globaltimer >= it. The spin has a timeout
// that writes BurstStatus to a mapped host word and traps, naming the flag.
// Shared memory: dynamic_smem_bytes is requested only to keep one CTA per SM; it is never touched.
#include <cstdio>

#include "xs/kernels/common/ptx.cuh"
#include "xs/kernels/remote_store/burst.hpp"
#include "xs/kernels/remote_store/store_pattern.cuh"

namespace xs::kernels::remote_store {
namespace {

// A timeout must fire even if %globaltimer stopped: clock64 bounds the wait too (no SM runs at 4 GHz).
constexpr std::uint64_t kMaxCyclesPerNs = 4;

template <bool kWarp>
__device__ __forceinline__ void producer_sync() {
  if constexpr (kWarp) {
    __syncwarp();
  } else {
    __syncthreads();
  }
}

__device__ __noinline__ void trap_on_timeout(std::uint32_t* status, BurstStatus code, std::uint32_t producer_idx,
                                             std::uint64_t waited_ns) {
  ptx::st_release_sys_u32(status, static_cast<std::uint32_t>(code));
  ptx::fence_sc_sys();
  printf("xstage burst_kernel: spin-wait on %s timed out after %llu ns (producer %u); trapping\n",
         burst_status_flag(static_cast<std::uint32_t>(code)), static_cast<unsigned long long>(waited_ns),
         producer_idx);
  __trap();
}

// Leader thread only. Returns the agreed start time; all producers leave within one %globaltimer tick.
__device__ __forceinline__ void wait_for_start(const BurstArgs& args, std::uint32_t producer_idx,
                                               ProducerClock& clock) {
  const std::uint64_t arrival_ns = ptx::globaltimer_ns();
  const std::uint64_t arrival_cycles = ptx::clock64_cycles();
  const unsigned long long proposal = arrival_ns + args.start_lead_ns;
  const unsigned long long previous =
      atomicCAS(reinterpret_cast<unsigned long long*>(args.start_time_ns), 0ull, proposal);
  const std::uint64_t start_ns = previous == 0ull ? proposal : previous;
  for (;;) {
    const std::uint64_t now_ns = ptx::globaltimer_ns();
    if (now_ns >= start_ns) break;
    const std::uint64_t waited_ns = now_ns - arrival_ns;
    if (waited_ns > args.barrier_timeout_ns ||
        ptx::clock64_cycles() - arrival_cycles > args.barrier_timeout_ns * kMaxCyclesPerNs)
      trap_on_timeout(args.status, BurstStatus::kStartBarrierTimeout, producer_idx, waited_ns);
  }
  clock.barrier_arrival_ns = arrival_ns;
  clock.start_time_ns = start_ns;
}

// The producer-side gap: busy time with no stores, like the MMA mainloop between two epilogues.
__device__ __forceinline__ void spin_cycles(std::uint64_t num_cycles) {
  const std::uint64_t t0 = ptx::clock64_cycles();
  while (ptx::clock64_cycles() - t0 < num_cycles) {
  }
}

template <int kWidth, bool kWarp, bool kCompletion>
__device__ __forceinline__ void run_producer(const BurstArgs& args, std::uint32_t producer_idx,
                                             std::uint32_t thread_idx, std::uint32_t num_threads) {
  const bool leader = thread_idx == 0;
  const BurstLayout layout = args.layout;
  const std::uint32_t num_elems = static_cast<std::uint32_t>(layout.bytes_per_producer / kWidth);
  std::uint8_t* const ring = static_cast<std::uint8_t*>(args.dst);
  std::uint8_t* const producer_base = ring + static_cast<std::size_t>(producer_idx) * layout.bytes_per_producer;
  const bool scattered = layout.scattered();  // uniform: one branch per burst, outside the store loop
  const RowPermutation perm = layout.row_permutation();

  ProducerClock clock;
  if (leader) {
    clock.first_ns = ptx::globaltimer_ns();
    clock.first_cycles = ptx::clock64_cycles();
    clock.smid = ptx::smid();
    wait_for_start(args, producer_idx, clock);
  }
  producer_sync<kWarp>();

  // Incremental ring slot: no 64-bit modulo near the timed window.
  std::uint32_t slot = static_cast<std::uint32_t>(args.first_burst_idx % layout.num_slots);
  for (std::uint32_t b = 0; b < args.num_bursts; ++b) {
    const std::uint64_t burst_idx = args.first_burst_idx + b;
    std::uint8_t* slice = producer_base + static_cast<std::size_t>(slot) * layout.volume_bytes();
    std::uint32_t seed = pattern_seed(burst_idx, producer_idx);
    std::uint32_t first_row = scattered ? layout.logical_row(burst_idx, producer_idx, 0) : 0u;
    // Materialize the address and seed before the start stamp (volatile asm keeps program order).
    asm volatile("" : "+l"(slice), "+r"(seed), "+r"(first_row));

    BurstRecord record;
    if (leader) {
      record.start_ns = ptx::globaltimer_ns();
      record.start_cycles = ptx::clock64_cycles();
    }
    producer_sync<kWarp>();  // no thread stores before the start stamp
    if (scattered) {
      store_rows<kWidth>(ring, perm, first_row, seed, thread_idx, num_threads, num_elems);
    } else {
      store_slice<kWidth>(slice, seed, thread_idx, num_threads, num_elems);
    }
    producer_sync<kWarp>();  // every thread's stores were issued
    if (leader) record.issue_end_cycles = ptx::clock64_cycles();
    if constexpr (kCompletion) {
      ptx::fence_sc_sys();     // each thread waits for its own stores to be performed system-wide
      producer_sync<kWarp>();
      if (leader) record.fence_end_cycles = ptx::clock64_cycles();
    }
    if (leader) args.records[static_cast<std::size_t>(b) * layout.num_producers + producer_idx] = record;
    if (args.gap_cycles != 0) spin_cycles(args.gap_cycles);
    slot = slot + 1 == layout.num_slots ? 0 : slot + 1;
  }

  if (leader) {
    // Pad (no stores) until the launch spans min_launch_ns, bounded by clock64 as well.
    const std::uint64_t pad_start_cycles = ptx::clock64_cycles();
    while (ptx::globaltimer_ns() - clock.first_ns < args.min_launch_ns &&
           ptx::clock64_cycles() - pad_start_cycles < args.min_launch_ns * kMaxCyclesPerNs) {
    }
    clock.last_ns = ptx::globaltimer_ns();
    clock.last_cycles = ptx::clock64_cycles();
    args.clocks[producer_idx] = clock;
  }
}

// 1024 threads x 64 registers fill one SM; one CTA per SM is intended anyway.
template <int kWidth, bool kWarp, bool kCompletion>
__global__ void __launch_bounds__(1024, 1) burst_kernel(const BurstArgs args) {
  const std::uint32_t num_threads = kWarp ? 32u : blockDim.x;
  const std::uint32_t thread_idx = kWarp ? threadIdx.x % 32u : threadIdx.x;
  const std::uint32_t producer_idx = kWarp ? (threadIdx.x / 32u) * gridDim.x + blockIdx.x : blockIdx.x;
  if (producer_idx >= args.layout.num_producers) return;  // spare warps of the last warp row (warp-uniform)
  run_producer<kWidth, kWarp, kCompletion>(args, producer_idx, thread_idx, num_threads);
}

using BurstKernelFn = void (*)(BurstArgs);

// Runtime-to-template dispatch: [width 4/8/16][cta/warp][completion].
BurstKernelFn select_kernel(const BurstConfig& config) {
  static constexpr BurstKernelFn kTable[3][2][2] = {
      {{burst_kernel<4, false, false>, burst_kernel<4, false, true>},
       {burst_kernel<4, true, false>, burst_kernel<4, true, true>}},
      {{burst_kernel<8, false, false>, burst_kernel<8, false, true>},
       {burst_kernel<8, true, false>, burst_kernel<8, true, true>}},
      {{burst_kernel<16, false, false>, burst_kernel<16, false, true>},
       {burst_kernel<16, true, false>, burst_kernel<16, true, true>}},
  };
  int width_idx = -1;
  if (config.store_width_bytes == 4) width_idx = 0;
  if (config.store_width_bytes == 8) width_idx = 1;
  if (config.store_width_bytes == 16) width_idx = 2;
  if (width_idx < 0) return nullptr;
  return kTable[width_idx][config.warp_producers ? 1 : 0][config.completion ? 1 : 0];
}

cudaError_t prepare(const BurstConfig& config, BurstKernelFn* fn) {
  *fn = select_kernel(config);
  if (*fn == nullptr) return cudaErrorInvalidValue;
  return cudaFuncSetAttribute(*fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(config.dynamic_smem_bytes));
}

}  // namespace

cudaError_t burst_ctas_per_sm(const BurstConfig& config, int* ctas_per_sm) {
  BurstKernelFn fn = nullptr;
  if (const cudaError_t err = prepare(config, &fn); err != cudaSuccess) return err;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas_per_sm, fn, static_cast<int>(config.threads_per_cta),
                                                       config.dynamic_smem_bytes);
}

cudaError_t launch_burst(const BurstConfig& config, const BurstArgs& args, cudaStream_t stream) {
  BurstKernelFn fn = nullptr;
  if (const cudaError_t err = prepare(config, &fn); err != cudaSuccess) return err;
  fn<<<config.num_ctas, config.threads_per_cta, config.dynamic_smem_bytes, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace xs::kernels::remote_store
