// xstage backends/gpu layer: the host target buffer cache (see target_cache.hpp).
#include "xs/backends/gpu/target_cache.hpp"

#include "xs/common/error.hpp"

namespace xs::runtime {

TargetBuffer& HostTargetCache::acquire(const Target& target, int device, int slot, std::size_t bytes) {
  if (target.kind != TargetKind::kHost)
    throw input_error("target", "only host targets are cached (device and peer memory count against the checks)");
  auto& held = buffers_[{device, slot}];
  if (!held || held->bytes() < bytes) {
    held.reset();  // free before pinning the larger one
    held = std::make_unique<TargetBuffer>(target, device, bytes);
  }
  return *held;
}

std::size_t HostTargetCache::held_bytes() const {
  std::size_t total = 0;
  for (const auto& [key, buffer] : buffers_) total += buffer ? buffer->bytes() : 0;
  return total;
}

HostTargetCache& host_target_cache() {
  thread_local HostTargetCache cache;  // one per thread: ranks as threads (--gpus N) must not share the map
  return cache;
}

}  // namespace xs::runtime
