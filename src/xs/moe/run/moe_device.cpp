// xstage moe layer (CUDA): routing upload, destinations, reference run and destination check (moe_device.hpp).
#include "xs/moe/run/moe_device.hpp"

#include <cstring>
#include <sstream>

#include "xs/common/error.hpp"
#include "xs/kernels/moe/random_fill.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::moe {

namespace km = xs::kernels::moe;

namespace {

template <class T>
DeviceBuffer upload_span(std::span<const T> host) {
  DeviceBuffer b(host.size_bytes());
  runtime::copy_to_device(b.get(), host.data(), host.size_bytes());
  return b;
}

float bf16_bits_value(std::uint16_t bits) {
  const std::uint32_t w = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &w, sizeof f);
  return f;
}

// A device trap or fault surfaces at the sync; name what was running.
void sync_named(cudaStream_t stream, const char* what) {
  const cudaError_t err = cudaStreamSynchronize(stream);
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();
  throw Error(ExitCode::kDeviceFailure, "cuda", what,
              std::string(what) + " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

}  // namespace

DeviceRouting::DeviceRouting(const RoutingHostView& h)
    : pool_arrival(upload_span(h.pool_arrival)),
      pool_dst_rank(upload_span(h.pool_dst_rank)),
      pool_dst_slot(upload_span(h.pool_dst_slot)),
      pool_weight(upload_span(h.pool_weight)),
      row_block_expert(upload_span(h.row_block_expert)),
      expert_first_block(upload_span(h.expert_first_block)),
      num_pool_rows(static_cast<int>(h.pool_arrival.size())) {
  const std::size_t n = h.pool_arrival.size();
  if (h.pool_dst_rank.size() != n || h.pool_dst_slot.size() != n || h.pool_weight.size() != n)
    throw input_error("routing",
                      "pool_arrival, pool_dst_rank, pool_dst_slot and pool_weight need one entry per pool row");
  if (n != h.row_block_expert.size() * km::TileShape<128>::kBlockM)
    throw input_error("routing", "row_block_expert needs one entry per 128 pool rows");
}

km::RoutingTables DeviceRouting::tables() const {
  km::RoutingTables t;
  t.pool_arrival = pool_arrival.as<const std::int32_t>();
  t.pool_dst_rank = pool_dst_rank.as<const std::int32_t>();
  t.pool_dst_slot = pool_dst_slot.as<const std::int32_t>();
  t.pool_weight = pool_weight.as<const float>();
  t.row_block_expert = row_block_expert.as<const std::uint32_t>();
  t.expert_first_block = expert_first_block.as<const std::uint32_t>();
  return t;
}

CombineDestinations::CombineDestinations(int ranks_, int tokens_per_rank, int top_k, int hidden_)
    : num_ranks(ranks_), hidden(hidden_) {
  if (num_ranks < 1 || num_ranks > km::kMaxRanks || tokens_per_rank < 1 || top_k < 1 || hidden < 1)
    throw input_error("num_ranks", "Combine destinations need 1.." + std::to_string(km::kMaxRanks) +
                                       " ranks and T, top_k, h >= 1");
  slots_per_rank = static_cast<std::uint32_t>(tokens_per_rank) * static_cast<std::uint32_t>(top_k);
  for (int r = 0; r < num_ranks; ++r) ranks.emplace_back(bytes_per_rank());
}

std::uint64_t CombineDestinations::bytes_per_rank() const {
  return static_cast<std::uint64_t>(slots_per_rank) * static_cast<std::uint64_t>(hidden) * 2u;
}

void CombineDestinations::poison(cudaStream_t stream, std::uint16_t bits) {
  for (const DeviceBuffer& b : ranks) km::launch_fill_bits16(b.get(), b.bytes() / 2, bits, stream);
}

std::vector<std::uint16_t> CombineDestinations::download(int rank) const {
  return runtime::download<std::uint16_t>(ranks.at(static_cast<std::size_t>(rank)));
}

void run_moe_reference(km::MoeReferenceArgs args, cudaStream_t stream) {
  // Validate everything but the scratch first (a bad shape is exit 2, not a failed cudaMalloc): the probe
  // stands in a scratch of exactly the needed size.
  km::MoeReferenceArgs probe = args;
  probe.act_scratch = reinterpret_cast<void*>(std::uintptr_t{256});
  probe.act_scratch_bytes = probe.act_scratch_bytes_needed();
  km::validate_moe_reference(probe);
  DeviceBuffer scratch(args.act_scratch_bytes_needed());
  args.act_scratch = scratch.get();
  args.act_scratch_bytes = scratch.bytes();
  km::launch_moe_reference(args, stream);
  sync_named(stream, "moe reference");
}

DeviceBuffer build_slot_mask(const DeviceRouting& routing, int num_ranks, std::uint32_t slots_per_rank, int row_begin,
                             int row_end, cudaStream_t stream) {
  DeviceBuffer mask(static_cast<std::size_t>(num_ranks) * slots_per_rank * 4);
  km::SlotMaskArgs a;
  a.routing = routing.tables();
  a.num_pool_rows = routing.num_pool_rows;
  a.row_begin = row_begin;
  a.row_end = row_end;
  a.num_ranks = num_ranks;
  a.slots_per_rank = slots_per_rank;
  a.mask = mask.as<std::uint32_t>();
  a.mask_bytes = mask.bytes();
  km::launch_build_slot_mask(a, stream);
  sync_named(stream, "slot mask");
  return mask;
}

bool CombineCheck::clean() const {
  return counts.wrong_elements == 0 && counts.unwritten_slots == 0 && counts.unexpected_slots == 0 &&
         counts.multi_writer_slots == 0;
}

std::string CombineCheck::summary() const {
  std::ostringstream s;
  s << "compared " << counts.compared_elements << " of " << counts.total_elements << " elements: wrong "
    << counts.wrong_elements << ", unwritten slots " << counts.unwritten_slots << " (" << counts.unwritten_elements
    << " elements), unexpected slots " << counts.unexpected_slots << " (" << counts.unexpected_elements
    << " elements), multi-writer slots " << counts.multi_writer_slots << ", bitwise equal "
    << counts.bitwise_equal_elements << "; max abs " << counts.max_abs_error << ", max rel " << counts.max_rel_error;
  if (worst_rank >= 0)
    s << "; worst (excess " << counts.worst_excess << ") rank " << worst_rank << " slot " << worst_slot << " col "
      << worst_col << ": test " << worst_test << " ref " << worst_ref;
  return s.str();
}

CombineCheck compare_combine(const CombineCheckSpec& spec, cudaStream_t stream) {
  if (!spec.test || !spec.ref || !spec.slot_mask)
    throw input_error("compare_combine", "needs test and reference destinations and a slot mask");
  const CombineDestinations& t = *spec.test;
  const CombineDestinations& r = *spec.ref;
  if (t.num_ranks != r.num_ranks || t.hidden != r.hidden || t.slots_per_rank != r.slots_per_rank)
    throw input_error("compare_combine", "test and reference destinations differ in ranks, slots or hidden size");
  if (spec.slot_mask->bytes() < static_cast<std::size_t>(t.num_ranks) * t.slots_per_rank * 4)
    throw input_error("slot_mask", "the slot mask is smaller than num_ranks * slots_per_rank words");
  DeviceBuffer result(sizeof(km::CombineCompareResult));
  km::CombineCompareArgs a;
  a.num_ranks = t.num_ranks;
  a.hidden = t.hidden;
  a.slots_per_rank = t.slots_per_rank;
  for (int k = 0; k < t.num_ranks; ++k) {
    a.test_dst[k] = t.ranks[k].get();
    a.ref_dst[k] = r.ranks[k].get();
  }
  a.slot_mask = spec.slot_mask->as<const std::uint32_t>();
  a.poison_bits = spec.poison_bits;
  a.abs_tol = spec.abs_tol;
  a.rel_tol = spec.rel_tol;
  a.result = result.as<km::CombineCompareResult>();
  km::launch_compare_combine(a, stream);
  sync_named(stream, "compare_combine");
  CombineCheck c;
  runtime::copy_to_host(&c.counts, result.get(), sizeof c.counts);
  if (c.counts.worst_index != ~0ull) {
    const std::uint64_t per_rank = static_cast<std::uint64_t>(t.slots_per_rank) * t.hidden;
    c.worst_rank = static_cast<int>(c.counts.worst_index / per_rank);
    const std::uint64_t in_rank = c.counts.worst_index % per_rank;
    c.worst_slot = static_cast<int>(in_rank / t.hidden);
    c.worst_col = static_cast<int>(in_rank % t.hidden);
    std::uint16_t tb = 0, rb = 0;
    runtime::copy_to_host(&tb, t.ranks[c.worst_rank].as<const std::uint16_t>() + in_rank, 2);
    runtime::copy_to_host(&rb, r.ranks[c.worst_rank].as<const std::uint16_t>() + in_rank, 2);
    c.worst_test = bf16_bits_value(tb);
    c.worst_ref = bf16_bits_value(rb);
  }
  return c;
}

}  // namespace xs::moe
