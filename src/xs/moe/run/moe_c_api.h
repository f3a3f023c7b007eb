/* xstage moe: a C ABI over launch_megamoe, for the paired PyTorch script (scripts/moe_vs_grouped_mm.py loads
 * libxstage_moe.so with ctypes and times the MegaMoE kernel beside torch grouped_mm / _scaled_grouped_mm in
 * one process, on the same device tensors, with the same graph-replay protocol). Plain C; no exceptions
 * cross it. Tensor layouts and meanings: src/xs/kernels/moe/megamoe.hpp (MegaMoeArgs). */
#ifndef XSTAGE_MOE_C_API_H
#define XSTAGE_MOE_C_API_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XS_MOE_C_API_VERSION 1
#if defined(__GNUC__)
#define XS_MOE_EXPORT __attribute__((visibility("default")))
#else
#define XS_MOE_EXPORT
#endif
#ifdef __cplusplus
#define XS_MOE_NOEXCEPT noexcept
#else
#define XS_MOE_NOEXCEPT
#endif

#define XS_MOE_MAX_RANKS 16

/* schedule */
#define XS_MOE_EXPERT_WAVE 0
#define XS_MOE_INTERLEAVED 1
#define XS_MOE_SERIAL 2
/* phases (KernelPhases): all, Linear-1 alone, Linear-2 alone (each with its own zeroed sync words) */
#define XS_MOE_PHASES_ALL 0
#define XS_MOE_PHASES_LINEAR1 1
#define XS_MOE_PHASES_LINEAR2 2

typedef struct XsMoeDesc {
  int version;          /* XS_MOE_C_API_VERSION */
  int hidden, intermediate, num_experts, top_k, tokens_per_rank, num_ranks;
  int num_row_blocks, num_arrivals;
  int block_n;          /* 128 or 256 (fp8: 128) */
  int precision;        /* 0 bf16, 1 fp8 W8A8 */
  int schedule;         /* XS_MOE_* schedule */
  int experts_per_wave; /* expert wave width (>= 1) */
  int lead_rows;        /* interleaved D (>= 1) */
  int completion_coupled;  /* 0 fused epilogue, 1 fence.sc.sys per tile */
  int phases;           /* XS_MOE_PHASES_* */
  int num_ctas;         /* K_SM; 0: one per SM */
  int cooperative;      /* 1: cooperative launch (the default of xstage-bench), 0: occupancy check only */
  const void* arrival;  /* [num_arrivals][h] */
  void* pool;           /* [num_row_blocks * 128][h] */
  const void* w1;       /* [E][2I][h], rows 2j gate_j, 2j+1 up_j */
  const void* w2;       /* [E][h][I] */
  void* act;            /* [num_row_blocks * 128][I] */
  const float* arrival_scale; /* fp8 only: [num_arrivals][h/128] */
  float* pool_scale;          /* [h/128][pool rows] */
  const float* w1_scale;      /* [E][2I/128][h/128] */
  const float* w2_scale;      /* [E][h/128][I/128] */
  float* act_scale;           /* [I/64][pool rows] */
  const int32_t* pool_arrival; /* [pool rows], -1 padding */
  const int32_t* pool_dst_rank;
  const int32_t* pool_dst_slot;
  const float* pool_weight;
  const uint32_t* row_block_expert;   /* [num_row_blocks] */
  const uint32_t* expert_first_block; /* [E + 1] */
  void* dst[XS_MOE_MAX_RANKS];        /* [T * top_k][h] bf16 per rank */
  uint64_t dst_bytes[XS_MOE_MAX_RANKS];
  uint32_t* sync_words;  /* xs_moe_sync_bytes zeroed once per (problem, phases) */
  uint64_t sync_bytes;
} XsMoeDesc;

/* Enqueues one launch on `stream` (a cudaStream_t; capturable after one launch outside capture). Returns 0,
 * or the exit code of docs/exit-codes.md (2 bad descriptor, 3 CUDA failure) with the reason in err. */
XS_MOE_EXPORT int xs_moe_launch(const XsMoeDesc* desc, void* stream, char* err, int err_len) XS_MOE_NOEXCEPT;
/* Bytes of zeroed sync words a problem of num_row_blocks needs. */
XS_MOE_EXPORT uint64_t xs_moe_sync_bytes(int num_row_blocks) XS_MOE_NOEXCEPT;
/* After a failed launch: which spin-wait timed out, or "". */
XS_MOE_EXPORT int xs_moe_timeout_message(char* out, int out_len) XS_MOE_NOEXCEPT;
XS_MOE_EXPORT int xs_moe_c_api_version(void) XS_MOE_NOEXCEPT;

#ifdef __cplusplus
}
#endif
#endif
