// xstage kernels layer (attention): the FlashAttention launch's host-side plan and per-device state: the tile
// scheduler it runs (heads per band, split tail), the records it writes, and the buffers it keeps (the timeout
// report, the dynamic scheduler's counters, the split tail's workspace).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include <cuda_runtime.h>

#include "xs/kernels/attention/flash_attention_internal.hpp"
#include "xs/common/error.hpp"
#include "xs/kernels/common/mapped_report.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::kernels::attention {

namespace {

WaitTimeoutReport*& timeout_report_host() { return mapped_report_host<WaitTimeoutReport>(); }

}  // namespace

WaitTimeoutReport* timeout_report_device() { return mapped_report_device<WaitTimeoutReport>(); }

std::string flash_attention_timeout_message() {
  volatile WaitTimeoutReport* r = timeout_report_host();
  if (r == nullptr || r->valid == 0) return "";
  static const char* const kNames[] = {"q_full", "q_empty", "k_full",    "k_empty",
                                       "v_full", "v_empty", "unit_full", "unit_empty"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<std::size_t>(WaitFlag::kCount),
                "a name per WaitFlag");
  const std::uint32_t flag = r->flag;
  const std::string msg = std::string("timeout waiting on mbarrier '") +
                          (flag < static_cast<std::uint32_t>(WaitFlag::kCount) ? kNames[flag] : "?") + "' (block " +
                          std::to_string(r->block) + ", thread " + std::to_string(r->thread) + ", tile " +
                          std::to_string(r->tile) + ", parity " + std::to_string(r->parity) + ")";
  r->valid = 0;
  return msg;
}

std::uint32_t* tile_counters_device() {
  static std::mutex mutex;
  static std::map<int, std::uint32_t*> of_device;
  int device = 0;
  XS_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mutex);
  std::uint32_t*& counters = of_device[device];
  if (counters == nullptr) {
    void* mem = nullptr;
    XS_CUDA_CHECK(cudaMalloc(&mem, 2 * sizeof(std::uint32_t)));
    XS_CUDA_CHECK(cudaMemset(mem, 0, 2 * sizeof(std::uint32_t)));
    // The memset runs on the legacy stream, which a non-blocking launch stream does not wait for.
    XS_CUDA_CHECK(cudaDeviceSynchronize());
    counters = static_cast<std::uint32_t*>(mem);
  }
  return counters;
}

int flash_attention_heads_per_band(const FlashAttentionConfig& config, const FlashAttentionArgs& args) {
  if (config.heads_per_band > 0) return config.heads_per_band;
  int device = 0, l2_bytes = 0;
  XS_CUDA_CHECK(cudaGetDevice(&device));
  XS_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  return auto_heads_per_band(args.num_heads, args.seq_len, args.head_dim, l2_bytes);
}

TileScheduler scheduler_of(const FlashAttentionConfig& config, const FlashAttentionArgs& a, int grid) {
  TileScheduler s;
  s.num_heads = static_cast<std::uint32_t>(a.num_heads);
  s.num_m_blocks = static_cast<std::uint32_t>(a.seq_len / TileShape::kBlockM);
  s.num_ctas = static_cast<std::uint32_t>(grid);
  s.cluster_size = static_cast<std::uint32_t>(config.kv_cluster_size);
  s.heads_per_band = static_cast<std::uint32_t>(flash_attention_heads_per_band(config, a));
  s.dynamic = config.tile_scheduler == TileSchedulerKind::kDynamic;
  s.num_kv_tiles = static_cast<std::uint32_t>(a.seq_len / TileShape::kBlockN);
  const TailSplit t = resolve_tail_split(config.tail_kv_splits, config.tail_split_units,
                                         static_cast<int>(s.num_tile_units()), static_cast<int>(s.num_clusters()),
                                         static_cast<int>(s.num_kv_tiles));
  s.kv_splits = static_cast<std::uint32_t>(t.kv_splits);
  s.split_units = static_cast<std::uint32_t>(t.split_units);
  return s;
}

SplitWorkspace split_workspace_device(std::uint64_t partial_floats, std::uint64_t num_counters, cudaStream_t stream) {
  struct Held {
    SplitWorkspace ws;
    std::uint64_t floats = 0, counters = 0;
  };
  static std::mutex mutex;
  static std::map<int, Held> of_device;
  int device = 0;
  XS_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mutex);
  Held& h = of_device[device];
  if (h.floats >= partial_floats && h.counters >= num_counters) return h.ws;
  const std::uint64_t floats = std::max(h.floats, partial_floats), counters = std::max(h.counters, num_counters);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  XS_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone)
    throw input_error("tail_kv_splits", "the split tail's workspace must grow to " +
                                            std::to_string(floats * 4 + counters * 4) +
                                            " bytes while the stream is being captured; launch this shape once "
                                            "before capturing");
  void* partials = nullptr;
  void* counter_mem = nullptr;
  XS_CUDA_CHECK(cudaMalloc(&partials, floats * sizeof(float)));
  XS_CUDA_CHECK(cudaMalloc(&counter_mem, counters * sizeof(std::uint32_t)));
  XS_CUDA_CHECK(cudaMemset(counter_mem, 0, counters * sizeof(std::uint32_t)));
  XS_CUDA_CHECK(cudaDeviceSynchronize());  // the memset ran on the legacy stream
  h.ws = SplitWorkspace{static_cast<float*>(partials), static_cast<std::uint32_t*>(counter_mem)};
  h.floats = floats;
  h.counters = counters;
  return h.ws;
}

std::uint64_t flash_attention_records_bytes(const FlashAttentionConfig& config, const FlashAttentionArgs& args) {
  FlashAttentionArgs a = args;  // asked before the records exist: their own size is not checked here
  a.records = nullptr;
  a.records_bytes = 0;
  validate_flash_attention(config, a);
  const TileScheduler s = scheduler_of(config, args, flash_attention_grid_size(config, args));
  return std::uint64_t{s.num_record_slots()} * 2 * sizeof(TileRecord);
}

}  // namespace xs::kernels::attention
