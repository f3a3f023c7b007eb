// xstage backends/gpu layer (CUDA): the queries behind bench/topology_record.hpp: peer access, performance rank and
// native atomics of GPU pairs, their copy-engine reference bandwidth, the NCCL all-to-all reference over the
// run's GPUs, and one rank's device description for meta.ranks.
#pragma once
#include <vector>

#include <nlohmann/json.hpp>

#include "xs/bench/topology_record.hpp"

namespace xs::runtime {

// cudaDeviceCanAccessPeer, cudaDevP2PAttrPerformanceRank and cudaDevP2PAttrNativeAtomicSupported of each pair
// whose two GPUs exist on this node (pairs naming a missing GPU are left out). Throws Error (exit 3).
std::vector<bench::PeerLink> query_peer_links(const std::vector<bench::GpuPair>& pairs);

// meta.topology of a run on `gpus` whose points store across `pairs` (bench::topology_record_json): the
// links, a copy-engine reference per pair with peer access (cudaMemcpyPeerAsync, 256 MiB, median of 5), and
// the NCCL all-to-all reference (nccl_alltoall_reference over ncclCommInitAll of `gpus`, 1 MiB per peer; one
// GPU: a one-rank communicator, whose all-to-all is a local copy) when built with NCCL and every GPU exists.
// A reference that cannot be measured is recorded with its reason (it does not stop the run); the points' own
// measurements do not depend on it.
nlohmann::json measure_topology_record(const std::vector<int>& gpus, const std::vector<bench::GpuPair>& pairs,
                                       const std::vector<bench::PeerLink>& links);

// One rank's entry of meta.ranks: its device (runtime::to_json(DeviceInfo): name, UUID, PCI bus id, ...), the
// driver and runtime versions, and the node's peer topology as CUDA reports it (to_json(Topology): peer
// access and performance rank of every pair, the nvidia-smi topo -m equivalent without NVML).
nlohmann::json describe_rank_device(int device);

}  // namespace xs::runtime
