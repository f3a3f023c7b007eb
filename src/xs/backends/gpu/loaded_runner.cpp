// xstage backends/gpu layer: the loaded suite on the GPU (see loaded_runner.hpp).
#include "xs/backends/gpu/loaded_runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "xs/bench/backend.hpp"
#include "xs/bench/sweep.hpp"
#include "xs/common/bf16.hpp"
#include "xs/common/error.hpp"
#include "xs/common/program_name.hpp"
#include "xs/common/stats.hpp"
#include "xs/kernels/common/tensor_map.hpp"
#include "xs/common/units.hpp"
#include "xs/kernels/common/cuda_check.hpp"
#include "xs/backends/gpu/verification.hpp"

namespace xs::runtime {
namespace {

namespace rs = kernels::remote_store;
using Shape = rs::LoadedShape;
constexpr std::uint64_t kMaxCheckedBlocks = 16;  // output blocks compared with the CPU reference (~10 ms each)

LoadedPlanOutcome reject(std::string reason) { return {std::nullopt, std::move(reason)}; }

// Fresh random bf16 in [-1, 1) (splitmix64, four values per draw); never all zeros.
std::vector<std::uint16_t> random_bf16(std::size_t count, std::uint64_t seed) {
  std::vector<std::uint16_t> out(count);
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < count; i += 4) {
    state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    for (std::size_t j = 0; j < 4 && i + j < count; ++j) {
      const auto bits = static_cast<std::uint32_t>((z >> (16 * j)) & 0xffff);
      out[i + j] = float_to_bf16(static_cast<float>(bits) / 32768.0f - 1.0f);
    }
  }
  return out;
}

// The per-repetition samples of a point (one baseline and one loaded launch each), in repetition order.
struct LoadedSeries {
  std::vector<double> tile, base_tile, slowdown, bytes, rate, span, store_span, tail, issue, period, clock, base_clock;
  std::vector<double> epilogue_time, mean_tile, mean_tile_epilogue, base_mean_tile, median_slowdown;
  std::uint32_t capped_launches = 0, most_ctas_at_cap = 0;

  // Appends one repetition's baseline (b) and loaded (l) launch.
  void add(const LoadedLaunchSample& b, const LoadedLaunchSample& l, bool epilogue) {
    capped_launches += l.num_ctas_at_cap > 0 ? 1 : 0;
    most_ctas_at_cap = std::max(most_ctas_at_cap, l.num_ctas_at_cap);
    tile.push_back(l.tile_time_s);
    base_tile.push_back(b.tile_time_s);
    // Epilogue: what the application pays, the mean tile with its epilogue, over the baseline's mean mainloop.
    slowdown.push_back(epilogue ? l.mean_tile_epilogue_time_s / b.mean_tile_time_s : l.tile_time_s / b.tile_time_s);
    epilogue_time.push_back(l.epilogue_time_s);
    mean_tile.push_back(l.mean_tile_time_s);
    mean_tile_epilogue.push_back(l.mean_tile_epilogue_time_s);
    base_mean_tile.push_back(b.mean_tile_time_s);
    median_slowdown.push_back(l.tile_time_s / b.tile_time_s);
    bytes.push_back(l.bytes_issued);
    rate.push_back(l.bytes_issued / l.mainloop_span_s);
    span.push_back(l.mainloop_span_s);
    store_span.push_back(l.store_span_s);
    tail.push_back(l.drain_tail_s);
    issue.push_back(l.issue_time_s);
    period.push_back(l.period_s);
    clock.push_back(l.sm_clock_hz);
    base_clock.push_back(b.sm_clock_hz);
  }
};

// The record's timing fields and its loaded measurement: the summaries of the series.
void summarize_into(const LoadedSeries& s, bool epilogue, PointRecord& record) {
  record.issue_time_s = summarize(s.issue);
  record.period_s = summarize(s.period);
  record.sm_clock_hz = median(s.clock);
  LoadedMeasurement m;
  m.tile_time_s = summarize(s.tile);
  m.baseline_tile_time_s = summarize(s.base_tile);
  m.slowdown = summarize(s.slowdown);
  m.bytes_issued = summarize(s.bytes);
  m.issue_rate_bps = summarize(s.rate);
  m.mainloop_span_s = summarize(s.span);
  m.store_span_s = summarize(s.store_span);
  m.drain_tail_s = summarize(s.tail);
  m.baseline_sm_clock_hz = median(s.base_clock);
  if (epilogue)
    m.epilogue = LoadedMeasurement::Epilogue{summarize(s.epilogue_time), summarize(s.mean_tile),
                                             summarize(s.mean_tile_epilogue), summarize(s.base_mean_tile),
                                             summarize(s.median_slowdown)};
  record.loaded = m;
}

}  // namespace

std::uint32_t loaded_num_blocks(WorkingSet working_set, std::uint32_t k_elems, std::uint64_t l2_bytes) {
  if (working_set == WorkingSet::kL2) return 8;
  const std::uint64_t block_bytes = 2ull * Shape::kBlockM * k_elems * 2;  // A and B rows of one block
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(8, (4 * l2_bytes + block_bytes - 1) / block_bytes));
}

LoadedPlanOutcome plan_loaded(const PointSpec& spec, const DeviceInfo& device, const Topology& topology,
                              std::uint64_t held_ring_bytes) {
  // The stores: the ring, target and checks of a periodic point with the same K, B and pattern.
  PointSpec stores = spec;
  stores.suite = Suite::kPeriodic;
  PlanOutcome ring = plan_point(stores, device, topology, held_ring_bytes);
  if (!ring.plan) return reject(ring.reason);
  try {
    bench::validate_spec(spec);  // the loaded knobs
  } catch (const Error& e) {
    return reject(e.what());
  }
  LoadedPlan plan;
  plan.ring = *ring.plan;
  plan.config.wgmma = spec.loaded.mainloop == Mainloop::kWgmma;
  plan.config.num_ctas = static_cast<std::uint32_t>(spec.num_producers);
  // Injection epilogue: no storer warps, the math threads store (threads_per_producer is their count, 256).
  plan.config.storer_threads = spec.loaded.injection == Injection::kEpilogue
                                   ? 0u
                                   : static_cast<std::uint32_t>(spec.threads_per_producer);
  if (spec.num_producers > device.sm_count)
    return reject(fmt::format("K={} exceeds the {} SMs: the loaded suite runs one persistent CTA per SM",
                              spec.num_producers, device.sm_count));
  int ctas_per_sm = 0;
  {
    DeviceGuard guard(device.index);
    XS_CUDA_CHECK(rs::loaded_ctas_per_sm(plan.config, &ctas_per_sm));
  }
  if (ctas_per_sm < 1)
    return reject(fmt::format("unavailable: the loaded kernel ({} B shared memory, {} threads) does not fit an SM",
                              Shape::kSmemBytes, plan.config.threads_per_cta()));
  plan.problem.k_elems = static_cast<std::uint32_t>(spec.loaded.k_elems);
  plan.problem.tiles_per_cta = static_cast<std::uint32_t>(spec.loaded.tiles_per_cta);
  plan.problem.num_ctas = plan.config.num_ctas;
  plan.problem.num_blocks = loaded_num_blocks(spec.loaded.working_set, plan.problem.k_elems, device.l2_bytes);
  return {plan, ""};
}

std::vector<double> loaded_reference_block(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b,
                                           std::uint32_t k_elems, std::uint32_t block) {
  std::vector<double> c(static_cast<std::size_t>(Shape::kBlockM) * Shape::kBlockN);
  std::vector<float> arow(k_elems), bt(static_cast<std::size_t>(Shape::kBlockN) * k_elems);
  const std::size_t row0 = static_cast<std::size_t>(block) * Shape::kBlockM;
  for (std::size_t j = 0; j < Shape::kBlockN; ++j)
    for (std::size_t k = 0; k < k_elems; ++k) bt[j * k_elems + k] = bf16_to_float(b[(row0 + j) * k_elems + k]);
  for (std::size_t i = 0; i < Shape::kBlockM; ++i) {
    for (std::size_t k = 0; k < k_elems; ++k) arow[k] = bf16_to_float(a[(row0 + i) * k_elems + k]);
    for (std::size_t j = 0; j < Shape::kBlockN; ++j) {
      double sum = 0;
      for (std::size_t k = 0; k < k_elems; ++k) sum += static_cast<double>(arow[k]) * bt[j * k_elems + k];
      c[i * Shape::kBlockN + j] = sum;
    }
  }
  return c;
}

std::uint64_t compare_loaded_block(const float* got, const std::vector<double>& ref, std::uint32_t block) {
  std::uint64_t wrong = 0;
  double worst = -1;
  std::size_t worst_idx = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double err = std::abs(static_cast<double>(got[i]) - ref[i]);
    const bool bad = !(err <= 1e-3 * (std::abs(ref[i]) + 1.0));  // NaN (poison) is bad too
    wrong += bad ? 1 : 0;
    const double rank = std::isnan(err) ? INFINITY : err;  // a NaN (poison left in place) is the worst
    if (rank > worst) {
      worst = rank;
      worst_idx = i;
    }
  }
  if (wrong > 0)
    std::fprintf(stderr, "%s: loaded: output block %u: %llu wrong elements; worst at row %zu col %zu: got %g, "
                 "reference %g\n", xs::program_name(), block, static_cast<unsigned long long>(wrong),
                 worst_idx / Shape::kBlockN, worst_idx % Shape::kBlockN, static_cast<double>(got[worst_idx]),
                 ref[worst_idx]);
  return wrong;
}

LoadedRunner::LoadedRunner(const DeviceInfo& device, cudaStream_t stream, std::uint32_t* status_host,
                           std::uint32_t* status_device, double clock_flag_fraction)
    : device_(device), stream_(stream), status_host_(status_host), status_device_(status_device),
      clock_flag_fraction_(clock_flag_fraction) {}

LoadedRunner::Operands& LoadedRunner::operands_for(const rs::LoadedProblem& problem) {
  const std::pair<std::uint32_t, std::uint32_t> key{problem.num_blocks, problem.k_elems};
  if (key == operands_key_) return operands_;
  operands_ = Operands{};  // free the previous set first
  operands_key_ = {0, 0};
  const std::size_t elems = problem.operand_rows() * problem.k_elems;
  const std::uint64_t seed = fresh_seed();
  operands_.a_host = random_bf16(elems, seed);
  operands_.b_host = random_bf16(elems, seed ^ 0x5851f42d4c957f2dULL);
  operands_.a = upload(operands_.a_host);
  operands_.b = upload(operands_.b_host);
  operands_.c = DeviceBuffer(problem.output_elems() * sizeof(float));
  operands_.tm_a = kernels::make_tile_map_2d(operands_.a.get(), CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2,
                                             problem.operand_rows(), problem.k_elems, Shape::kBlockM, Shape::kBlockK, "A");
  operands_.tm_b = kernels::make_tile_map_2d(operands_.b.get(), CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2,
                                             problem.operand_rows(), problem.k_elems, Shape::kBlockN, Shape::kBlockK, "B");
  operands_key_ = key;
  return operands_;
}

LoadedLaunchSample LoadedRunner::launch(const PointSpec& spec, const LoadedPlan& plan, rs::LoadedArgs args) {
  const auto k = plan.config.num_ctas;
  LoadedLaunchTimeline t;
  t.num_ctas = k;
  t.tiles_per_cta = plan.problem.tiles_per_cta;
  t.max_bursts = args.max_bursts;
  t.bytes_per_burst = spec.bytes_per_producer;
  t.epilogue_tiles_per_burst = args.epilogue_tiles_per_burst;
  XS_CUDA_CHECK(cudaMemsetAsync(tiles_.get(), 0, tiles_.bytes(), stream_));
  XS_CUDA_CHECK(cudaMemsetAsync(ctas_.get(), 0, ctas_.bytes(), stream_));
  *reinterpret_cast<volatile std::uint32_t*>(status_host_) = 0;
  XS_CUDA_CHECK(rs::launch_loaded(plan.config, args, stream_));
  XS_CUDA_CHECK_LAUNCH();
  if (const cudaError_t err = cudaStreamSynchronize(stream_); err != cudaSuccess) {
    const std::uint32_t status = *reinterpret_cast<volatile std::uint32_t*>(status_host_);
    if (status != 0)
      throw Error(ExitCode::kDeviceFailure, "cuda", "loaded_kernel",
                  fmt::format("loaded_kernel: spin-wait on {} timed out after {} cycles (status {}, {}); the kernel "
                              "trapped, so this process's CUDA context is unusable", rs::loaded_status_flag(status),
                              args.timeout_cycles, status, cudaGetErrorName(err)));
    cuda_check::throw_cuda_error(err, "cudaStreamSynchronize after loaded_kernel", __FILE__, __LINE__);
  }
  t.tiles.resize(static_cast<std::size_t>(k) * t.tiles_per_cta);
  t.ctas.resize(k);
  if (args.bursts != nullptr) t.bursts.resize(static_cast<std::size_t>(k) * t.max_bursts);  // none: epilogue
  copy_to_host(t.tiles.data(), tiles_.get(), t.tiles.size() * sizeof(rs::LoadedTileRecord));
  copy_to_host(t.ctas.data(), ctas_.get(), t.ctas.size() * sizeof(rs::LoadedCtaRecord));
  if (!t.bursts.empty()) copy_to_host(t.bursts.data(), bursts_.get(), t.bursts.size() * sizeof(rs::LoadedBurstRecord));
  for (std::uint32_t c = 0; c < k && args.max_bursts > 0; ++c) claimed_bursts_[c] += t.ctas[c].num_bursts;
  return aggregate_loaded_launch(t, static_cast<std::uint32_t>(spec.loaded.warmup_tiles),
                                 static_cast<std::uint32_t>(spec.warmup_bursts));
}

LoadedRunner::Operands& LoadedRunner::prepare_point(const PointSpec& spec, const LoadedPlan& plan, TargetBuffer& ring) {
  const auto k = plan.config.num_ctas;
  const auto max_bursts = static_cast<std::uint32_t>(spec.num_bursts);
  Operands& ops = operands_for(plan.problem);
  tiles_ = DeviceBuffer(static_cast<std::size_t>(k) * plan.problem.tiles_per_cta * sizeof(rs::LoadedTileRecord));
  bursts_ = DeviceBuffer(static_cast<std::size_t>(k) * max_bursts * sizeof(rs::LoadedBurstRecord));
  ctas_ = DeviceBuffer(k * sizeof(rs::LoadedCtaRecord));
  burst_base_ = DeviceBuffer(k * sizeof(std::uint64_t));
  XS_CUDA_CHECK(cudaMemsetAsync(burst_base_.get(), 0, burst_base_.bytes(), stream_));
  claimed_bursts_.assign(k, 0);
  // NaN poison: every compared element must have been rewritten.
  XS_CUDA_CHECK(cudaMemsetAsync(ops.c.get(), 0xFF, ops.c.bytes(), stream_));
  ring.poison(plan.ring.buffer_bytes());
  // The operand uploads (legacy stream) and the memsets are done before the first launch on stream_ (a
  // non-blocking stream does not wait for the legacy one).
  XS_CUDA_CHECK(cudaDeviceSynchronize());
  return ops;
}

rs::LoadedArgs LoadedRunner::point_args(const PointSpec& spec, const LoadedPlan& plan, const Operands& ops,
                                        TargetBuffer& ring) const {
  rs::LoadedArgs args;
  args.problem = plan.problem;
  args.tm_a = ops.tm_a;
  args.tm_b = ops.tm_b;
  args.c = ops.c.as<float>();
  args.dst = static_cast<std::uint8_t*>(ring.device_ptr()) + kGuardBytes;
  args.layout = plan.ring.layout;
  args.period_ns = static_cast<std::uint64_t>(std::llround(spec.gap_s * 1e9));
  args.burst_base = burst_base_.as<std::uint64_t>();
  args.tiles = tiles_.as<rs::LoadedTileRecord>();
  const bool epilogue = spec.loaded.injection == Injection::kEpilogue;
  args.bursts = epilogue ? nullptr : bursts_.as<rs::LoadedBurstRecord>();
  args.epilogue_tiles_per_burst = epilogue ? static_cast<std::uint32_t>(spec.loaded.tiles_per_burst) : 0u;
  args.ctas = ctas_.as<rs::LoadedCtaRecord>();
  args.status = status_device_;
  return args;
}

std::vector<std::uint64_t> LoadedRunner::checked_burst_counts(std::uint32_t k) const {
  std::vector<std::uint64_t> counts(k);
  copy_to_host(counts.data(), burst_base_.get(), k * sizeof(std::uint64_t));
  // The ring claim (burst_base, advanced by the kernel) and the launch records must count the same bursts.
  for (std::uint32_t c = 0; c < k; ++c)
    if (counts[c] != claimed_bursts_[c])
      throw Error(ExitCode::kDeviceFailure, "kernel", "loaded_kernel",
                  fmt::format("loaded_kernel: CTA {} advanced its burst base to {} but its launch records count {} "
                              "bursts", c, counts[c], claimed_bursts_[c]));
  return counts;
}

void LoadedRunner::verify_gemm_blocks(const LoadedPlan& plan, const Operands& ops, PointRecord& record) const {
  const auto k = plan.config.num_ctas;
  const std::uint64_t written = std::min<std::uint64_t>(plan.problem.num_blocks,
                                                        static_cast<std::uint64_t>(k) * plan.problem.tiles_per_cta);
  // Every written block of a small problem (the L2 working set: 8), else the first, middle and last.
  std::vector<std::uint32_t> blocks;
  if (written <= kMaxCheckedBlocks) {
    for (std::uint32_t blk = 0; blk < written; ++blk) blocks.push_back(blk);
  } else {
    blocks = {0, static_cast<std::uint32_t>(written / 2), static_cast<std::uint32_t>(written - 1)};
  }
  std::vector<float> got(static_cast<std::size_t>(Shape::kBlockM) * Shape::kBlockN);
  for (std::uint32_t blk : blocks) {
    copy_to_host(got.data(), ops.c.as<float>() + static_cast<std::size_t>(blk) * got.size(), got.size() * sizeof(float));
    record.verification.wrong += compare_loaded_block(got.data(), loaded_reference_block(ops.a_host, ops.b_host,
                                                                                       plan.problem.k_elems, blk), blk);
    record.verification.bytes_checked += got.size() * sizeof(float);
  }
}

PointRecord LoadedRunner::run(const PointSpec& spec, const LoadedPlan& plan, TargetBuffer& ring, PointRecord record) {
  const auto k = plan.config.num_ctas;
  const auto max_bursts = static_cast<std::uint32_t>(spec.num_bursts);
  Operands& ops = prepare_point(spec, plan, ring);

  const rs::LoadedArgs args = point_args(spec, plan, ops, ring);
  const bool epilogue = spec.loaded.injection == Injection::kEpilogue;
  rs::LoadedArgs baseline = args;
  baseline.max_bursts = 0;
  rs::LoadedArgs loaded = args;
  loaded.max_bursts = max_bursts;

  // Warm-up pair (discarded): TLB, instruction cache, L2 contents of the L2 working set, clock ramp.
  (void)launch(spec, plan, baseline);
  (void)launch(spec, plan, loaded);
  const double min_clock_hz = clock_flag_fraction_ * device_.clock_rate_hz;
  LoadedSeries series;
  for (int rep = 0; rep < spec.repetitions; ++rep) {
    throw_if_stopping();  // SIGINT/SIGTERM: a long point ends here (bench/backend.hpp)
    const LoadedLaunchSample b = launch(spec, plan, baseline);
    const LoadedLaunchSample l = launch(spec, plan, loaded);
    if (b.sm_clock_hz < min_clock_hz || l.sm_clock_hz < min_clock_hz) {
      std::fprintf(stderr, "%s: %s repetition %d: SM clock %.3f / %.3f GHz (baseline / loaded) < %.0f%% of the "
                   "%.3f GHz peak; kept and flagged\n", xs::program_name(), record.id.c_str(), rep,
                   1e-9 * b.sm_clock_hz, 1e-9 * l.sm_clock_hz, 100 * clock_flag_fraction_,
                   1e-9 * device_.clock_rate_hz);
      record.clock_flagged = true;
    }
    series.add(b, l, epilogue);
  }

  // Every stored byte (each CTA's bursts, counted across the launches of the point) and the GEMM output.
  std::vector<std::uint64_t> counts = checked_burst_counts(k);
  if (series.capped_launches > 0)
    std::fprintf(stderr, "%s: %s: in %u of %d loaded launches the storers of up to %u of %u CTAs issued all %d "
                 "bursts (the cap): their tiles after the last burst ran without stores, and tile_time_s may mix "
                 "loaded and unloaded tiles (docs/interference-calibration.md)\n", xs::program_name(),
                 record.id.c_str(), series.capped_launches, spec.repetitions, series.most_ctas_at_cap, k,
                 spec.num_bursts);
  RingClaim claim{plan.ring.layout, kGuardBytes, 0, counts};
  std::vector<std::uint32_t> scratch;
  record.verification = verify_ring(ring.host_words(plan.ring.buffer_bytes(), scratch), claim);
  if (plan.config.wgmma) verify_gemm_blocks(plan, ops, record);
  if (record.verification.wrong > 0)
    std::fprintf(stderr, "%s: %s: DATA VERIFICATION FAILED: %llu wrong words or elements\n", xs::program_name(),
                 record.id.c_str(), static_cast<unsigned long long>(record.verification.wrong));

  summarize_into(series, epilogue, record);
  return record;
}

}  // namespace xs::runtime
