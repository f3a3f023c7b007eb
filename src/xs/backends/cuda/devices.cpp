// xstage backends/cuda layer: device properties and peer topology (see devices.hpp).
#include "xs/backends/cuda/devices.hpp"

#include <fmt/format.h>

#include <cstdio>

#include <cuda_runtime.h>

#include "xs/kernels/common/cuda_check.hpp"

namespace xs::runtime {
namespace {

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  XS_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

std::string format_uuid(const cudaUUID_t& uuid) {
  std::string out = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    out += hex;
    if (i == 3 || i == 5 || i == 7 || i == 9) out += '-';
  }
  return out;
}

}  // namespace

int count_devices() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    const std::string cuda = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    // Without any NVIDIA driver the runtime reports "driver version is insufficient": say what it means.
    int driver_version = 0, runtime_version = 0;
    (void)cudaDriverGetVersion(&driver_version);
    (void)cudaRuntimeGetVersion(&runtime_version);
    if (err == cudaErrorNoDevice || (err == cudaErrorInsufficientDriver && driver_version == 0))
      throw no_gpu_error("no usable GPU: no NVIDIA GPU or driver found on this machine (CUDA says " + cuda + ")");
    if (err == cudaErrorInsufficientDriver)
      throw no_gpu_error(fmt::format("no usable GPU: the NVIDIA driver supports CUDA {}.{}, older than the CUDA {}.{} "
                                     "runtime xstage was built with; update the driver", driver_version / 1000,
                                     driver_version % 1000 / 10, runtime_version / 1000, runtime_version % 1000 / 10));
    throw no_gpu_error("no usable GPU: cudaGetDeviceCount failed (" + cuda + ")");
  }
  if (count == 0) throw no_gpu_error("no usable GPU: CUDA finds no device (cudaGetDeviceCount returned 0)");
  return count;
}

DeviceInfo query_device(int index) {
  cudaDeviceProp prop{};
  XS_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  DeviceInfo d;
  d.index = index;
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.l2_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
  d.total_memory_bytes = prop.totalGlobalMem;
  // kHz in the attributes (cudaDeviceProp::clockRate is gone in CUDA 13).
  d.clock_rate_hz = 1e3 * attribute(cudaDevAttrClockRate, index);
  d.memory_clock_hz = 1e3 * attribute(cudaDevAttrMemoryClockRate, index);
  d.memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, index);
  d.smem_per_sm_bytes = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, index);
  d.smem_per_block_optin_bytes = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, index);
  d.max_threads_per_sm = attribute(cudaDevAttrMaxThreadsPerMultiProcessor, index);
  d.can_map_host_memory = attribute(cudaDevAttrCanMapHostMemory, index) != 0;
  char bus_id[32] = {};
  XS_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, index));
  d.pci_bus_id = bus_id;
  d.uuid = format_uuid(prop.uuid);
  return d;
}

Topology query_topology(int num_gpus) {
  Topology t;
  t.num_gpus = num_gpus;
  t.can_access.assign(num_gpus, std::vector<bool>(num_gpus, false));
  t.perf_rank.assign(num_gpus, std::vector<int>(num_gpus, -1));
  for (int i = 0; i < num_gpus; ++i) {
    for (int j = 0; j < num_gpus; ++j) {
      if (i == j) continue;
      int can = 0;
      XS_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, i, j));
      t.can_access[i][j] = can != 0;
      if (can) XS_CUDA_CHECK(cudaDeviceGetP2PAttribute(&t.perf_rank[i][j], cudaDevP2PAttrPerformanceRank, i, j));
    }
  }
  return t;
}

nlohmann::json to_json(const DeviceInfo& d) {
  return {{"index", d.index},
          {"name", d.name},
          {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"sm_count", d.sm_count},
          {"l2_bytes", d.l2_bytes},
          {"clock_rate_hz", d.clock_rate_hz},
          {"memory_clock_hz", d.memory_clock_hz},
          {"memory_bus_width_bits", d.memory_bus_width_bits},
          {"total_memory_bytes", d.total_memory_bytes},
          {"smem_per_sm_bytes", d.smem_per_sm_bytes},
          {"max_threads_per_sm", d.max_threads_per_sm},
          {"can_map_host_memory", d.can_map_host_memory},
          {"pci_bus_id", d.pci_bus_id},
          {"uuid", d.uuid}};
}

DeviceGuard::DeviceGuard(int device) {
  XS_CUDA_CHECK(cudaGetDevice(&previous_));
  if (device != previous_) XS_CUDA_CHECK(cudaSetDevice(device));
}
DeviceGuard::~DeviceGuard() { (void)cudaSetDevice(previous_); }

nlohmann::json to_json(const Topology& t) {
  return {{"num_gpus", t.num_gpus}, {"peer_access", t.can_access}, {"p2p_performance_rank", t.perf_rank}};
}

}  // namespace xs::runtime
