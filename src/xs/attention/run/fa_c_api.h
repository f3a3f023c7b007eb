/* xstage attention: a C ABI over launch_flash_attention, for the paired PyTorch script
 * (scripts/fa_vs_cudnn.py loads libxstage_fa.so with ctypes and times the FA-only launch beside cuDNN SDPA in
 * one process, on the same tensors, interleaved: the same power-capped regime for both). Plain C; no
 * exceptions cross it. */
#ifndef XSTAGE_FA_C_API_H
#define XSTAGE_FA_C_API_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XS_FA_C_API_VERSION 4
#if defined(__GNUC__)
#define XS_FA_EXPORT __attribute__((visibility("default")))
#else
#define XS_FA_EXPORT
#endif
#ifdef __cplusplus
#define XS_FA_NOEXCEPT noexcept
#else
#define XS_FA_NOEXCEPT
#endif

/* Output layouts of xs_fa_launch. */
#define XS_FA_OUT_HEADS_MAJOR 0 /* O [heads][M][d] bf16 (EpilogueMode kLocal: the layout of Q) */
#define XS_FA_OUT_ULYSSES 1     /* the bench's FA-only: the fused epilogue's P rank slices, each
                                   [M/P][heads][d] bf16, back to back in `out` (EpilogueMode kFused into one
                                   local buffer: the same stores and bytes as X-Stage-Fused) */

typedef struct XsFaDesc {
  int version;          /* XS_FA_C_API_VERSION */
  const void* q;        /* [heads][M][d] bf16 device memory, 16-byte aligned (a contiguous [1, H, M, d] tensor) */
  const void* k;
  const void* v;
  void* out;            /* see out_layout */
  uint64_t out_bytes;   /* capacity of out: heads * M * d * 2 either way */
  int seq_len;          /* M, a multiple of 128 (256 with kv_cluster_size 2) */
  int num_heads;
  int head_dim;         /* 64 or 128 */
  int out_layout;       /* XS_FA_OUT_* */
  int num_ranks;        /* P of XS_FA_OUT_ULYSSES (1..16, divides M); ignored for heads-major */
  int kv_cluster_size;  /* 1 or 2 */
  int tile_scheduler;   /* 0 static, 1 dynamic (the default of xstage-bench) */
  int num_ctas;         /* 0: one per SM */
  int heads_per_band;   /* tile order (src/xs/kernels/attention/scheduler.cuh): 1 m-block fastest (the kernel's default),
                           0 auto (bands of heads sized to L2), else a divisor of num_heads (version 2) */
  void* records;        /* version 3: NULL, or device memory of xs_fa_records_bytes (2 TileRecords per tile, more
                           with a split tail; src/xs/kernels/attention/layout.cuh): the instrumented launch the bench's
                           timelines use */
  uint64_t records_bytes;
  int store_barrier;    /* version 3: 1 = the warpgroup barrier after the output stores also when not instrumented */
  int tail_kv_splits;   /* version 4: 1 = off (0 is refused, not a default); 2..8 dividing M / 128: the last
                           tail_split_units tile units run in that many KV pieces (src/xs/kernels/attention/scheduler.cuh;
                           the bits may differ from 1's in the last place). Launches on one device must not overlap
                           in time (a per-device workspace), and the first launch of the largest split shape must
                           come before any stream capture (the workspace grows only outside capture) */
  int tail_split_units; /* version 4: tile units split: 0 = as many as clusters in the grid (about the last round),
                           else that many (at most all). Version 4 also changed the TileRecord layout (kv_begin,
                           partial_only, 96 bytes) */
} XsFaDesc;

/* Bytes of the TileRecords a launch of desc writes when desc->records is set, on the current device (the split
 * tail's pieces depend on the grid); 0 on bad input or a CUDA failure. */
XS_FA_EXPORT uint64_t xs_fa_records_bytes(const XsFaDesc* desc) XS_FA_NOEXCEPT;

/* Validates and enqueues one launch on `stream` (a cudaStream_t; 0 = the legacy default stream).
 * Stream-capturable. Returns 0, or the xstage exit code (2 bad input, 3 CUDA failure) with a message in
 * err[0..err_len) naming the problem. */
XS_FA_EXPORT int xs_fa_launch(const XsFaDesc* desc, void* stream, char* err, int err_len) XS_FA_NOEXCEPT;

/* The persistent grid a launch of desc uses on the current device; on failure minus the exit code (-2 bad input,
 * -3 CUDA failure) and a message. */
XS_FA_EXPORT int xs_fa_grid_size(const XsFaDesc* desc, char* err, int err_len) XS_FA_NOEXCEPT;

/* The heads per band of the tile order a launch of desc uses on the current device; on failure minus the exit code
 * and a message, as xs_fa_grid_size. */
XS_FA_EXPORT int xs_fa_heads_per_band(const XsFaDesc* desc, char* err, int err_len) XS_FA_NOEXCEPT;

XS_FA_EXPORT int xs_fa_c_api_version(void) XS_FA_NOEXCEPT;

#ifdef __cplusplus
}
#endif
#endif
