// xstage kernels layer (attention): the simple GPU reference (one warp per query row, fp32 math,
// exact expf, no tensor cores). Slow; used by tests and the runner as the oracle for large shapes, and
// itself checked against the CPU float64 reference (src/xs/attention/reference/cpu_reference.hpp) on small shapes.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace xs::kernels::attention {

struct ReferenceAttentionArgs {
  const void* q = nullptr;  // [num_heads][seq_len][head_dim] bf16
  const void* k = nullptr;
  const void* v = nullptr;
  float* out = nullptr;     // [num_heads][num_rows_per_head][head_dim] fp32: row i is query row i*row_step
  int num_heads = 0;
  int seq_len = 0;
  int head_dim = 128;       // <= 256, a multiple of 32
  int row_step = 1;         // compute query rows 0, row_step, 2*row_step, ... of each head
  float softmax_scale = 0;  // 0: 1/sqrt(d)
  int num_rows_per_head() const { return (seq_len + row_step - 1) / row_step; }
};

// Enqueues the reference; throws xs::input_error on bad arguments, xs::Error on a launch failure.
void launch_reference_attention(const ReferenceAttentionArgs& args, cudaStream_t stream);

}  // namespace xs::kernels::attention
