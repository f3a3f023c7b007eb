// xstage kernels layer (common): thin inline-PTX wrappers for the Hopper (sm_90a) kernels, FlashAttention
// and MegaMoE: mbarrier, TMA (cp.async.bulk.tensor), wgmma, named barriers, setmaxnreg, fences, flags.
// Device code only.
// Each cites its PTX ISA 9.0 section (https://docs.nvidia.com/cuda/parallel-thread-execution/, anchors
// given because section numbers shift between ISA versions). wgmma/setmaxnreg need sm_90a.
#pragma once
#include <cstdint>

#include "xs/kernels/common/ptx.cuh"

namespace xs::ptx {

__device__ __forceinline__ std::uint32_t smem_u32(const void* ptr) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(ptr));
}

// --- mbarrier ---------------------------------------------------------------------------------------
// PTX ISA "Parallel Synchronization and Communication Instructions: mbarrier"
// (#parallel-synchronization-and-communication-instructions-mbarrier). A 64-bit shared-memory object with
// an arrival count and a transaction (tx) byte count; a phase completes when both reach zero.
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, std::uint32_t arrival_count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(arrival_count) : "memory");
}
// "fence.mbarrier_init" (#parallel-synchronization-and-communication-instructions-membar): makes the
// initialisation visible to the async proxy (TMA complete_tx) before first use.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// "mbarrier.arrive" with .expect_tx: one arrival and tx_bytes more bytes expected this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t tx_bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(tx_bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}
// "mbarrier.test_wait/try_wait" (.parity): true once the phase with parity `parity` has completed.
// try_wait may suspend the thread for a system-dependent time before returning false. kClusterAcquire:
// .acquire.cluster, so the wait also sees writes another CTA of the cluster released with its arrive
// (mbarrier_arrive_cluster_release); otherwise the default .acquire.cta.
template <bool kClusterAcquire = false>
__device__ __forceinline__ bool mbarrier_try_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
  std::uint32_t done;
  if constexpr (kClusterAcquire) {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
  } else {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
  }
  return done != 0;
}

// --- TMA --------------------------------------------------------------------------------------------
// PTX ISA "Data Movement: cp.async.bulk.tensor" (#data-movement-and-conversion-instructions-cp-async-bulk-tensor):
// a 2D tile global -> shared, completing `box bytes` of tx on the mbarrier. The tensor map is a
// __grid_constant__ kernel parameter, so its generic address is valid here.
__device__ __forceinline__ void tma_load_2d(void* smem_dst, const void* tensor_map, std::uint64_t* bar,
                                            std::int32_t coord_inner, std::int32_t coord_outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
      ::"r"(smem_u32(smem_dst)), "l"(reinterpret_cast<std::uint64_t>(tensor_map)), "r"(coord_inner),
      "r"(coord_outer), "r"(smem_u32(bar))
      : "memory");
}
// "cp.async.bulk" (#data-movement-and-conversion-instructions-cp-async-bulk): `bytes` (a multiple of 16) from
// global `src` (16-byte aligned) to shared `smem_dst` (16-byte aligned) through the async proxy; the copy
// completes `bytes` of transaction count on `bar` (mbarrier::complete_tx::bytes), like a TMA tile load.
__device__ __forceinline__ void bulk_load_1d(void* smem_dst, const void* src, std::uint32_t bytes, std::uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(smem_u32(smem_dst)), "l"(reinterpret_cast<std::uint64_t>(src)), "r"(bytes), "r"(smem_u32(bar))
               : "memory");
}
// "prefetch.tensormap" (#data-movement-and-conversion-instructions-prefetch-prefetchu): warm the descriptor.
__device__ __forceinline__ void prefetch_tensormap(const void* tensor_map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<std::uint64_t>(tensor_map)) : "memory");
}

// The same 2D tile delivered to every CTA of the cluster named in cta_mask (".multicast::cluster"): the data
// land at the same shared-memory offset in each, and each destination's mbarrier at bar's offset gets the tx.
__device__ __forceinline__ void tma_load_2d_multicast(void* smem_dst, const void* tensor_map, std::uint64_t* bar,
                                                      std::int32_t coord_inner, std::int32_t coord_outer,
                                                      std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smem_u32(smem_dst)),
      "l"(reinterpret_cast<std::uint64_t>(tensor_map)), "r"(coord_inner), "r"(coord_outer), "r"(smem_u32(bar)),
      "h"(cta_mask)
      : "memory");
}

// --- Thread-block clusters --------------------------------------------------------------------------
// "Special registers: %cluster_ctarank" (#special-registers-cluster-ctarank): this CTA's rank in its cluster.
__device__ __forceinline__ std::uint32_t cluster_ctarank() {
  std::uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}
// "barrier.cluster" (#parallel-synchronization-and-communication-instructions-barrier-cluster): every
// non-exited thread of the cluster arrives (release) and waits (acquire); exited threads do not hold it up.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}
// "mapa" (#data-movement-and-conversion-instructions-mapa): the shared::cluster address of the variable at
// the shared::cta address `addr` in the CTA of rank `cta_rank`.
__device__ __forceinline__ std::uint32_t mapa_shared(std::uint32_t addr, std::uint32_t cta_rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(cta_rank));
  return remote;
}
// "mbarrier.arrive" on a barrier of any CTA in the cluster (a shared::cluster address from mapa_shared), with
// the default semantics (.release.cta): enough to free a buffer whose reads already completed (a stage the
// wgmmas of this warp finished), and no cluster-scope fence on every K/V tile.
__device__ __forceinline__ void mbarrier_arrive_cluster(std::uint32_t cluster_addr) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(cluster_addr) : "memory");
}
// The same with .release.cluster: this thread's earlier writes (e.g. st_shared_cluster_b32 into that CTA) are
// visible to whoever acquires the phase at cluster scope (mbarrier_try_wait_parity_cluster).
__device__ __forceinline__ void mbarrier_arrive_cluster_release(std::uint32_t cluster_addr) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(cluster_addr) : "memory");
}
// "st" to distributed shared memory (.shared::cluster): a 32-bit store into another CTA of the cluster.
__device__ __forceinline__ void st_shared_cluster_b32(std::uint32_t cluster_addr, std::uint32_t v) {
  asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(cluster_addr), "r"(v) : "memory");
}

// --- wgmma ------------------------------------------------------------------------------------------
// PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate" (#asynchronous-warpgroup-level-matrix-instructions).
// "Matrix Descriptor Format" (#asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor):
// bits 0-13 start address >> 4, 16-29 leading-dimension byte offset >> 4, 32-45 stride-dimension byte
// offset >> 4, 49-51 base offset (0: every tile here is 1024-byte aligned), 62-63 swizzle (1 = 128B).
__device__ __forceinline__ std::uint64_t make_smem_desc_sw128(std::uint32_t smem_addr, std::uint32_t lbo_bytes,
                                                             std::uint32_t sbo_bytes) {
  std::uint64_t desc = 0;
  desc |= static_cast<std::uint64_t>((smem_addr & 0x3FFFF) >> 4);
  desc |= static_cast<std::uint64_t>((lbo_bytes >> 4) & 0x3FFF) << 16;
  desc |= static_cast<std::uint64_t>((sbo_bytes >> 4) & 0x3FFF) << 32;
  desc |= static_cast<std::uint64_t>(1) << 62;
  return desc;
}

// "wgmma.fence": orders register accesses of the warpgroup before the first wgmma that reads them.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
// "wgmma.commit_group" / "wgmma.wait_group": batch the issued wgmmas; wait until at most N are pending.
__device__ __forceinline__ void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accesses of an accumulator across a wgmma issue/wait (the hardware
// writes it asynchronously, which the compiler cannot see). Emits no instruction.
template <int N>
__device__ __forceinline__ void fence_operands(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int N>
__device__ __forceinline__ void fence_operands(std::uint32_t (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

// D[64x128] (+)= A[64x16] * B[16x128]; A and B from shared memory, both K-major (tnsp 0, 0);
// scale_d = 0 overwrites D. Accumulator fragment (#wgmma-64n16-d): thread t of warp w holds rows
// 16w + t/4 (+8) and columns 8j + 2(t%4) (+1), d[4j + 2*row_half + col_odd].
__device__ __forceinline__ void wgmma_m64n128k16_f32_bf16_ss(float (&d)[64], std::uint64_t desc_a,
                                                            std::uint64_t desc_b, std::uint32_t scale_d) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// D[64x256] (+)= A[64x16] * B[16x256]; both K-major in shared memory (the b_n = 256 MegaMoE tile). Same
// fragment layout as m64n128 with j running to 31: d[4j + 2*row_half + col_odd], columns 8j + 2(t%4).
__device__ __forceinline__ void wgmma_m64n256k16_f32_bf16_ss(float (&d)[128], std::uint64_t desc_a,
                                                            std::uint64_t desc_b, std::uint32_t scale_d) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// D[64x128] (+)= A[64x32] * B[32x128] with e4m3 operands (fp8 W8A8), both K-major in shared memory
// (fp8 wgmma takes no transpose immediates). One k32 step is 32 B, as a bf16 k16 step: the 128B-swizzle
// descriptors are the same. Accumulator fragment as m64n128k16.
__device__ __forceinline__ void wgmma_m64n128k32_f32_e4m3_ss(float (&d)[64], std::uint64_t desc_a,
                                                            std::uint64_t desc_b, std::uint32_t scale_d) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, p, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// D[64x128] (+)= A[64x16] * B[16x128]; A from registers (4 x bf16x2 per thread, the accumulator layout
// of a 64x16 slice), B from shared memory MN-major (imm-tnsp-b = 1: V stored [kv][d], d contiguous).
__device__ __forceinline__ void wgmma_m64n128k16_f32_bf16_rs_tb(float (&d)[64], const std::uint32_t (&a)[4],
                                                               std::uint64_t desc_b, std::uint32_t scale_d) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "{%64, %65, %66, %67}, %68, p, 1, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}


// --- Cross-CTA flags (global memory) ----------------------------------------------------------------
// PTX ISA "ld" / "red" / "st" with .acquire / .release at .gpu scope (#data-movement-and-conversion-instructions-ld,
// #parallel-synchronization-and-communication-instructions-red) and "Memory Consistency Model: Release and
// Acquire Patterns" (#release-acquire-patterns): a consumer that acquires the value a producer released
// sees every write the producer made before the release (cumulativity covers writes ordered before it by
// a CTA barrier).
__device__ __forceinline__ std::uint32_t ld_acquire_gpu_u32(const std::uint32_t* ptr) {
  std::uint32_t value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(ptr) : "memory");
  return value;
}
__device__ __forceinline__ void st_release_gpu_u32(std::uint32_t* ptr, std::uint32_t value) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(ptr), "r"(value) : "memory");
}
__device__ __forceinline__ void red_release_gpu_add_u32(std::uint32_t* ptr, std::uint32_t value) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(ptr), "r"(value) : "memory");
}
// "fence.acq_rel.gpu" (#parallel-synchronization-and-communication-instructions-membar).
__device__ __forceinline__ void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
// "fence.proxy.async.global" (#parallel-synchronization-and-communication-instructions-membar): orders
// generic-proxy global accesses against async-proxy (TMA) accesses of the same memory. Writers run it after
// their st.global of data another CTA will TMA-load; readers after the acquire that observed the flag.
__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;" ::: "memory");
}
// "ld.global.nc" (#data-movement-and-conversion-instructions-ld-global-nc): 16 B through the read-only
// path, for inputs no thread of the launch writes (the arrival buffer).
__device__ __forceinline__ uint4 ld_global_nc_v4(const void* ptr) {
  uint4 v;
  asm volatile("ld.global.nc.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(ptr));
  return v;
}
__device__ __forceinline__ void st_shared_b8(std::uint32_t addr, std::uint8_t v) {
  asm volatile("st.shared.b8 [%0], %1;" ::"r"(addr), "h"(static_cast<std::uint16_t>(v)) : "memory");
}
__device__ __forceinline__ void st_shared_b16(std::uint32_t addr, std::uint16_t v) {
  asm volatile("st.shared.b16 [%0], %1;" ::"r"(addr), "h"(v) : "memory");
}
// "cvt.rn.bf16.f32" (#data-movement-and-conversion-instructions-cvt): one bf16, round to nearest even.
__device__ __forceinline__ std::uint16_t to_bf16_bits(float x) {
  std::uint16_t r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
  return r;
}

// --- Warpgroup roles and CTA barriers -------------------------------------------------------------
// "setmaxnreg" (#miscellaneous-instructions-setmaxnreg): moves registers between warpgroups; needs a
// register cap at kernel entry (__launch_bounds__(threads, 1)) and all warps of the warpgroup.
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}
// "bar.sync" with a barrier id and thread count (#parallel-synchronization-and-communication-instructions-bar):
// a named barrier among `num_threads` threads (a multiple of 32); id 0 is __syncthreads.
__device__ __forceinline__ void named_barrier_sync(std::uint32_t barrier_id, std::uint32_t num_threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(barrier_id), "r"(num_threads) : "memory");
}
// "bar.arrive" (same section): counts the calling warp's threads towards the barrier without waiting for it
// (a producer's half of a producer/consumer pair of named-barrier calls).
__device__ __forceinline__ void named_barrier_arrive(std::uint32_t barrier_id, std::uint32_t num_threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(barrier_id), "r"(num_threads) : "memory");
}
// "fence.proxy.async" (#parallel-synchronization-and-communication-instructions-membar): generic-proxy
// shared-memory writes become visible to the async proxy (wgmma, TMA) after this fence.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// --- Arithmetic and data movement -----------------------------------------------------------------
// "ex2.approx.ftz.f32" (#floating-point-instructions-ex2): 2^x, max rel. error 2^-22; ex2(-inf) = +0.
__device__ __forceinline__ float ex2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// "cvt" with .bf16x2 (#data-movement-and-conversion-instructions-cvt): lo -> bits 0-15, hi -> 16-31, RN.
__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  std::uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
// "st.shared" / "ld.shared" (#data-movement-and-conversion-instructions-st, -ld).
__device__ __forceinline__ void st_shared_b32(std::uint32_t addr, std::uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ std::uint32_t ld_shared_b32(std::uint32_t addr) {
  std::uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ uint4 ld_shared_v4(std::uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr)
               : "memory");
  return v;
}
// The 16-byte store of src/xs/kernels/common/ptx.cuh (the remote-store microbenchmarks' instruction), so the
// application kernels and the calibration issue the same STG.E.128.
__device__ __forceinline__ void st_global_v4(void* ptr, uint4 v) { st_global_v4_b32(ptr, v.x, v.y, v.z, v.w); }
__device__ __forceinline__ void st_global_cs_v4(void* ptr, uint4 v) { st_global_cs_v4_b32(ptr, v.x, v.y, v.z, v.w); }

}  // namespace xs::ptx
