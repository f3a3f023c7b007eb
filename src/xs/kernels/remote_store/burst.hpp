// xstage kernels layer: host launch API of the remote-store burst kernel. One kernel serves the three
// suites of the paper's section 3: periodic bursts, isolated bursts (num_bursts = 1 after a host-side
// recovery), and the local-memory control (same kernel, destination in device HBM).
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "xs/kernels/remote_store/layout.cuh"

namespace xs::kernels::remote_store {

// Per producer and burst, written by the producer's leader thread outside the timed window.
struct BurstRecord {
  std::uint64_t start_cycles = 0;      // clock64 just before the producer's first store
  std::uint64_t issue_end_cycles = 0;  // clock64 after every thread of the producer issued its stores
  std::uint64_t fence_end_cycles = 0;  // clock64 after every thread's fence.sc.sys (completion mode), else 0
  std::uint64_t start_ns = 0;          // %globaltimer at burst start (aligns producers across SMs)
};

// Per producer and launch: (cycles, ns) at both ends give the SM clock of this launch.
struct ProducerClock {
  std::uint64_t first_cycles = 0, first_ns = 0;
  std::uint64_t last_cycles = 0, last_ns = 0;
  std::uint64_t barrier_arrival_ns = 0;  // when this producer reached the start barrier
  std::uint64_t start_time_ns = 0;       // the start time it waited for (arrival > start: late)
  std::uint32_t smid = 0;
  std::uint32_t reserved = 0;
};

// Placement and the choices that select a kernel instance.
// A CTA producer is one CTA; a warp producer is one warp, spread over min(K, num_SMs) CTAs
// (producer p = warp (p / num_ctas) of CTA (p % num_ctas)). Every CTA requests more than half an SM's
// shared memory (unused), so at most one CTA runs per SM: K CTA producers use K distinct SMs, and the
// start barrier can rely on every producer being co-resident (checked with the occupancy API).
struct BurstConfig {
  int store_width_bytes = 16;  // W: 4, 8 or 16 (st.global.b32 / .v2.b32 / .v4.b32)
  bool warp_producers = false;
  bool completion = false;     // fence.sc.sys after each burst (remote-visible horizon)
  std::uint32_t num_ctas = 1;
  std::uint32_t threads_per_cta = 256;
  std::uint32_t dynamic_smem_bytes = 0;
};

inline BurstConfig make_burst_config(int store_width_bytes, bool warp_producers, bool completion,
                                     std::uint32_t num_producers, std::uint32_t threads_per_producer,
                                     int sm_count, int smem_per_sm_bytes) {
  BurstConfig c;
  c.store_width_bytes = store_width_bytes;
  c.warp_producers = warp_producers;
  c.completion = completion;
  if (warp_producers) {
    const std::uint32_t sms = static_cast<std::uint32_t>(sm_count > 0 ? sm_count : 1);
    c.num_ctas = num_producers < sms ? num_producers : sms;
    c.threads_per_cta = 32u * ((num_producers + c.num_ctas - 1) / c.num_ctas);
  } else {
    c.num_ctas = num_producers;
    c.threads_per_cta = threads_per_producer;
  }
  // Two CTAs would need 2 * (smem + 1 KiB reserved) > smem_per_sm.
  c.dynamic_smem_bytes = static_cast<std::uint32_t>(smem_per_sm_bytes / 2 + 1024);
  return c;
}

struct BurstArgs {
  void* dst = nullptr;                      // ring base: a device-visible address in the target memory
  BurstLayout layout;                       // K, B, ring slots
  std::uint32_t num_bursts = 1;             // N bursts in this launch
  std::uint64_t first_burst_idx = 0;        // global index of this launch's burst 0 (ring slot, pattern)
  std::uint64_t gap_cycles = 0;             // G in SM cycles: clock64 busy spin with no stores
  std::uint64_t start_lead_ns = 50'000;     // start barrier: start = first producer's arrival + lead
  std::uint64_t barrier_timeout_ns = 2'000'000'000;  // spin-wait limit, then trap
  std::uint64_t min_launch_ns = 200'000;    // pad so the SM-clock window is >> %globaltimer granularity
  std::uint64_t* start_time_ns = nullptr;   // device word: 0 before the launch (tests may preset it)
  BurstRecord* records = nullptr;           // device memory, [num_bursts][num_producers]
  ProducerClock* clocks = nullptr;          // device memory, [num_producers]
  std::uint32_t* status = nullptr;          // mapped host memory: BurstStatus, readable after a trap
};

// CTAs of this configuration one SM can hold (0: the CTA does not fit). Needs the current device.
cudaError_t burst_ctas_per_sm(const BurstConfig& config, int* ctas_per_sm);

// Enqueues the kernel; returns the launch error (cudaGetLastError), or cudaErrorInvalidValue for a
// store width other than 4, 8, 16.
cudaError_t launch_burst(const BurstConfig& config, const BurstArgs& args, cudaStream_t stream);

}  // namespace xs::kernels::remote_store
