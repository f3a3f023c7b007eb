// xstage kernels layer: thin inline-PTX wrappers used by the microbenchmark kernels. Each cites the
// PTX ISA 9.0 section it relies on (https://docs.nvidia.com/cuda/parallel-thread-execution/, anchors
// given because section numbers shift between ISA versions). Device code only.
#pragma once
#include <cstdint>

namespace xs::ptx {

// --- Stores ---------------------------------------------------------------------------------------
// PTX ISA "Data Movement and Conversion Instructions: st" (#data-movement-and-conversion-instructions-st).
// Plain (.weak, default .wb) global stores: the kind a GEMM epilogue issues to a peer-mapped buffer.
// The "memory" clobber keeps the compiler from moving them across the clock reads that bound a burst.
// .global needs a global-window address: cudaMalloc, peer-mapped and cudaHostGetDevicePointer
// addresses all are (generic-to-global is the identity on sm_90, see "Generic Addressing").
__device__ __forceinline__ void st_global_b32(void* ptr, std::uint32_t a) {
  asm volatile("st.global.b32 [%0], %1;" ::"l"(ptr), "r"(a) : "memory");
}
__device__ __forceinline__ void st_global_v2_b32(void* ptr, std::uint32_t a, std::uint32_t b) {
  asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(ptr), "r"(a), "r"(b) : "memory");
}
// 16 B per thread: SASS STG.E.128.
__device__ __forceinline__ void st_global_v4_b32(void* ptr, std::uint32_t a, std::uint32_t b, std::uint32_t c,
                                                 std::uint32_t d) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(ptr), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}

// The same store with the .cs cache operator (cache streaming: "likely to be accessed once"; the lines are
// allocated evict-first, so data written once does not push reused data out of L2). PTX ISA "st",
// "Cache Operators" (#cache-operators).
__device__ __forceinline__ void st_global_cs_v4_b32(void* ptr, std::uint32_t a, std::uint32_t b, std::uint32_t c,
                                                    std::uint32_t d) {
  asm volatile("st.global.cs.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(ptr), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}

// A release store at system scope: makes a status word written before __trap() visible to the host.
// PTX ISA "st" (.release.sys) and "Memory Consistency Model: Scope" (#scope).
__device__ __forceinline__ void st_release_sys_u32(std::uint32_t* ptr, std::uint32_t value) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(ptr), "r"(value) : "memory");
}

// Acquire load at system scope, for flags written by the host or another GPU.
// PTX ISA "ld" (.acquire.sys) (#data-movement-and-conversion-instructions-ld).
__device__ __forceinline__ std::uint64_t ld_acquire_sys_u64(const std::uint64_t* ptr) {
  std::uint64_t value;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(ptr) : "memory");
  return value;
}

// --- Fences ---------------------------------------------------------------------------------------
// PTX ISA "Parallel Synchronization and Communication Instructions: membar / fence"
// (#parallel-synchronization-and-communication-instructions-membar). fence.sc.sys (== membar.sys on
// sm_70+) orders this thread's earlier stores before everything after it for all observers in the
// system; in hardware it waits until they are acknowledged. Used as the remote-visible horizon.
__device__ __forceinline__ void fence_sc_sys() { asm volatile("fence.sc.sys;" ::: "memory"); }

// --- Timers ---------------------------------------------------------------------------------------
// PTX ISA "Special Registers: %clock64" (#special-registers-clock64): per-SM cycle counter. Counters of
// different SMs are not synchronized, so only same-SM differences are meaningful.
__device__ __forceinline__ std::uint64_t clock64_cycles() {
  std::uint64_t cycles;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(cycles)::"memory");
  return cycles;
}

// PTX ISA "Special Registers: %globaltimer" (#special-registers-globaltimer): a 64-bit nanosecond timer
// shared by all SMs. Its update granularity is target-specific (up to ~1 us), so it only times windows
// much longer than that: the SM clock derivation and the start barrier.
__device__ __forceinline__ std::uint64_t globaltimer_ns() {
  std::uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns)::"memory");
  return ns;
}

// PTX ISA "Special Registers: %smid" (#special-registers-smid): which SM runs this CTA (diagnostics).
__device__ __forceinline__ std::uint32_t smid() {
  std::uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

}  // namespace xs::ptx
