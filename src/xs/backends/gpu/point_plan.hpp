// xstage backends/gpu layer: turns a PointSpec into a launch plan (target, placement, ring) or the reason
// it cannot run here. Everything a point needs is decided here, before any launch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "xs/bench/sweep.hpp"
#include "xs/kernels/remote_store/burst.hpp"
#include "xs/report/records.hpp"
#include "xs/backends/cuda/devices.hpp"
#include "xs/backends/gpu/targets.hpp"

namespace xs::runtime {

inline constexpr std::uint64_t kGuardBytes = 64 << 10;               // poisoned guard on both sides of the ring
inline constexpr std::uint64_t kMinFreshRingBytes = 128ull << 20;    // fresh/scattered ring >= max(this, 2 x L2)
inline constexpr std::uint64_t kMaxVolumeBytes = 1ull << 30;         // V = K*B (the fresh ring holds >= 2 V)
inline constexpr std::uint64_t kMaxRecords = bench::kMaxProducerBursts;  // N*K timestamp records (32 B each)

struct PointPlan {
  Target target;
  kernels::remote_store::BurstConfig config;
  kernels::remote_store::BurstLayout layout;
  std::uint64_t buffer_bytes() const { return 2 * kGuardBytes + layout.ring_bytes(); }
};

// plan set: runnable. Otherwise `reason` starts with "unavailable" (this node lacks it: skipped) or
// says what input is wrong (the sweep fails with exit 2 before anything is launched).
struct PlanOutcome {
  std::optional<PointPlan> plan;
  std::string reason;
};
// held_bytes: destination memory the caller already holds for spec.target and will reuse (counts as free).
PlanOutcome plan_point(const PointSpec& spec, const DeviceInfo& device, const Topology& topology,
                       std::uint64_t held_bytes = 0);

}  // namespace xs::runtime
