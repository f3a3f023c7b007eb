// xstage backends/gpu layer: remote-store destinations (see targets.hpp).
#include "xs/backends/gpu/targets.hpp"

#include <cstring>

#include <fmt/format.h>

#include "xs/common/error.hpp"
#include "xs/common/units.hpp"
#include "xs/kernels/common/cuda_check.hpp"
#include "xs/backends/nccl/nccl_window.hpp"

namespace xs::runtime {
namespace {

constexpr const char* kTargetForms = "use local, host, peer:N or nccl:N (N a GPU index)";

[[noreturn]] void throw_alloc_error(const char* what, std::size_t bytes, int device, cudaError_t err) {
  (void)cudaGetLastError();
  throw Error(ExitCode::kDeviceFailure, "cuda", what,
              fmt::format("{} of {} for the destination ring on GPU {} failed: {} ({})", what,
                          format_bytes(static_cast<double>(bytes)), device, cudaGetErrorName(err),
                          cudaGetErrorString(err)));
}

}  // namespace

Target parse_target(const std::string& text) {
  Target t;
  t.text = text;
  if (text == "local") return t;
  if (text == "host") {
    t.kind = TargetKind::kHost;
    return t;
  }
  for (auto [prefix, kind] : {std::pair{"peer:", TargetKind::kPeer}, std::pair{"nccl:", TargetKind::kNccl}}) {
    const std::string p = prefix;
    if (text.rfind(p, 0) == 0) {
      t.kind = kind;
      const long long n = parse_integer(text.substr(p.size()), "target");
      if (n < 0 || n > 1023)
        throw input_error("target", fmt::format("'{}': GPU index out of range; {}", text, kTargetForms));
      t.peer_device = static_cast<int>(n);
      return t;
    }
  }
  throw input_error("target", fmt::format("'{}' is not a GPU target; {}", text, kTargetForms));
}

std::optional<std::string> target_unavailable_reason(const Target& target, const DeviceInfo& device,
                                                     const Topology& topology) {
  switch (target.kind) {
    case TargetKind::kLocal:
      return std::nullopt;
    case TargetKind::kHost:
      if (!device.can_map_host_memory)
        return fmt::format("unavailable: GPU {} cannot map host memory (cudaDevAttrCanMapHostMemory = 0)",
                           device.index);
      return std::nullopt;
    case TargetKind::kPeer:
    case TargetKind::kNccl:
      break;
  }
  const int peer = target.peer_device;
  if (target.kind == TargetKind::kNccl) {
    if (peer >= topology.num_gpus)
      return fmt::format("unavailable: {} but this node has {} GPUs", target.text, topology.num_gpus);
    return nccl_target_unavailable_reason(device.index, peer);
  }
  if (peer == device.index)
    return fmt::format("target {} is the measuring GPU itself; use target local", target.text);
  if (topology.num_gpus == 1) return std::string("unavailable: one GPU");
  if (peer >= topology.num_gpus)
    return fmt::format("unavailable: {} but this node has {} GPUs", target.text, topology.num_gpus);
  if (!topology.can_access[device.index][peer])
    return fmt::format("unavailable: GPU {} cannot access GPU {} as a peer (cudaDeviceCanAccessPeer = 0)",
                       device.index, peer);
  return std::nullopt;
}

void enable_peer_access(int device, int peer) {
  DeviceGuard guard(device);
  const cudaError_t err = cudaDeviceEnablePeerAccess(peer, 0);
  if (err == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();  // not an error here; clear it so later checks start clean
    return;
  }
  cuda_check::check_cuda(err, "cudaDeviceEnablePeerAccess(peer, 0)", __FILE__, __LINE__);
}

TargetBuffer::TargetBuffer(const Target& target, int device, std::size_t bytes)
    : kind_(target.kind), owner_device_(device), bytes_(bytes) {
  switch (target.kind) {
    case TargetKind::kLocal: {
      DeviceGuard guard(device);
      if (const cudaError_t err = cudaMalloc(&device_ptr_, bytes); err != cudaSuccess)
        throw_alloc_error("cudaMalloc", bytes, device, err);
      break;
    }
    case TargetKind::kHost: {
      DeviceGuard guard(device);
      // Portable: valid for every context; Mapped: the GPU stores to it directly over PCIe.
      if (const cudaError_t err = cudaHostAlloc(&host_ptr_, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
          err != cudaSuccess)
        throw_alloc_error("cudaHostAlloc(mapped, portable)", bytes, device, err);
      XS_CUDA_CHECK(cudaHostGetDevicePointer(&device_ptr_, host_ptr_, 0));
      break;
    }
    case TargetKind::kPeer: {
      owner_device_ = target.peer_device;
      enable_peer_access(device, target.peer_device);
      DeviceGuard guard(target.peer_device);
      if (const cudaError_t err = cudaMalloc(&device_ptr_, bytes); err != cudaSuccess)
        throw_alloc_error("cudaMalloc on the peer", bytes, target.peer_device, err);
      break;
    }
    case TargetKind::kNccl: {
      NcclTargetWindow::Outcome made = NcclTargetWindow::create(device, target.peer_device, bytes);
      if (!made.window)  // callers ask target_unavailable_reason first; reaching here is a caller's mistake
        throw Error(ExitCode::kBadInput, "input", "target",
                    fmt::format("{}: {} (check target_unavailable_reason before making the buffer)", target.text,
                                made.unavailable_reason));
      nccl_ = std::move(made.window);
      owner_device_ = nccl_->owner_device();
      device_ptr_ = nccl_->store_ptr();
      break;
    }
  }
}

void* TargetBuffer::owner_ptr() const { return nccl_ ? nccl_->owner_ptr() : device_ptr_; }

TargetBuffer::~TargetBuffer() {
  // Destructors do not throw: a failing free during unwinding must not hide the first error.
  if (nccl_) {
    nccl_.reset();  // device communicator, window, ncclMemFree, then the communicator
  } else if (host_ptr_ != nullptr) {
    (void)cudaFreeHost(host_ptr_);
  } else if (device_ptr_ != nullptr) {
    int previous = 0;
    (void)cudaGetDevice(&previous);
    (void)cudaSetDevice(owner_device_);
    (void)cudaFree(device_ptr_);
    (void)cudaSetDevice(previous);
  }
}

void TargetBuffer::poison(std::size_t bytes) {
  if (host_ptr_ != nullptr) {
    std::memset(host_ptr_, 0xFF, bytes);
    return;
  }
  DeviceGuard guard(owner_device_);
  XS_CUDA_CHECK(cudaMemset(owner_ptr(), 0xFF, bytes));
  XS_CUDA_CHECK(cudaDeviceSynchronize());
}

const std::uint32_t* TargetBuffer::host_words(std::size_t bytes, std::vector<std::uint32_t>& scratch) const {
  if (host_ptr_ != nullptr) return static_cast<const std::uint32_t*>(host_ptr_);
  if (scratch.size() < (bytes + 3) / 4) scratch.resize((bytes + 3) / 4);
  XS_CUDA_CHECK(cudaMemcpy(scratch.data(), owner_ptr(), bytes, cudaMemcpyDeviceToHost));
  return scratch.data();
}

std::optional<std::string> sm90_point_unavailable_reason(const Target& target, int device, DeviceInfo* info) {
  const int num_gpus = count_devices();
  if (device < 0 || device >= num_gpus)
    throw input_error("device", "GPU " + std::to_string(device) + " does not exist here");
  *info = query_device(device);
  if (auto why = target_unavailable_reason(target, *info, query_topology(num_gpus))) {
    if (why->rfind("unavailable", 0) != 0) throw input_error("target", *why);
    return why;
  }
  if (info->cc_major != 9)
    return "unavailable: the kernel is built for sm_90a, GPU " + std::to_string(device) + " is sm_" +
           std::to_string(info->cc_major * 10 + info->cc_minor);
  return std::nullopt;
}

}  // namespace xs::runtime
