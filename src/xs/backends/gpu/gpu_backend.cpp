// xstage backends/gpu layer: the GPU measurement backend. One point = poison the destination, probe the SM
// clock, one discarded warm-up launch (its clock converts G to cycles), `repetitions` measured launches
// (one sample each, re-run when the SM clock was low), then read back and verify every byte the kernel
// claims to have written. Isolated bursts: each repetition is its own launch of one burst; the stream
// synchronization before it guarantees that the previous launch's stores completed (the recovery).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <cuda_runtime.h>
#include <fmt/format.h>
#if defined(XS_HAVE_NCCL)
#include <nccl.h>
#endif

#include "xs/kernels/common/clock_probe.hpp"
#include "xs/common/error.hpp"
#include "xs/common/program_name.hpp"
#include "xs/common/stats.hpp"
#include "xs/backends/gpu/burst_timeline.hpp"
#include "xs/kernels/common/cuda_check.hpp"
#include "xs/backends/gpu/copy_bandwidth.hpp"
#include "xs/backends/gpu/gpu_backend.hpp"
#include "xs/backends/gpu/gpu_backend_options.hpp"
#include "xs/backends/gpu/loaded_runner.hpp"
#include "xs/backends/gpu/point_plan.hpp"
#include "xs/backends/gpu/verification.hpp"

namespace xs::runtime {
namespace {

namespace rs = kernels::remote_store;

// Device-side scratch of the backend, grown on demand and freed on every path.
struct DeviceScratch {
  rs::BurstRecord* records = nullptr;
  std::size_t num_records = 0;
  rs::ProducerClock* clocks = nullptr;
  std::size_t num_clocks = 0;
  std::uint64_t* start_time_ns = nullptr;
  kernels::ClockProbeResult* probe = nullptr;
  std::uint32_t* status_host = nullptr;    // mapped pinned host word: readable after a trap
  std::uint32_t* status_device = nullptr;
  ~DeviceScratch() {
    (void)cudaFree(records);
    (void)cudaFree(clocks);
    (void)cudaFree(start_time_ns);
    (void)cudaFree(probe);
    if (status_host) (void)cudaFreeHost(status_host);
  }
};

template <typename T>
void grow(T*& ptr, std::size_t& capacity, std::size_t needed) {
  if (needed <= capacity) return;
  XS_CUDA_CHECK(cudaFree(ptr));
  ptr = nullptr;
  XS_CUDA_CHECK(cudaMalloc(&ptr, needed * sizeof(T)));
  capacity = needed;
}

class GpuBackend final : public Backend {
 public:
  GpuBackend(int device, const GpuBackendOptions& options) : device_(device), options_(options) {
    const int num_gpus = count_devices();
    if (device < 0 || device >= num_gpus)
      throw input_error("device", fmt::format("GPU {} does not exist: this node has {} (0..{})", device, num_gpus,
                                              num_gpus - 1));
    for (int i = 0; i < num_gpus; ++i) devices_.push_back(query_device(i));
    const DeviceInfo& d = devices_[device];
    if (d.cc_major != 9 || d.cc_minor != 0)
      throw no_gpu_error(fmt::format("GPU {} ({}) is sm_{}{}; the xstage kernels are built for sm_90a only", device,
                                     d.name, d.cc_major, d.cc_minor));
    XS_CUDA_CHECK(cudaSetDevice(device));
    XS_CUDA_CHECK(cudaFree(nullptr));  // create the context now, not inside the first timed call
    topology_ = query_topology(num_gpus);
    XS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    XS_CUDA_CHECK(cudaMalloc(&scratch_.start_time_ns, sizeof(std::uint64_t)));
    XS_CUDA_CHECK(cudaMalloc(&scratch_.probe, sizeof(kernels::ClockProbeResult)));
    XS_CUDA_CHECK(cudaHostAlloc(&scratch_.status_host, 64, cudaHostAllocMapped));
    XS_CUDA_CHECK(cudaHostGetDevicePointer(&scratch_.status_device, scratch_.status_host, 0));
    loaded_ = std::make_unique<LoadedRunner>(d, stream_, scratch_.status_host, scratch_.status_device,
                                             options_.clock_flag_fraction);
  }
  ~GpuBackend() override {
    loaded_.reset();
    buffers_.clear();
    if (stream_) (void)cudaStreamDestroy(stream_);
  }

  std::string name() const override { return "gpu"; }

  nlohmann::json describe() const override {
    int driver = 0, runtime = 0;
    XS_CUDA_CHECK(cudaDriverGetVersion(&driver));
    XS_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    nlohmann::json j = {{"backend", "gpu"}, {"device_index", device_}, {"driver_version", driver},
                        {"cuda_runtime_version", runtime}};
    j["devices"] = nlohmann::json::array();
    for (const auto& d : devices_) j["devices"].push_back(to_json(d));
    j.update(to_json(topology_));  // num_gpus, peer_access, p2p_performance_rank
#if defined(XS_HAVE_NCCL)
    int nccl = 0;
    XS_NCCL_CHECK(ncclGetVersion(&nccl));
    j["nccl_version"] = nccl;
#endif
    const auto& d = devices_[device_];
    j["burst_kernel"] = {
        {"arch", "sm_90a"},
        {"placement", "one CTA per SM (more than half the SM's shared memory requested, unused)"},
        {"dynamic_smem_bytes", d.smem_per_sm_bytes / 2 + 1024},
        {"start_lead_ns", options_.start_lead_ns},
        {"barrier_timeout_ns", options_.barrier_timeout_ns},
        {"min_launch_ns", options_.min_launch_ns},
        {"fresh_ring_min_bytes", std::max(kMinFreshRingBytes, 2 * d.l2_bytes)},
        {"scattered_row_bytes", kernels::remote_store::BurstLayout::kRowBytes},
        {"scattered_ring_min_bytes", std::max(kMinFreshRingBytes, 2 * d.l2_bytes)},
        {"guard_bytes", kGuardBytes},
        {"clock_flag_fraction", options_.clock_flag_fraction},
        {"max_reruns", options_.max_reruns}};
    j["loaded_kernel"] = {
        {"arch", "sm_90a"},
        {"tile", "128 x 128 output, k-blocks of 64 bf16, A and B boxes [128][64] (128B swizzle), 4-stage ring"},
        {"warps", "2 math warpgroups (wgmma m64n128k16), 1 TMA producer warp, storer warps (injection paced; "
                   "injection epilogue: none, the math warps store after their tiles)"},
        {"dynamic_smem_bytes", kernels::remote_store::LoadedShape::kSmemBytes},
        {"l2_working_set_blocks", loaded_num_blocks(WorkingSet::kL2, 512, d.l2_bytes)},
        {"hbm_working_set_blocks_at_k512", loaded_num_blocks(WorkingSet::kHbm, 512, d.l2_bytes)}};
    return j;
  }

  std::optional<std::string> unavailable_reason(const PointSpec& spec) const override {
    if (spec.suite == Suite::kLoaded) {
      LoadedPlanOutcome loaded = plan_loaded(spec, devices_[device_], topology_, held_bytes(spec.target));
      if (loaded.plan) return std::nullopt;
      return loaded.reason;
    }
    PlanOutcome outcome = plan_point(spec, devices_[device_], topology_, held_bytes(spec.target));
    if (outcome.plan) return std::nullopt;
    return outcome.reason;
  }

  PointRecord run(const PointSpec& spec) override;

  std::optional<double> reference_bandwidth_bps(const std::string& target_text) override {
    const Target target = parse_target(target_text);
    if (target_unavailable_reason(target, devices_[device_], topology_)) return std::nullopt;
    if (target.kind == TargetKind::kNccl) return std::nullopt;
    return measure_copy_bandwidth_bps(target, device_);
  }

 private:
  std::uint64_t held_bytes(const std::string& target) const {
    auto it = buffers_.find(target);
    return it == buffers_.end() ? 0 : it->second->bytes();
  }
  TargetBuffer& buffer_for(const PointPlan& plan);
  double probe_clock_hz();
  LaunchSample launch(const PointPlan& plan, const PointSpec& spec, std::uint64_t gap_cycles);
  // One sample: a launch, re-run up to max_reruns times while the SM clock is low (or, isolated, a
  // producer missed the start barrier); sets record.clock_flagged when the clock stayed low.
  LaunchSample measure_repetition(const PointPlan& plan, const PointSpec& spec, std::uint64_t gap_cycles, int rep,
                                  PointRecord& record);

  int device_;
  GpuBackendOptions options_;
  std::vector<DeviceInfo> devices_;
  Topology topology_;
  cudaStream_t stream_ = nullptr;
  DeviceScratch scratch_;
  std::map<std::string, std::unique_ptr<TargetBuffer>> buffers_;  // by target text, grown on demand
  std::uint64_t num_bursts_written_ = 0;                           // global burst index within the point
  std::vector<std::uint32_t> readback_;                            // device rings copied back for verification
  std::unique_ptr<LoadedRunner> loaded_;                           // suite loaded (backends/gpu/loaded_runner.hpp)
};

TargetBuffer& GpuBackend::buffer_for(const PointPlan& plan) {
  auto& slot = buffers_[plan.target.text];
  if (!slot || slot->bytes() < plan.buffer_bytes()) {
    slot.reset();  // free first: the old and the new ring need not fit together
    constexpr std::uint64_t kRound = 64ull << 20;
    slot = std::make_unique<TargetBuffer>(plan.target, device_, (plan.buffer_bytes() + kRound - 1) / kRound * kRound);
  }
  return *slot;
}

double GpuBackend::probe_clock_hz() {
  kernels::ClockProbeArgs args;
  args.result = scratch_.probe;
  XS_CUDA_CHECK(kernels::launch_clock_probe(args, stream_));
  XS_CUDA_CHECK_LAUNCH();
  XS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  kernels::ClockProbeResult r;
  XS_CUDA_CHECK(cudaMemcpy(&r, scratch_.probe, sizeof r, cudaMemcpyDeviceToHost));
  if (r.elapsed_ns < args.window_ns || r.elapsed_cycles == 0)
    throw Error(ExitCode::kDeviceFailure, "kernel", "clock_probe",
                fmt::format("clock probe: %globaltimer advanced {} ns in {} cycles (window {} ns): timer not running?",
                            r.elapsed_ns, r.elapsed_cycles, args.window_ns));
  return 1e9 * static_cast<double>(r.elapsed_cycles) / static_cast<double>(r.elapsed_ns);
}

LaunchSample GpuBackend::launch(const PointPlan& plan, const PointSpec& spec, std::uint64_t gap_cycles) {
  const auto k = plan.layout.num_producers;
  const auto n = static_cast<std::uint32_t>(spec.num_bursts);
  grow(scratch_.records, scratch_.num_records, static_cast<std::size_t>(n) * k);
  grow(scratch_.clocks, scratch_.num_clocks, k);
  XS_CUDA_CHECK(cudaMemsetAsync(scratch_.records, 0, sizeof(rs::BurstRecord) * n * k, stream_));
  XS_CUDA_CHECK(cudaMemsetAsync(scratch_.clocks, 0, sizeof(rs::ProducerClock) * k, stream_));
  const std::uint64_t preset = options_.preset_start_time_ns.value_or(0);
  XS_CUDA_CHECK(cudaMemcpyAsync(scratch_.start_time_ns, &preset, sizeof preset, cudaMemcpyHostToDevice, stream_));
  XS_CUDA_CHECK(cudaStreamSynchronize(stream_));  // `preset` lives on this stack frame
  *reinterpret_cast<volatile std::uint32_t*>(scratch_.status_host) = 0;

  rs::BurstArgs args;
  args.dst = static_cast<std::uint8_t*>(buffers_.at(plan.target.text)->device_ptr()) + kGuardBytes;
  args.layout = plan.layout;
  args.num_bursts = n;
  args.first_burst_idx = num_bursts_written_;
  args.gap_cycles = gap_cycles;
  args.start_lead_ns = options_.start_lead_ns;
  args.barrier_timeout_ns = options_.barrier_timeout_ns;
  args.min_launch_ns = options_.min_launch_ns;
  args.start_time_ns = scratch_.start_time_ns;
  args.records = scratch_.records;
  args.clocks = scratch_.clocks;
  args.status = scratch_.status_device;
  XS_CUDA_CHECK(rs::launch_burst(plan.config, args, stream_));
  XS_CUDA_CHECK_LAUNCH();
  num_bursts_written_ += n;  // claimed even if the launch fails: verification never runs then
  if (const cudaError_t err = cudaStreamSynchronize(stream_); err != cudaSuccess) {
    const std::uint32_t status = *reinterpret_cast<volatile std::uint32_t*>(scratch_.status_host);
    if (status != 0)
      throw Error(ExitCode::kDeviceFailure, "cuda", "start_time_ns",
                  fmt::format("burst_kernel: device spin-wait on {} timed out after {} ns (status {}, {}); the "
                              "kernel trapped, so this process's CUDA context is unusable and later points fail",
                              rs::burst_status_flag(status), options_.barrier_timeout_ns, status,
                              cudaGetErrorName(err)));
    cuda_check::throw_cuda_error(err, "cudaStreamSynchronize after burst_kernel", __FILE__, __LINE__);
  }
  LaunchTimeline t;
  t.num_bursts = n;
  t.num_producers = k;
  t.records.resize(static_cast<std::size_t>(n) * k);
  t.clocks.resize(k);
  XS_CUDA_CHECK(cudaMemcpy(t.records.data(), scratch_.records, sizeof(rs::BurstRecord) * t.records.size(),
                           cudaMemcpyDeviceToHost));
  XS_CUDA_CHECK(cudaMemcpy(t.clocks.data(), scratch_.clocks, sizeof(rs::ProducerClock) * k, cudaMemcpyDeviceToHost));
  const auto first_steady = static_cast<std::uint32_t>(spec.suite == Suite::kIsolated ? 0 : spec.warmup_bursts);
  return aggregate_launch(t, first_steady, spec.completion);
}

LaunchSample GpuBackend::measure_repetition(const PointPlan& plan, const PointSpec& spec, std::uint64_t gap_cycles,
                                            int rep, PointRecord& record) {
  const double min_clock_hz = options_.clock_flag_fraction * devices_[device_].clock_rate_hz;
  for (int attempt = 0;; ++attempt) {
    const LaunchSample s = launch(plan, spec, gap_cycles);
    const bool clock_low = s.sm_clock_hz < min_clock_hz;
    const bool misaligned = spec.suite == Suite::kIsolated && s.num_late_producers > 0;
    if (!clock_low && !misaligned) return s;
    const std::string why =
        clock_low ? fmt::format("SM clock {:.3f} GHz < {:.0f}% of the {:.3f} GHz peak", 1e-9 * s.sm_clock_hz,
                                100 * options_.clock_flag_fraction, 1e-9 * devices_[device_].clock_rate_hz)
                  : fmt::format("{} producers missed the start barrier", s.num_late_producers);
    if (attempt == options_.max_reruns) {
      std::fprintf(stderr, "%s: %s repetition %d: %s after %d re-runs; kept%s\n", xs::program_name(), record.id.c_str(),
                   rep, why.c_str(), attempt, clock_low ? " and flagged" : "");
      record.clock_flagged = record.clock_flagged || clock_low;
      return s;
    }
    std::fprintf(stderr, "%s: %s repetition %d: %s; re-running\n", xs::program_name(), record.id.c_str(), rep,
                 why.c_str());
  }
}

PointRecord GpuBackend::run(const PointSpec& spec) {
  PointRecord record;
  record.id = point_id(spec);
  record.spec = spec;
  if (spec.suite == Suite::kLoaded) {
    LoadedPlanOutcome loaded = plan_loaded(spec, devices_[device_], topology_, held_bytes(spec.target));
    if (!loaded.plan) {
      if (loaded.reason.rfind("unavailable", 0) != 0) throw input_error("point " + record.id, loaded.reason);
      record.skipped = true;
      record.skip_reason = loaded.reason;
      return record;
    }
    XS_CUDA_CHECK(cudaSetDevice(device_));
    return loaded_->run(spec, *loaded.plan, buffer_for(loaded.plan->ring), std::move(record));
  }
  PlanOutcome outcome = plan_point(spec, devices_[device_], topology_, held_bytes(spec.target));
  if (!outcome.plan) {
    if (outcome.reason.rfind("unavailable", 0) != 0) throw input_error("point " + record.id, outcome.reason);
    record.skipped = true;  // recorded with its reason, never dropped
    record.skip_reason = outcome.reason;
    return record;
  }
  const PointPlan& plan = *outcome.plan;
  XS_CUDA_CHECK(cudaSetDevice(device_));
  TargetBuffer& buffer = buffer_for(plan);
  buffer.poison(plan.buffer_bytes());
  num_bursts_written_ = 0;

  // G -> cycles: first with the probe, then with the higher of it and the clock the warm-up launch ran
  // at (a low reading is a clock still ramping up from idle, not the clock the samples will see).
  const double probe_hz = probe_clock_hz();
  auto gap_cycles = static_cast<std::uint64_t>(std::llround(spec.gap_s * probe_hz));
  const LaunchSample warmup = launch(plan, spec, gap_cycles);  // mappings, TLB, instruction cache, clock ramp
  gap_cycles = static_cast<std::uint64_t>(std::llround(spec.gap_s * std::max(probe_hz, warmup.sm_clock_hz)));

  std::vector<double> issue_s, issue_max_s, period_s, completion_s, clock_hz;
  for (int rep = 0; rep < spec.repetitions; ++rep) {
    throw_if_stopping();  // SIGINT/SIGTERM: a long point ends here (bench/backend.hpp)
    const LaunchSample s = measure_repetition(plan, spec, gap_cycles, rep, record);
    issue_s.push_back(s.issue_time_s);
    if (!std::isnan(s.period_s)) period_s.push_back(s.period_s);
    if (!std::isnan(s.issue_time_max_s)) issue_max_s.push_back(s.issue_time_max_s);
    if (spec.completion) completion_s.push_back(s.completion_s);
    clock_hz.push_back(s.sm_clock_hz);
  }

  const std::uint32_t* words = buffer.host_words(plan.buffer_bytes(), readback_);
  record.verification = verify_ring(words, {plan.layout, kGuardBytes, num_bursts_written_, {}});
  if (record.verification.wrong > 0)
    std::fprintf(stderr, "%s: %s: DATA VERIFICATION FAILED: %llu wrong words\n", xs::program_name(), record.id.c_str(),
                 static_cast<unsigned long long>(record.verification.wrong));

  record.issue_time_s = summarize(issue_s);
  if (!period_s.empty()) record.period_s = summarize(period_s);
  if (!issue_max_s.empty()) record.issue_time_max_s = summarize(issue_max_s);
  if (spec.completion) record.completion_s = summarize(completion_s);
  record.sm_clock_hz = median(clock_hz);
  return record;
}

}  // namespace

bool gpu_backend_built() { return true; }

std::unique_ptr<Backend> make_gpu_backend(int device_index, const GpuBackendOptions& options) {
  return std::make_unique<GpuBackend>(device_index, options);
}

std::unique_ptr<Backend> make_gpu_backend(int device_index) { return make_gpu_backend(device_index, {}); }

}  // namespace xs::runtime
