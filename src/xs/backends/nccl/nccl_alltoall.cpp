// xstage backends/nccl layer: the NCCL all-to-all reference bandwidth (see nccl_alltoall.hpp).
#include "xs/backends/nccl/nccl_alltoall.hpp"

#include <algorithm>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "xs/common/error.hpp"
#include "xs/common/stats.hpp"
#include "xs/kernels/common/cuda_check.hpp"
#include "xs/backends/cuda/device_buffer.hpp"
#include "xs/backends/cuda/devices.hpp"
#include "xs/backends/nccl/nccl_plan.hpp"

#if defined(XS_HAVE_NCCL)
#include <nccl.h>
#endif

namespace xs::runtime {
#if defined(XS_HAVE_NCCL)
namespace {

// ncclAlltoAll appeared in NCCL 2.28; before it, the documented equivalent is a group of P sends and P receives.
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
constexpr const char* kMethod = "ncclAlltoAll";
#else
constexpr const char* kMethod = "ncclSend/ncclRecv group";
#endif

// One local rank's buffers, stream and events, on its device.
struct LocalRank {
  int device = -1;
  int world_rank = -1;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  DeviceBuffer send, recv;

  LocalRank(const NcclCommGroup::Member& m, std::size_t total_bytes)
      : device(m.device), world_rank(m.world_rank), comm(m.comm) {
    DeviceGuard guard(device);
    XS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    XS_CUDA_CHECK(cudaEventCreate(&start));
    XS_CUDA_CHECK(cudaEventCreate(&stop));
    send = DeviceBuffer(total_bytes);
    recv = DeviceBuffer(total_bytes);
  }
  ~LocalRank() {
    int previous = 0;
    (void)cudaGetDevice(&previous);
    (void)cudaSetDevice(device);
    send = DeviceBuffer();
    recv = DeviceBuffer();
    if (stop) (void)cudaEventDestroy(stop);
    if (start) (void)cudaEventDestroy(start);
    if (stream) (void)cudaStreamDestroy(stream);
    (void)cudaSetDevice(previous);
  }
  LocalRank(const LocalRank&) = delete;
  LocalRank& operator=(const LocalRank&) = delete;
};

// Issues one all-to-all on every local rank inside one group (one thread drives them all) and returns the
// slowest local rank's event time.
double alltoall_once(std::vector<std::unique_ptr<LocalRank>>& ranks, std::size_t block, int num_ranks) {
  for (auto& r : ranks) {
    DeviceGuard guard(r->device);
    XS_CUDA_CHECK(cudaEventRecord(r->start, r->stream));
  }
  ncclResult_t res = ncclGroupStart();
  for (auto& r : ranks) {
    if (res != ncclSuccess) break;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
    res = ncclAlltoAll(r->send.get(), r->recv.get(), block, ncclUint8, r->comm, r->stream);
#else
    for (int p = 0; p < num_ranks && res == ncclSuccess; ++p) {
      res = ncclSend(r->send.as<std::uint8_t>() + p * block, block, ncclUint8, p, r->comm, r->stream);
      if (res == ncclSuccess) res = ncclRecv(r->recv.as<std::uint8_t>() + p * block, block, ncclUint8, p, r->comm, r->stream);
    }
#endif
  }
  (void)num_ranks;
  const ncclResult_t end = ncclGroupEnd();  // always closed, so a failure leaves no group open
  XS_NCCL_CHECK(res);
  XS_NCCL_CHECK(end);
  double slowest_s = 0;
  for (auto& r : ranks) {
    DeviceGuard guard(r->device);
    XS_CUDA_CHECK(cudaEventRecord(r->stop, r->stream));
    XS_CUDA_CHECK(cudaEventSynchronize(r->stop));
    float ms = 0;
    XS_CUDA_CHECK(cudaEventElapsedTime(&ms, r->start, r->stop));
    slowest_s = std::max(slowest_s, 1e-3 * ms);
  }
  return slowest_s;
}

// Element-wise max of `values` over every rank of the communicator (each local rank contributes the same
// local values), so all processes agree on the slowest rank per iteration.
std::vector<double> max_over_ranks(std::vector<std::unique_ptr<LocalRank>>& ranks, const std::vector<double>& values) {
  std::vector<DeviceBuffer> buffers;
  for (auto& r : ranks) {
    DeviceGuard guard(r->device);
    buffers.push_back(upload(values));
    XS_CUDA_CHECK(cudaDeviceSynchronize());  // the pageable upload must land before the non-blocking stream reads it
  }
  ncclResult_t res = ncclGroupStart();
  for (std::size_t i = 0; i < ranks.size() && res == ncclSuccess; ++i)
    res = ncclAllReduce(buffers[i].get(), buffers[i].get(), values.size(), ncclFloat64, ncclMax, ranks[i]->comm,
                        ranks[i]->stream);
  const ncclResult_t end = ncclGroupEnd();
  XS_NCCL_CHECK(res);
  XS_NCCL_CHECK(end);
  for (auto& r : ranks) {
    DeviceGuard guard(r->device);
    XS_CUDA_CHECK(cudaStreamSynchronize(r->stream));
  }
  DeviceGuard guard(ranks.front()->device);
  return download<double>(buffers.front());
}

}  // namespace
#endif

NcclAlltoallReference nccl_alltoall_reference(const NcclCommGroup& comms, const NcclAlltoallOptions& options) {
  validate_alltoall_args(options.bytes_per_peer, options.warmup_iterations, options.timed_iterations);
#if !defined(XS_HAVE_NCCL)
  (void)comms;
  throw input_error("target", nccl_built_without_reason());
#else
  if (comms.num_local() < 1) throw input_error("comm", "no NCCL communicator given");
  const int num_ranks = comms.world_size();
  const std::size_t block = options.bytes_per_peer;
  const std::size_t total = block * static_cast<std::size_t>(num_ranks);

  std::vector<std::unique_ptr<LocalRank>> ranks;
  for (int i = 0; i < comms.num_local(); ++i) {
    ranks.push_back(std::make_unique<LocalRank>(comms.member(i), total));
    LocalRank& r = *ranks.back();
    // Block p of the send buffer goes to rank p: the pattern names (sender, receiver), so a misrouted block fails.
    std::vector<std::uint8_t> host(total);
    for (int p = 0; p < num_ranks; ++p)
      for (std::size_t b = 0; b < block; ++b)
        host[static_cast<std::size_t>(p) * block + b] = alltoall_pattern_byte(options.seed, r.world_rank, p, b);
    DeviceGuard guard(r.device);
    copy_to_device(r.send.get(), host.data(), total);
    XS_CUDA_CHECK(cudaMemset(r.recv.get(), 0, total));
    // A pageable cudaMemcpy may return before its DMA lands and cudaMemset is asynchronous; neither orders
    // with the non-blocking stream the all-to-all runs on, so wait here.
    XS_CUDA_CHECK(cudaDeviceSynchronize());
  }

  for (int i = 0; i < options.warmup_iterations; ++i) (void)alltoall_once(ranks, block, num_ranks);
  std::vector<double> local_times;
  for (int i = 0; i < options.timed_iterations; ++i) local_times.push_back(alltoall_once(ranks, block, num_ranks));

  NcclAlltoallReference ref;
  ref.bytes_per_peer = block;
  ref.num_ranks = num_ranks;
  ref.method = kMethod;
  ref.nccl_version = nccl_runtime_version();
  ref.time_s = max_over_ranks(ranks, local_times);
  ref.median_time_s = median(ref.time_s);
  const AlltoallBandwidth bw = alltoall_bandwidth(block, num_ranks, ref.median_time_s);
  ref.algbw_bps = bw.algbw_bps;
  ref.busbw_bps = bw.busbw_bps;

  ref.verified = true;
  for (auto& r : ranks) {
    std::vector<std::uint8_t> got(total);
    {
      DeviceGuard guard(r->device);
      copy_to_host(got.data(), r->recv.get(), total);
    }
    for (int src = 0; src < num_ranks && ref.verified; ++src)
      for (std::size_t b = 0; b < block; ++b) {
        const std::uint8_t want = alltoall_pattern_byte(options.seed, src, r->world_rank, b);
        const std::uint8_t have = got[static_cast<std::size_t>(src) * block + b];
        if (have != want) {
          ref.verified = false;
          ref.verification_error = fmt::format("rank {}: byte {} of the block from rank {} is 0x{:02x}, expected 0x{:02x}",
                                               r->world_rank, b, src, have, want);
          break;
        }
      }
    if (!ref.verified) break;
  }
  return ref;
#endif
}

void enqueue_nccl_alltoall(ncclComm* comm, const void* send, void* recv, std::size_t bytes_per_peer, void* stream) {
  if (comm == nullptr || send == nullptr || recv == nullptr)
    throw input_error("comm", "an all-to-all needs a communicator and both buffers");
#if !defined(XS_HAVE_NCCL)
  (void)bytes_per_peer;
  (void)stream;
  throw input_error("target", nccl_built_without_reason());
#else
  const auto st = static_cast<cudaStream_t>(stream);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  XS_NCCL_CHECK(ncclAlltoAll(send, recv, bytes_per_peer, ncclUint8, comm, st));
#else
  int num_ranks = 0;
  XS_NCCL_CHECK(ncclCommCount(comm, &num_ranks));
  XS_NCCL_CHECK(ncclGroupStart());
  ncclResult_t res = ncclSuccess;
  for (int p = 0; p < num_ranks && res == ncclSuccess; ++p) {
    res = ncclSend(static_cast<const std::uint8_t*>(send) + p * bytes_per_peer, bytes_per_peer, ncclUint8, p, comm, st);
    if (res == ncclSuccess)
      res = ncclRecv(static_cast<std::uint8_t*>(recv) + p * bytes_per_peer, bytes_per_peer, ncclUint8, p, comm, st);
  }
  const ncclResult_t end = ncclGroupEnd();
  XS_NCCL_CHECK(res);
  XS_NCCL_CHECK(end);
#endif
#endif
}

}  // namespace xs::runtime
