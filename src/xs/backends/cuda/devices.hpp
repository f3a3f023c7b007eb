// xstage backends/cuda layer: device properties and peer topology, queried once and reported in describe().
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace xs::runtime {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::uint64_t l2_bytes = 0;
  double clock_rate_hz = 0;         // peak SM clock (cudaDevAttrClockRate)
  double memory_clock_hz = 0;       // peak memory clock (cudaDevAttrMemoryClockRate)
  int memory_bus_width_bits = 0;
  std::uint64_t total_memory_bytes = 0;
  int smem_per_sm_bytes = 0;
  int smem_per_block_optin_bytes = 0;
  int max_threads_per_sm = 0;
  bool can_map_host_memory = false;
  std::string pci_bus_id;
  std::string uuid;
};

// Peer access as the runtime reports it: can_access[i][j] = cudaDeviceCanAccessPeer(i -> j);
// perf_rank[i][j] = cudaDevP2PAttrPerformanceRank (lower is a better link; -1 where no access).
struct Topology {
  int num_gpus = 0;
  std::vector<std::vector<bool>> can_access;
  std::vector<std::vector<int>> perf_rank;
};

// Number of CUDA devices; throws no_gpu_error (exit 77) when there is none or no usable driver.
int count_devices();
DeviceInfo query_device(int index);
Topology query_topology(int num_gpus);

nlohmann::json to_json(const DeviceInfo& info);
// Makes `device` current for a scope and restores the previous one (peer buffers live on another GPU).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

nlohmann::json to_json(const Topology& topology);

}  // namespace xs::runtime
