// xstage moe layer (CUDA): the device state of one megamoe point (see moe_point_device.hpp).
#include "xs/moe/run/moe_point_device.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "xs/common/error.hpp"
#include "xs/kernels/moe/combine_unpack.hpp"
#include "xs/kernels/moe/quantize.hpp"
#include "xs/kernels/moe/random_fill.hpp"
#include "xs/kernels/common/cuda_check.hpp"
#include "xs/backends/cuda/stream.hpp"
#include "xs/backends/gpu/target_cache.hpp"

namespace xs::moe {

namespace km = xs::kernels::moe;
using runtime::DeviceBuffer;

void sync_checked(cudaStream_t s, const char* what) {
  const cudaError_t err = cudaStreamSynchronize(s);
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();
  std::string why = km::megamoe_timeout_message();
  throw Error(ExitCode::kDeviceFailure, "cuda", what,
              std::string(cudaGetErrorString(err)) + (why.empty() ? "" : "; " + why));
}

namespace {

// Combine slots (`slot_elems` bf16 each) in `bytes` of device memory with a poisoned element, counted on the host.
std::uint64_t count_poisoned_slots(const void* device_ptr, std::uint64_t bytes, std::size_t slot_elems) {
  std::vector<std::uint16_t> host(bytes / 2);
  XS_CUDA_CHECK(cudaMemcpy(host.data(), device_ptr, host.size() * 2, cudaMemcpyDeviceToHost));
  std::uint64_t slots = 0;
  for (std::size_t i = 0; i + slot_elems <= host.size(); i += slot_elems)
    slots += std::find(host.begin() + i, host.begin() + i + slot_elems, static_cast<std::uint16_t>(km::kPoisonBits)) !=
             host.begin() + i + slot_elems;
  return slots;
}

void poison_buffer(const DeviceBuffer& b, cudaStream_t s) {
  if (b.bytes() > 0) km::launch_fill_bits16(b.get(), b.bytes() / 2, 0xFFFF, s);
}

// Combine destinations of every rank: the emulated rank's own rows in HBM, the others through the target.
struct Destinations {
  std::vector<std::unique_ptr<runtime::TargetBuffer>> remote;
  std::vector<DeviceBuffer> own;
  std::vector<void*> ptrs;
  std::uint64_t bytes_per_rank = 0;
  void* own_window = nullptr;  // across ranks: this rank's window, the only one it poisons
  Destinations(const MoeExchange& ex, std::uint64_t bytes)
      : ptrs(ex.peer_windows), bytes_per_rank(bytes), own_window(ex.own_window) {}
  Destinations(const runtime::Target& target, int device, int num_ranks, int own_rank, std::uint64_t bytes)
      : bytes_per_rank(bytes) {
    for (int r = 0; r < num_ranks; ++r) {
      if (r == own_rank) {
        own.emplace_back(bytes);
        ptrs.push_back(own.back().get());
      } else if (target.kind == runtime::TargetKind::kHost) {  // pinned once per sweep, not per point
        ptrs.push_back(runtime::host_target_cache().acquire(target, device, r, bytes).device_ptr());
      } else {
        remote.push_back(std::make_unique<runtime::TargetBuffer>(target, device, bytes));
        ptrs.push_back(remote.back()->device_ptr());
      }
    }
  }
  void poison(cudaStream_t s) {
    if (own_window != nullptr) return km::launch_fill_bits16(own_window, bytes_per_rank / 2, km::kPoisonBits, s);
    for (void* p : ptrs) km::launch_fill_bits16(p, bytes_per_rank / 2, km::kPoisonBits, s);
  }
};

km::ScheduleChoice schedule_of(const MoeVariantPlan& v) {
  if (v.schedule == "expert_wave") return {km::ScheduleKind::kExpertWave, v.experts_per_wave, 1};
  if (v.schedule == "interleaved") return {km::ScheduleKind::kInterleaved, 1, v.lead_rows};
  return {km::ScheduleKind::kSerial, 1, 1};
}
km::KernelPhases phases_of(const MoeVariantPlan& v) {
  return v.phases == "linear1" ? km::KernelPhases::kLinear1
                               : v.phases == "linear2" ? km::KernelPhases::kLinear2 : km::KernelPhases::kAll;
}

bool wants_family(const MoePointSpec& spec, const char* family) {
  return spec.variants.empty() || std::find(spec.variants.begin(), spec.variants.end(), family) != spec.variants.end();
}

// Refuses a point that cannot fit in free device memory before anything is allocated (exit 2, not a failed malloc).
void check_fits_device_memory(const MoePointSpec& spec, const MoeProblem& prob, bool fp8) {
  const double h = spec.shape.hidden, inter = spec.shape.intermediate;
  const double eb = fp8 ? 1.0 : 2.0;
  const double rows = static_cast<double>(prob.num_pool_rows());
  const double el = prob.num_local_experts;
  const double dst_rank_bytes = static_cast<double>(spec.tokens_per_rank) * spec.shape.top_k * h * 2;
  // inputs (+ their bf16 originals for fp8), pool, act, 4 destination sets (target/own, reference, first,
  // unpacked) + the copy pipelines' send buffers.
  const double device_bytes = (prob.num_arrivals() * h + el * 3 * h * inter) * (eb + (eb == 1 ? 2 : 0)) +
                              rows * (h + inter) * eb + dst_rank_bytes * spec.num_ranks * 5;
  std::size_t free_bytes = 0, total_bytes = 0;
  XS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (device_bytes > 0.9 * static_cast<double>(free_bytes))
    throw input_error("T", "this point needs about " + std::to_string(device_bytes / (1 << 30)) + " GiB of device "
                           "memory and " + std::to_string(static_cast<double>(free_bytes) / (1 << 30)) +
                           " GiB are free on GPU " + std::to_string(spec.device) + "; use a smaller --T or shape");
}

}  // namespace

struct MoePointDevice::Impl {
  const MoePointSpec& spec;
  const MoeProblem& prob;
  const MoeExchange* ex;
  bool fp8;
  km::MegaMoeConfig config;
  // The copy pipelines' routing: the same pool rows into per-rank packed send buffers (rows in pool order);
  // declared before the routings built from them.
  std::vector<std::int32_t> packed_row, packed_slots, packed_count;
  DeviceBuffer arrival, w1, w2, pool, act;
  DeviceBuffer arrival_scale, w1_scale, w2_scale, pool_scale, act_scale;
  DeviceRouting routing, packed_routing;
  DeviceBuffer packed_row_dev;
  std::optional<Destinations> dst;
  DeviceBuffer sync, sync_l1, sync_l2;
  // Copy pipelines (serial_then_copy, unfused_overlapped): local packed send buffers, their target copies.
  bool copy_pipelines = false;
  std::vector<DeviceBuffer> packed_local;
  std::vector<std::unique_ptr<runtime::TargetBuffer>> packed_remote;
  // unfused_overlapped: per wave a sync region, fp8 scale scratch, and each rank's packed row range.
  std::vector<DeviceBuffer> wave_sync, wave_pool_scale, wave_act_scale;
  std::vector<std::vector<std::int32_t>> wave_packed_begin, wave_packed_count;  // [wave][rank]
  std::optional<runtime::Stream> copy_stream;
  std::vector<cudaEvent_t> wave_done;
  cudaEvent_t copies_done = nullptr;
  // Verification.
  std::optional<CombineDestinations> ref, first, unpacked;
  DeviceBuffer slot_mask, compare_result;

  Impl(const MoePointSpec& s, const MoeProblem& p)
      : spec(s), prob(p), ex(s.exchange.get()), fp8(s.precision == "fp8"),
        routing(RoutingHostView{p.pool_arrival, p.pool_dst_rank, p.pool_dst_slot, p.pool_weight, p.row_block_expert,
                                p.expert_first_block}),
        packed_routing(packed_view(p, packed_slots)) {}
  ~Impl() {
    for (cudaEvent_t e : wave_done) (void)cudaEventDestroy(e);
    if (copies_done != nullptr) (void)cudaEventDestroy(copies_done);
  }

  RoutingHostView packed_view(const MoeProblem& p, std::vector<std::int32_t>& slots) {
    packed_row.assign(p.pool_dst_rank.size(), -1);
    packed_count.assign(static_cast<std::size_t>(p.num_ranks), 0);
    for (std::size_t i = 0; i < packed_row.size(); ++i)
      if (p.pool_dst_rank[i] >= 0) packed_row[i] = packed_count[p.pool_dst_rank[i]]++;
    slots = packed_row;
    for (auto& v : slots) v = std::max(v, 0);
    return RoutingHostView{p.pool_arrival, p.pool_dst_rank, slots, p.pool_weight, p.row_block_expert,
                           p.expert_first_block};
  }
};

MoePointDevice::MoePointDevice(const MoePointSpec& spec, const MoeProblem& prob, std::uint64_t input_seed,
                               cudaStream_t s) {
  const bool fp8 = spec.precision == "fp8";
  const bool copy_pipelines = wants_family(spec, "serial_then_copy") || wants_family(spec, "unfused_overlapped");
  // ---- Memory: refuse a point that cannot fit before allocating anything (exit 2, not a failed malloc) ----
  check_fits_device_memory(spec, prob, fp8);
  impl_ = std::make_unique<Impl>(spec, prob);
  Impl& m = *impl_;
  m.copy_pipelines = copy_pipelines;
  m.config.num_ctas = spec.num_ctas;
  m.config.cooperative_launch = spec.cooperative_launch;
  tiles_ = prob.tile_space(spec.block_n);

  // ---- Inputs (fresh random, never zeros) ----
  fill_inputs(spec, prob, input_seed, s);
  m.packed_row_dev = runtime::upload(m.packed_row);

  dst_bytes_ = km::combine_bytes_per_rank(static_cast<std::uint32_t>(spec.tokens_per_rank),
                                          static_cast<std::uint32_t>(spec.shape.top_k),
                                          static_cast<std::uint32_t>(spec.shape.hidden));
  const runtime::Target target = runtime::parse_target(spec.target);
  allocate_destinations(spec, prob, target, s);
  allocate_copy_pipelines(spec, prob, target, s);
  fill_base_args(spec, prob);
  poison_intermediates(s);
}

void MoePointDevice::fill_inputs(const MoePointSpec& spec, const MoeProblem& prob, std::uint64_t input_seed,
                                 cudaStream_t s) {
  Impl& m = *impl_;
  const double h = spec.shape.hidden, inter = spec.shape.intermediate;
  const bool fp8 = spec.precision == "fp8";
  const std::uint64_t pool_rows = prob.num_pool_rows();
  const int e_local = prob.num_local_experts;
  // bf16 inputs; fp8 quantizes them (per-token per-128-K activation scales, 128 x 128 weight blocks).
  const std::size_t eb = fp8 ? 1 : 2;
  const std::size_t arrival_elems = static_cast<std::size_t>(prob.num_arrivals()) * spec.shape.hidden;
  const std::size_t w1_elems = static_cast<std::size_t>(e_local) * 2 * spec.shape.intermediate * spec.shape.hidden;
  const std::size_t w2_elems = static_cast<std::size_t>(e_local) * spec.shape.hidden * spec.shape.intermediate;
  m.arrival = DeviceBuffer(arrival_elems * eb);
  m.w1 = DeviceBuffer(w1_elems * eb);
  m.w2 = DeviceBuffer(w2_elems * eb);
  m.pool = DeviceBuffer(pool_rows * spec.shape.hidden * eb);
  m.act = DeviceBuffer(pool_rows * spec.shape.intermediate * eb);
  {
    DeviceBuffer a16(fp8 ? arrival_elems * 2 : 0), w1_16(fp8 ? w1_elems * 2 : 0), w2_16(fp8 ? w2_elems * 2 : 0);
    void* a_dst = fp8 ? a16.get() : m.arrival.get();
    void* w1_dst = fp8 ? w1_16.get() : m.w1.get();
    void* w2_dst = fp8 ? w2_16.get() : m.w2.get();
    km::launch_fill_uniform_bf16(a_dst, arrival_elems, input_seed, 1.0f, s);
    km::launch_fill_uniform_bf16(w1_dst, w1_elems, input_seed + 1, 1.0f / std::sqrt(static_cast<float>(h)), s);
    km::launch_fill_uniform_bf16(w2_dst, w2_elems, input_seed + 2, 1.0f / std::sqrt(static_cast<float>(inter)), s);
    if (fp8) {
      m.arrival_scale = DeviceBuffer(arrival_elems / 128 * 4);
      m.w1_scale = DeviceBuffer(w1_elems / (128 * 128) * 4);
      m.w2_scale = DeviceBuffer(w2_elems / (128 * 128) * 4);
      m.pool_scale = DeviceBuffer(pool_rows * (spec.shape.hidden / 128) * 4);
      m.act_scale = DeviceBuffer(pool_rows * (spec.shape.intermediate / 64) * 4);
      km::launch_quantize_rows_fp8({a16.get(), m.arrival.get(), m.arrival_scale.as<float>(), prob.num_arrivals(),
                                    spec.shape.hidden, 128}, s);
      km::launch_quantize_blocks_fp8({w1_16.get(), m.w1.get(), m.w1_scale.as<float>(), e_local,
                                      2 * spec.shape.intermediate, spec.shape.hidden}, s);
      km::launch_quantize_blocks_fp8({w2_16.get(), m.w2.get(), m.w2_scale.as<float>(), e_local, spec.shape.hidden,
                                      spec.shape.intermediate}, s);
      sync_checked(s, "fp8 quantization");
    }
  }
}

void MoePointDevice::allocate_destinations(const MoePointSpec& spec, const MoeProblem& prob,
                                           const runtime::Target& target, cudaStream_t s) {
  Impl& m = *impl_;
  if (m.ex != nullptr && m.ex->window_bytes < dst_bytes_)
    throw input_error("exchange", "the Combine windows hold " + std::to_string(m.ex->window_bytes) + " bytes; this "
                                  "point needs " + std::to_string(dst_bytes_));
  if (m.ex != nullptr) m.dst.emplace(*m.ex, dst_bytes_);
  else m.dst.emplace(target, spec.device, spec.num_ranks, prob.emulated_rank, dst_bytes_);
  const km::SyncLayout layout{prob.num_row_blocks};
  for (DeviceBuffer* b : {&m.sync, &m.sync_l1, &m.sync_l2}) {
    *b = DeviceBuffer(layout.bytes());
    XS_CUDA_CHECK(cudaMemsetAsync(b->get(), 0, b->bytes(), s));
  }
}

void MoePointDevice::allocate_copy_pipelines(const MoePointSpec& spec, const MoeProblem& prob,
                                             const runtime::Target& target, cudaStream_t s) {
  Impl& m = *impl_;
  const double h = spec.shape.hidden;
  const bool fp8 = spec.precision == "fp8";
  const bool copy_pipelines = m.copy_pipelines;
  // Copy pipelines: local packed buffers (kernel destinations), the target-side copies, the waves.
  for (int rank = 0; rank < spec.num_ranks && copy_pipelines; ++rank) {
    m.packed_local.emplace_back(dst_bytes_);
    const std::uint64_t bytes = std::max<std::uint64_t>(16, static_cast<std::uint64_t>(m.packed_count[rank]) * h * 2);
    m.packed_remote.push_back(rank == prob.emulated_rank
                                  ? nullptr
                                  : std::make_unique<runtime::TargetBuffer>(target, spec.device, bytes));
  }
  if (copy_pipelines) {
    waves_ = pipeline_waves(prob.expert_first_block, spec.overlap_waves);
    m.copy_stream.emplace();
    XS_CUDA_CHECK(cudaEventCreateWithFlags(&m.copies_done, cudaEventDisableTiming));
    for (const PipelineWave& w : waves_) {
      const std::uint32_t blocks = w.end_block - w.first_block;
      m.wave_sync.emplace_back(km::SyncLayout{blocks}.bytes());
      XS_CUDA_CHECK(cudaMemsetAsync(m.wave_sync.back().get(), 0, m.wave_sync.back().bytes(), s));
      m.wave_pool_scale.emplace_back(fp8 ? std::size_t{blocks} * 128 * (spec.shape.hidden / 128) * 4 : 0);
      m.wave_act_scale.emplace_back(fp8 ? std::size_t{blocks} * 128 * (spec.shape.intermediate / 64) * 4 : 0);
      std::vector<std::int32_t> begin(spec.num_ranks, -1), count(spec.num_ranks, 0);
      for (std::uint64_t r = std::uint64_t{w.first_block} * 128; r < std::uint64_t{w.end_block} * 128; ++r) {
        const int rank = prob.pool_dst_rank[r];
        if (rank < 0) continue;
        if (begin[rank] < 0) begin[rank] = m.packed_row[r];
        ++count[rank];
      }
      m.wave_packed_begin.push_back(begin);
      m.wave_packed_count.push_back(count);
      cudaEvent_t e = nullptr;
      XS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      m.wave_done.push_back(e);
    }
  }
}

void MoePointDevice::fill_base_args(const MoePointSpec& spec, const MoeProblem& prob) {
  Impl& m = *impl_;
  const bool fp8 = spec.precision == "fp8";
  const int e_local = prob.num_local_experts;
  km::MegaMoeArgs& a = base_;
  a.hidden = spec.shape.hidden;
  a.intermediate = spec.shape.intermediate;
  a.num_experts = e_local;
  a.top_k = spec.shape.top_k;
  a.tokens_per_rank = spec.tokens_per_rank;
  a.num_ranks = spec.num_ranks;
  a.num_row_blocks = static_cast<int>(prob.num_row_blocks);
  a.num_arrivals = prob.num_arrivals();
  a.block_n = spec.block_n;
  a.precision = fp8 ? km::Precision::kFp8 : km::Precision::kBf16;
  if (fp8) {
    a.arrival_scale = m.arrival_scale.as<float>();
    a.pool_scale = m.pool_scale.as<float>();
    a.w1_scale = m.w1_scale.as<float>();
    a.w2_scale = m.w2_scale.as<float>();
    a.act_scale = m.act_scale.as<float>();
  }
  a.arrival = m.arrival.get();
  a.pool = m.pool.get();
  a.w1 = m.w1.get();
  a.w2 = m.w2.get();
  a.act = m.act.get();
  a.routing = m.routing.tables();
  a.sync_words = m.sync.as<std::uint32_t>();
  a.sync_bytes = m.sync.bytes();
  for (std::size_t r = 0; r < m.dst->ptrs.size(); ++r) {
    a.dst[r] = m.dst->ptrs[r];
    a.dst_bytes[r] = dst_bytes_;
  }
}

MoePointDevice::~MoePointDevice() = default;

void MoePointDevice::poison_intermediates(cudaStream_t s) {
  Impl& m = *impl_;
  // NaN bits (bf16 0xFFFF, e4m3 0xFF, fp32 0xFFFFFFFF): a launch that reads a pool row, an act row or a scale
  // before this launch wrote it shows up as wrong output.
  for (const DeviceBuffer* b : {&m.pool, &m.act, &m.pool_scale, &m.act_scale}) poison_buffer(*b, s);
  for (const auto& b : m.wave_pool_scale) poison_buffer(b, s);
  for (const auto& b : m.wave_act_scale) poison_buffer(b, s);
}

void MoePointDevice::poison_act(cudaStream_t s) {
  poison_buffer(impl_->act, s);
  poison_buffer(impl_->act_scale, s);
}

void MoePointDevice::poison_destinations(cudaStream_t s) {
  Impl& m = *impl_;
  m.dst->poison(s);
  for (const auto& b : m.packed_local) km::launch_fill_bits16(b.get(), b.bytes() / 2, km::kPoisonBits, s);
  for (const auto& b : m.packed_remote)
    if (b) km::launch_fill_bits16(b->device_ptr(), b->bytes() / 2, km::kPoisonBits, s);
}

void MoePointDevice::enqueue(const MoeVariantPlan& v, cudaStream_t st, km::TileRecord* records,
                             std::uint64_t records_bytes) {
  Impl& m = *impl_;
  const MoePointSpec& spec = m.spec;
  km::MegaMoeConfig config = m.config;
  config.fault_skip_l2_dependency_wait = v.fault_skip_l2_wait;
  km::MegaMoeArgs a = base_;
  a.schedule = schedule_of(v);
  a.mode = v.completion_coupled ? km::EpilogueMode::kCompletionCoupled : km::EpilogueMode::kFused;
  a.phases = phases_of(v);
  if (a.phases == km::KernelPhases::kLinear1) a.sync_words = m.sync_l1.as<std::uint32_t>();
  if (a.phases == km::KernelPhases::kLinear2) a.sync_words = m.sync_l2.as<std::uint32_t>();
  const bool copies = v.pipeline != "fused";
  if (copies) {
    if (!m.copy_pipelines) throw input_error("--variants", v.name + " was not among the point's variants");
    a.routing = m.packed_routing.tables();
    for (int rank = 0; rank < spec.num_ranks; ++rank) a.dst[rank] = m.packed_local[rank].get();
  }
  if (records != nullptr) {
    if (v.pipeline == "unfused_overlapped" || a.phases != km::KernelPhases::kAll)
      throw input_error("records", v.name + " is not instrumented (several launches or a phase launch)");
    a.records = records;
    a.records_bytes = records_bytes;
  }
  const std::size_t row_bytes = static_cast<std::size_t>(spec.shape.hidden) * 2;  // bf16 Combine rows
  if (v.pipeline != "unfused_overlapped") {
    km::launch_megamoe(config, a, st);
    if (v.pipeline == "serial_then_copy")
      for (int rank = 0; rank < spec.num_ranks; ++rank)  // the copy-engine Combine of the remote rows
        if (m.packed_remote[rank] && m.packed_count[rank] > 0)
          XS_CUDA_CHECK(cudaMemcpyAsync(m.packed_remote[rank]->device_ptr(), m.packed_local[rank].get(),
                                        static_cast<std::size_t>(m.packed_count[rank]) * row_bytes, cudaMemcpyDefault,
                                        st));
    return;
  }
  // unfused_overlapped: wave i's launch, then its copies on the copy stream while wave i + 1 computes.
  const cudaStream_t cs = m.copy_stream->get();
  const std::size_t eb = m.fp8 ? 1 : 2;
  for (std::size_t i = 0; i < waves_.size(); ++i) {
    const PipelineWave& w = waves_[i];
    const std::uint32_t blocks = w.end_block - w.first_block;
    if (blocks == 0) continue;
    km::MegaMoeArgs wa = a;
    const std::size_t row0 = std::size_t{w.first_block} * 128;
    wa.num_row_blocks = static_cast<int>(blocks);
    wa.routing.pool_arrival += row0;
    wa.routing.pool_dst_rank += row0;
    wa.routing.pool_dst_slot += row0;
    wa.routing.pool_weight += row0;
    wa.routing.row_block_expert += w.first_block;  // absolute expert ids (W1/W2 rows); Serial reads no boundaries
    wa.pool = static_cast<std::uint8_t*>(m.pool.get()) + row0 * spec.shape.hidden * eb;
    wa.act = static_cast<std::uint8_t*>(m.act.get()) + row0 * spec.shape.intermediate * eb;
    wa.sync_words = m.wave_sync[i].as<std::uint32_t>();
    wa.sync_bytes = m.wave_sync[i].bytes();
    if (m.fp8) {
      wa.pool_scale = m.wave_pool_scale[i].as<float>();
      wa.act_scale = m.wave_act_scale[i].as<float>();
    }
    km::launch_megamoe(config, wa, st);
    XS_CUDA_CHECK(cudaEventRecord(m.wave_done[i], st));
    XS_CUDA_CHECK(cudaStreamWaitEvent(cs, m.wave_done[i], 0));
    for (int rank = 0; rank < spec.num_ranks; ++rank) {
      const std::int32_t n = m.wave_packed_count[i][rank];
      if (!m.packed_remote[rank] || n == 0) continue;
      const std::size_t off = static_cast<std::size_t>(m.wave_packed_begin[i][rank]) * row_bytes;
      XS_CUDA_CHECK(cudaMemcpyAsync(static_cast<std::uint8_t*>(m.packed_remote[rank]->device_ptr()) + off,
                                    static_cast<const std::uint8_t*>(m.packed_local[rank].get()) + off,
                                    static_cast<std::size_t>(n) * row_bytes, cudaMemcpyDefault, cs));
    }
  }
  XS_CUDA_CHECK(cudaEventRecord(m.copies_done, cs));
  XS_CUDA_CHECK(cudaStreamWaitEvent(st, m.copies_done, 0));
}

void MoePointDevice::run_reference(cudaStream_t s) {
  Impl& m = *impl_;
  const MoePointSpec& spec = m.spec;
  m.ref.emplace(spec.num_ranks, spec.tokens_per_rank, spec.shape.top_k, spec.shape.hidden);
  m.first.emplace(spec.num_ranks, spec.tokens_per_rank, spec.shape.top_k, spec.shape.hidden);
  if (m.copy_pipelines) m.unpacked.emplace(spec.num_ranks, spec.tokens_per_rank, spec.shape.top_k, spec.shape.hidden);
  m.compare_result = DeviceBuffer(sizeof(km::CombineCompareResult));
  m.ref->poison(s);
  km::MoeReferenceArgs ra = km::reference_args_for(base_);
  m.ref->fill_args(ra);
  run_moe_reference(ra, s);
  m.slot_mask = build_slot_mask(m.routing, spec.num_ranks, static_cast<std::uint32_t>(m.prob.slots_per_rank()), 0, -1, s);
  std::vector<void*> ref_ptrs;
  for (const auto& b : m.ref->ranks) ref_ptrs.push_back(b.get());
  const km::CombineCompareResult self = compare(ref_ptrs, false, 0.0f, 0.0f, s);
  reference_rms_ = self.compared_elements > 0
                       ? std::sqrt(self.sum_ref_sq / static_cast<double>(self.compared_elements))
                       : 0.0;
}

std::vector<void*> MoePointDevice::delivered(const MoeVariantPlan& v, cudaStream_t s) {
  Impl& m = *impl_;
  if (v.pipeline == "fused") return m.dst->ptrs;
  const MoePointSpec& spec = m.spec;
  m.unpacked->poison(s);  // scatter the delivered packed rows (the own rank's stay in its local buffer)
  km::CombineUnpackArgs ua;
  ua.hidden = spec.shape.hidden;
  ua.num_pool_rows = static_cast<int>(m.prob.num_pool_rows());
  ua.num_ranks = spec.num_ranks;
  ua.pool_dst_rank = m.routing.tables().pool_dst_rank;
  ua.pool_dst_slot = m.routing.tables().pool_dst_slot;
  ua.pool_packed_row = m.packed_row_dev.as<std::int32_t>();
  for (int rank = 0; rank < spec.num_ranks; ++rank) {
    ua.packed[rank] = m.packed_remote[rank] ? m.packed_remote[rank]->device_ptr() : m.packed_local[rank].get();
    ua.dst[rank] = m.unpacked->ranks[rank].get();
  }
  km::launch_combine_unpack(ua, s);
  sync_checked(s, "combine_unpack");
  std::vector<void*> out;
  for (const auto& b : m.unpacked->ranks) out.push_back(b.get());
  return out;
}

km::CombineCompareResult MoePointDevice::compare(const std::vector<void*>& test, bool against_first, float abs_tol,
                                                 float rel_tol, cudaStream_t s) {
  Impl& m = *impl_;
  if (!m.ref) throw input_error("compare", "run_reference first");
  const CombineDestinations& against = against_first ? *m.first : *m.ref;
  km::CombineCompareArgs ca;
  ca.num_ranks = m.spec.num_ranks;
  ca.hidden = m.spec.shape.hidden;
  ca.slots_per_rank = static_cast<std::uint32_t>(m.prob.slots_per_rank());
  for (int rank = 0; rank < m.spec.num_ranks; ++rank) {
    ca.test_dst[rank] = test[rank];
    ca.ref_dst[rank] = against.ranks[rank].get();
  }
  ca.slot_mask = m.slot_mask.as<std::uint32_t>();
  ca.abs_tol = abs_tol;
  ca.rel_tol = rel_tol;
  ca.result = m.compare_result.as<km::CombineCompareResult>();
  km::launch_compare_combine(ca, s);
  sync_checked(s, "compare_combine");
  km::CombineCompareResult out;
  runtime::copy_to_host(&out, m.compare_result.get(), sizeof out);
  return out;
}

void MoePointDevice::keep_as_first(const std::vector<void*>& test, cudaStream_t s) {
  Impl& m = *impl_;
  for (int rank = 0; rank < m.spec.num_ranks; ++rank)
    XS_CUDA_CHECK(cudaMemcpyAsync(m.first->ranks[rank].get(), test[rank], dst_bytes_, cudaMemcpyDefault, s));
  sync_checked(s, "copy first variant");
}

std::uint64_t MoePointDevice::own_window_unwritten() const {
  const Impl& m = *impl_;
  if (m.ex == nullptr) return 0;
  return count_poisoned_slots(m.ex->own_window, dst_bytes_, static_cast<std::size_t>(m.spec.shape.hidden));
}

}  // namespace xs::moe
