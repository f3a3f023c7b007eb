// xstage attention layer (CUDA): device-side building blocks shared by the GPU tests and the fa_a2a
// runner: owned device buffers, a problem with fresh random Q/K/V, and "run one variant and bring its
// output back" helpers that poison every output first. Throws xs::Error (exit 3) on CUDA failures.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "xs/kernels/attention/flash_attention.hpp"
#include "xs/backends/cuda/device_buffer.hpp"

namespace xs::attention {

// Owned device memory and the fresh-input seed live in the runtime layer (shared with moe).
using runtime::DeviceBuffer;
using runtime::fresh_seed;

// Q, K, V: [num_heads][seq_len][head_dim] bf16, normal(0, stddev) from `seed` (q_stddev scales Q only:
// > 1 sharpens the softmax and exercises the running-max rescale).
struct FaProblem {
  int num_heads = 0, seq_len = 0, head_dim = 128;
  std::uint64_t seed = 0;
  DeviceBuffer q, k, v;
  FaProblem(int num_heads, int seq_len, int head_dim, std::uint64_t seed, float q_stddev = 1.0f);
  std::size_t elements() const { return static_cast<std::size_t>(num_heads) * seq_len * head_dim; }
  std::size_t bytes() const { return elements() * 2; }
  std::vector<std::uint16_t> download(const DeviceBuffer& b) const;
  // Points a kernel's argument block (FlashAttentionArgs, ReferenceAttentionArgs) at these inputs.
  template <class Args>
  void fill_inputs(Args& a) const {
    a.q = q.get();
    a.k = k.get();
    a.v = v.get();
    a.num_heads = num_heads;
    a.seq_len = seq_len;
    a.head_dim = head_dim;
  }
};

// cudaStreamSynchronize that names a timed-out mbarrier (flash_attention_timeout_message) on failure.
void sync_checked(cudaStream_t stream, const char* what);

// GPU reference for rows 0, row_step, ... of each head: [num_heads][rows][d] fp32 on the host.
std::vector<float> run_gpu_reference(const FaProblem& p, int row_step, cudaStream_t stream);

// FA-only into a poisoned O; returns O [num_heads][seq_len][d] bf16 bits.
std::vector<std::uint16_t> run_fa_local(const FaProblem& p, const kernels::attention::FlashAttentionConfig& config,
                                        cudaStream_t stream);

// Fused / completion-coupled into poisoned per-rank destinations in device memory; returns each rank's
// buffer ([M/P][dst_num_heads][d] bf16 bits).
struct UlyssesSpec {
  int num_ranks = 1;
  int dst_num_heads = 0;   // 0: num_heads
  int dst_head_offset = 0;
};
std::vector<std::vector<std::uint16_t>> run_fa_ulysses(const FaProblem& p,
                                                       const kernels::attention::FlashAttentionConfig& config,
                                                       kernels::attention::EpilogueMode mode,
                                                       const UlyssesSpec& spec, cudaStream_t stream,
                                                       std::vector<kernels::attention::TileRecord>* records = nullptr);

}  // namespace xs::attention
