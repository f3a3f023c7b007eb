// xstage attention layer (CUDA): one fa_a2a point's device state (fa_runner.cpp builds it once per point): the
// inputs, the argument blocks of FA-only (layout-matched), fused, completion-coupled and heads-major, their
// destinations (fa_destinations.hpp) and the enqueue of every timed variant.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include <cuda_runtime.h>

#include "xs/attention/run/fa_destinations.hpp"
#include "xs/attention/run/fa_device.hpp"
#include "xs/attention/run/fa_runner.hpp"
#include "xs/backends/cuda/device_buffer.hpp"
#include "xs/backends/cuda/devices.hpp"
#include "xs/backends/cuda/stream.hpp"
#include "xs/backends/gpu/targets.hpp"
#include "xs/kernels/attention/flash_attention.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::attention {

// The point's device state: inputs, the variants' argument blocks, their destinations (fa_destinations.hpp).
struct FaPointDevice {
  const FaA2aPointSpec& spec;
  const FaExchange* ex;  // several ranks: a real All-to-All through their windows
  runtime::DeviceGuard guard;
  kernels::attention::FlashAttentionConfig config;
  FaProblem prob;
  runtime::Stream stream;
  cudaStream_t s;
  kernels::attention::FlashAttentionArgs base, fa, fused, cc, heads_major;
  kernels::attention::UlyssesLayout u;
  std::uint64_t per_rank = 0;
  std::unique_ptr<RankDestinations> dst;  // one-sender emulation only
  DeviceBuffer fa_out, out;
  void* contiguous = nullptr;
  std::vector<std::uint16_t> fa_slices, local;  // FA-only's verified output: rank slices, heads-major

  FaPointDevice(const FaA2aPointSpec& sp, const runtime::Target& target, const FaExchange* exchange,
                FaA2aPointResult& r);
  std::uint64_t records_bytes() const { return kernels::attention::flash_attention_records_bytes(config, fa); }
  void enqueue_a2a(cudaStream_t st) const {
    if (ex != nullptr) return ex->alltoall(fa_out.get(), ex->own_window, per_rank, st);
    for (int rank = 0; rank < spec.num_ranks; ++rank)
      XS_CUDA_CHECK(cudaMemcpyAsync(fused.dst[rank], fa.dst[rank], per_rank, cudaMemcpyDefault, st));
  }
  void enqueue_bulk(cudaStream_t st) const {
    XS_CUDA_CHECK(cudaMemcpyAsync(contiguous, fa_out.get(), fa_out.bytes(), cudaMemcpyDefault, st));
  }
  void enqueue_fa(cudaStream_t st) const { kernels::attention::launch_flash_attention(config, fa, st); }
  void enqueue_serial(cudaStream_t st) const {
    enqueue_fa(st);
    enqueue_a2a(st);
  }
  void enqueue_fused(cudaStream_t st) const { kernels::attention::launch_flash_attention(config, fused, st); }
  void enqueue_cc(cudaStream_t st) const { kernels::attention::launch_flash_attention(config, cc, st); }
  void enqueue_heads_major(cudaStream_t st) const { kernels::attention::launch_flash_attention(config, heads_major, st); }
};

}  // namespace xs::attention
