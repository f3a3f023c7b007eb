// xstage backends/gpu layer: keeps `host` target buffers (mapped pinned host memory) alive between the points of
// a sweep, so each point does not pin and unpin gigabytes again (seconds per point at large T). Only host
// memory is kept: device and peer buffers count against the device-memory checks and are never cached.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <utility>

#include "xs/backends/gpu/targets.hpp"

namespace xs::runtime {

class HostTargetCache {
 public:
  // A host buffer of at least `bytes` for slot `slot` on `device`: the cached one when it is large enough,
  // else a fresh one (the old one freed first). Valid until the next acquire of the same slot or clear().
  // `target` must be kHost (input_error otherwise).
  TargetBuffer& acquire(const Target& target, int device, int slot, std::size_t bytes);
  void clear() { buffers_.clear(); }
  std::size_t held_bytes() const;

 private:
  std::map<std::pair<int, int>, std::unique_ptr<TargetBuffer>> buffers_;  // (device, slot)
};

// The cache the sweeps of this thread share (points run one after another on one thread; ranks as threads,
// --gpus N, each have their own, so no lock is needed).
HostTargetCache& host_target_cache();

}  // namespace xs::runtime
