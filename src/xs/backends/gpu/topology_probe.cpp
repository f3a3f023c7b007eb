// xstage backends/gpu layer (CUDA): topology queries and references (see topology_probe.hpp).
#include "xs/backends/gpu/topology_probe.hpp"

#include <cuda_runtime.h>

#include <string>

#include "xs/common/error.hpp"
#include "xs/kernels/common/cuda_check.hpp"
#include "xs/backends/gpu/copy_bandwidth.hpp"
#include "xs/backends/cuda/devices.hpp"
#include "xs/backends/nccl/nccl_alltoall.hpp"
#include "xs/backends/nccl/nccl_comm.hpp"
#include "xs/backends/gpu/targets.hpp"

namespace xs::runtime {
namespace {

constexpr std::size_t kCopyBytes = std::size_t{256} << 20;
constexpr int kCopyRepetitions = 5;

nlohmann::json nccl_reference(const std::vector<int>& gpus, int num_gpus) {
  if (!nccl_built()) return {{"status", "unavailable: built without NCCL"}};
  if (gpus.empty()) return {{"status", "not measured: no GPU given"}};
  for (int g : gpus)
    if (g >= num_gpus)
      return {{"status", "not measured: GPU " + std::to_string(g) + " is not on this node (" +
                             std::to_string(num_gpus) + " GPUs)"}};
  try {
    const auto comms = NcclCommGroup::init_all(gpus);
    NcclAlltoallOptions options;
    nlohmann::json j = to_json(nccl_alltoall_reference(*comms, options));
    j["status"] = "ok";
    j["devices"] = gpus;
    return j;
  } catch (const Error& e) {
    return {{"status", std::string("not measured: ") + e.what()}};
  }
}

}  // namespace

std::vector<bench::PeerLink> query_peer_links(const std::vector<bench::GpuPair>& pairs) {
  const int num_gpus = count_devices();
  std::vector<bench::PeerLink> links;
  for (const auto& p : pairs) {
    if (p.from < 0 || p.to < 0 || p.from >= num_gpus || p.to >= num_gpus || p.from == p.to) continue;
    bench::PeerLink l;
    l.pair = p;
    int can = 0;
    XS_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, p.from, p.to));
    l.can_access = can != 0;
    if (l.can_access) {
      XS_CUDA_CHECK(cudaDeviceGetP2PAttribute(&l.performance_rank, cudaDevP2PAttrPerformanceRank, p.from, p.to));
      int atomics = 0;
      XS_CUDA_CHECK(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, p.from, p.to));
      l.native_atomics = atomics != 0;
    }
    links.push_back(l);
  }
  return links;
}

nlohmann::json measure_topology_record(const std::vector<int>& gpus, const std::vector<bench::GpuPair>& pairs,
                                       const std::vector<bench::PeerLink>& links) {
  const int num_gpus = count_devices();
  std::vector<bench::CopyReference> copies;
  for (const auto& p : pairs) {
    bench::CopyReference c;
    c.pair = p;
    c.bytes = static_cast<double>(kCopyBytes);
    bool accessible = false;
    for (const auto& l : links)
      if (l.pair == p) accessible = l.can_access;
    if (p.from >= num_gpus || p.to >= num_gpus) {
      c.status = "not measured: a GPU of the pair is not on this node";
    } else if (!accessible) {
      c.status = "not measured: no peer access";
    } else {
      try {
        c.bandwidth_bps = measure_copy_bandwidth_bps(Target{TargetKind::kPeer, p.to, "peer:" + std::to_string(p.to)},
                                                     p.from, kCopyBytes, kCopyRepetitions);
      } catch (const Error& e) {
        c.status = std::string("not measured: ") + e.what();
      }
    }
    copies.push_back(c);
  }
  return bench::topology_record_json(gpus, links, copies, nccl_reference(gpus, num_gpus));
}

nlohmann::json describe_rank_device(int device) {
  int driver = 0, runtime_version = 0;
  XS_CUDA_CHECK(cudaDriverGetVersion(&driver));
  XS_CUDA_CHECK(cudaRuntimeGetVersion(&runtime_version));
  const int num_gpus = count_devices();
  const DeviceInfo info = query_device(device);
  return {{"device", to_json(info)},
          {"uuid", info.uuid},
          {"driver_version", driver},
          {"cuda_runtime_version", runtime_version},
          {"topology", to_json(query_topology(num_gpus))}};
}

}  // namespace xs::runtime
