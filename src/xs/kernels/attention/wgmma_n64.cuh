// xstage kernels layer (attention): the one wgmma shape only the head-dim-64 FlashAttention needs,
// O[64 x 64] (+)= P[64 x 16] V[16 x 64] with A from registers and B MN-major in shared memory (PTX ISA
// "wgmma.mma_async", #asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async). Kept beside the
// kernel (common/ptx_hopper.cuh holds the shapes several kernels share). Device only, sm_90a.
#pragma once
#include <cstdint>

namespace xs::kernels::attention {

// D[64x64] (+)= A[64x16] * B[16x64]; A: 4 x bf16x2 per thread in the accumulator layout of a 64x16 slice;
// B: imm-tnsp-b = 1 (V stored [kv][d], d contiguous). Accumulator fragment as m64n128 with j < 8:
// thread t of warp w holds rows 16w + t/4 (+8), columns 8j + 2(t%4) (+1), d[4j + 2*row_half + col_odd].
// scale_d = 0 overwrites D.
__device__ __forceinline__ void wgmma_m64n64k16_f32_bf16_rs_tb(float (&d)[32], const std::uint32_t (&a)[4],
                                                              std::uint64_t desc_b, std::uint32_t scale_d) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "{%32, %33, %34, %35}, %36, p, 1, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

}  // namespace xs::kernels::attention
