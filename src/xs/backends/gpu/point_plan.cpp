// xstage backends/gpu layer: point planning (see point_plan.hpp).
#include "xs/backends/gpu/point_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "xs/bench/sweep.hpp"
#include "xs/common/error.hpp"
#include "xs/common/units.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::runtime {
namespace {

PlanOutcome reject(std::string reason) { return {std::nullopt, std::move(reason)}; }

static_assert(kScatterRowBytes == kernels::remote_store::BurstLayout::kRowBytes,
              "records.hpp and layout.cuh must agree on the scattered row size");

std::uint64_t free_bytes_on(int device) {
  DeviceGuard guard(device);
  std::size_t free = 0, total = 0;
  XS_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

}  // namespace

PlanOutcome plan_point(const PointSpec& spec, const DeviceInfo& device, const Topology& topology,
                       std::uint64_t held_bytes) {
  using kernels::remote_store::BurstLayout;
  try {
    bench::validate_spec(spec);  // widths, B multiple of W, N > warmup + 1, threads, ...
  } catch (const Error& e) {
    return reject(e.what());
  }
  if (spec.suite == Suite::kLocalControl && spec.target != "local")
    return reject(fmt::format("the local-memory control writes device HBM: target must be local, not {}", spec.target));
  PointPlan plan;
  try {
    plan.target = parse_target(spec.target);
  } catch (const Error& e) {
    return reject(e.what());
  }
  if (auto reason = target_unavailable_reason(plan.target, device, topology)) return reject(*reason);

  // Placement: one CTA per SM (burst.hpp); K must be co-resident for the start barrier.
  const auto k = static_cast<std::uint32_t>(spec.num_producers);
  const bool warp = spec.producer_kind == ProducerKind::kWarp;
  const std::uint64_t max_warp_producers = static_cast<std::uint64_t>(device.sm_count) * 32;
  if (warp && k > max_warp_producers)
    return reject(fmt::format("K={} exceeds co-resident warp producers ({} SMs x 32 warps)", k, device.sm_count));
  plan.config = kernels::remote_store::make_burst_config(spec.store_width_bytes, warp, spec.completion, k,
                                                         static_cast<std::uint32_t>(spec.threads_per_producer),
                                                         device.sm_count, device.smem_per_sm_bytes);
  int ctas_per_sm = 0;
  {
    DeviceGuard guard(device.index);
    XS_CUDA_CHECK(kernels::remote_store::burst_ctas_per_sm(plan.config, &ctas_per_sm));
  }
  if (ctas_per_sm < 1)
    return reject(fmt::format("a CTA of {} threads does not fit one SM with this kernel (occupancy 0)",
                              plan.config.threads_per_cta));
  if (!warp && k > static_cast<std::uint64_t>(device.sm_count) * ctas_per_sm)
    return reject(fmt::format("K={} exceeds co-resident producers ({} SMs x {} CTA)", k, device.sm_count, ctas_per_sm));

  // Ring: "fresh" gets >= max(128 MiB, 2 x L2) and >= 2 slots; "same" one slot; "scattered" 2^n rows of
  // 256 B, >= max(128 MiB, 2 x L2, 2 V) (layout.cuh).
  const std::uint64_t volume = spec.volume_bytes();
  if (volume > kMaxVolumeBytes)
    return reject(fmt::format("V=K*B={} exceeds the {} burst volume limit", format_bytes(static_cast<double>(volume)),
                              format_bytes(static_cast<double>(kMaxVolumeBytes))));
  BurstLayout layout;
  layout.bytes_per_producer = spec.bytes_per_producer;
  layout.num_producers = k;
  const std::uint64_t min_ring = std::max(kMinFreshRingBytes, 2 * device.l2_bytes);
  if (spec.address_mode == AddressMode::kFresh) {
    layout.num_slots = static_cast<std::uint32_t>(std::max<std::uint64_t>(2, (min_ring + volume - 1) / volume));
  } else if (spec.address_mode == AddressMode::kScattered) {
    if (spec.bytes_per_producer % BurstLayout::kRowBytes != 0)
      return reject(fmt::format("address_mode scattered stores {}-byte rows: B={} must be a multiple of {}",
                                BurstLayout::kRowBytes, spec.bytes_per_producer, BurstLayout::kRowBytes));
    layout.row_bits = kernels::remote_store::scattered_row_bits(std::max(min_ring, 2 * volume));
    layout.row_seed = spec.scatter_seed;
  }
  plan.layout = layout;
  if (static_cast<std::uint64_t>(spec.num_bursts) * k > kMaxRecords)
    return reject(fmt::format("N*K={} timestamp records exceed the limit of {}",
                              static_cast<std::uint64_t>(spec.num_bursts) * k, kMaxRecords));
  if (plan.target.kind != TargetKind::kHost) {
    // peer:N and nccl:N memory lives on GPU N (nccl:N is rank N's window).
    const int owner = plan.target.kind == TargetKind::kPeer || plan.target.kind == TargetKind::kNccl
                          ? plan.target.peer_device
                          : device.index;
    const std::uint64_t free = free_bytes_on(owner) + held_bytes;
    if (plan.buffer_bytes() > free)
      return reject(fmt::format("the destination ring of {} does not fit GPU {} (free {})",
                                format_bytes(static_cast<double>(plan.buffer_bytes())), owner,
                                format_bytes(static_cast<double>(free))));
  }
  return {plan, ""};
}

}  // namespace xs::runtime
