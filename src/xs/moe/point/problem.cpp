// xstage moe host layer: builds the emulated rank's pool and routing tables (see problem.hpp).
#include "xs/moe/point/problem.hpp"

#include <string>

#include "xs/common/error.hpp"

namespace xs::moe {

void validate_tile_shape(int hidden, int intermediate, int block_n) {
  if (block_n != 128 && block_n != 256)
    throw input_error("block_n", "the N tile width b_n must be 128 or 256, got " + std::to_string(block_n));
  if (hidden < 1 || hidden % block_n != 0)
    throw input_error("hidden", "h = " + std::to_string(hidden) + " must be a positive multiple of b_n = " +
                                    std::to_string(block_n) + " (Linear-2 tiles are b_n output columns)");
  if (intermediate < 1 || (2 * intermediate) % block_n != 0)
    throw input_error("intermediate", "2I = " + std::to_string(2 * intermediate) +
                                          " must be a positive multiple of b_n = " + std::to_string(block_n) +
                                          " (Linear-1 tiles are b_n interleaved gate/up columns)");
}

void validate_tile_and_precision(int hidden, int intermediate, int block_n, const std::string& precision) {
  validate_tile_shape(hidden, intermediate, block_n);
  if (precision != "bf16" && precision != "fp8")
    throw input_error("precision", "'" + precision + "' is not a precision; accepted: bf16, fp8");
  if (precision == "fp8" && block_n != 128)
    throw input_error("block_n", "fp8 W8A8 is built for b_n = 128 only (256 accumulators per thread at 256)");
}

int default_block_n(int hidden, int intermediate, const std::string& precision) {
  try {
    validate_tile_and_precision(hidden, intermediate, 256, precision);
    return 256;
  } catch (const Error&) {
    return 128;
  }
}

xs::kernels::moe::TileSpace MoeProblem::tile_space(int block_n) const {
  validate_tile_shape(hidden, intermediate, block_n);
  xs::kernels::moe::TileSpace t;
  t.num_row_blocks = num_row_blocks;
  t.l1_tiles_per_row = static_cast<std::uint32_t>(2 * intermediate / block_n);  // P1 = 2I / b_n
  t.l2_tiles_per_row = static_cast<std::uint32_t>(hidden / block_n);            // P2 = h / b_n
  return t;
}

MoeProblem build_problem(const Routing& routing, int hidden, int intermediate) {
  if (hidden < 1) throw input_error("hidden", "h must be an integer >= 1, got " + std::to_string(hidden));
  if (intermediate < 1)
    throw input_error("intermediate", "I must be an integer >= 1, got " + std::to_string(intermediate));
  const RoutingParams& rp = routing.params;
  MoeProblem pb;
  pb.num_ranks = rp.num_ranks;
  pb.tokens_per_rank = rp.tokens_per_rank;
  pb.top_k = rp.top_k;
  pb.hidden = hidden;
  pb.intermediate = intermediate;
  pb.emulated_rank = routing.emulated_rank;
  pb.num_local_experts = routing.experts_per_rank();
  pb.first_expert = pb.emulated_rank * pb.num_local_experts;
  const int num_local = pb.num_local_experts;

  // Pass 1: pairs per local expert and the arrival rows, both in (src_rank, token, k) order.
  pb.pairs_per_local_expert.assign(num_local, 0);
  for (int r = 0; r < rp.num_ranks; ++r) {
    for (int t = 0; t < rp.tokens_per_rank; ++t) {
      bool arrives = false;
      for (int k = 0; k < rp.top_k; ++k) {
        const int local = routing.expert(r, t, k) - pb.first_expert;
        if (local < 0 || local >= num_local) continue;
        ++pb.pairs_per_local_expert[local];
        ++pb.num_received_pairs;
        if (r != pb.emulated_rank) ++pb.num_remote_pairs;
        arrives = true;
      }
      if (arrives) {
        pb.arrival_src_rank.push_back(r);
        pb.arrival_token.push_back(t);
      }
    }
  }

  // Expert ranges: each expert's pairs padded up to whole 128-row blocks (an expert with no pair has none).
  pb.expert_first_block.assign(num_local + 1, 0);
  for (int e = 0; e < num_local; ++e) {
    const std::uint64_t blocks = (pb.pairs_per_local_expert[e] + kPoolBlockRows - 1) / kPoolBlockRows;
    pb.expert_first_block[e + 1] = pb.expert_first_block[e] + static_cast<std::uint32_t>(blocks);
  }
  pb.num_row_blocks = pb.expert_first_block[num_local];
  pb.row_block_expert.resize(pb.num_row_blocks);
  for (int e = 0; e < num_local; ++e)
    for (std::uint32_t p = pb.expert_first_block[e]; p < pb.expert_first_block[e + 1]; ++p)
      pb.row_block_expert[p] = static_cast<std::uint32_t>(e);

  // Pass 2: fill each expert's rows in (src_rank, token, k) order; what is left is padding.
  const std::uint64_t rows = pb.num_pool_rows();
  pb.pool_arrival.assign(rows, -1);
  pb.pool_dst_rank.assign(rows, -1);
  pb.pool_dst_slot.assign(rows, -1);
  pb.pool_weight.assign(rows, 0.0f);
  std::vector<std::uint64_t> next_row(num_local);
  for (int e = 0; e < num_local; ++e)
    next_row[e] = static_cast<std::uint64_t>(pb.expert_first_block[e]) * kPoolBlockRows;
  int arrival = 0;
  for (int r = 0; r < rp.num_ranks; ++r) {
    for (int t = 0; t < rp.tokens_per_rank; ++t) {
      bool arrives = false;
      for (int k = 0; k < rp.top_k; ++k) {
        const int local = routing.expert(r, t, k) - pb.first_expert;
        if (local < 0 || local >= num_local) continue;
        const std::uint64_t row = next_row[local]++;
        pb.pool_arrival[row] = arrival;
        pb.pool_dst_rank[row] = r;
        pb.pool_dst_slot[row] = t * rp.top_k + k;
        pb.pool_weight[row] = routing.weight(r, t, k);
        arrives = true;
      }
      if (arrives) ++arrival;
    }
  }
  return pb;
}

std::uint64_t ExpectedSlots::count(int rank) const {
  std::uint64_t n = 0;
  for (int s = 0; s < slots_per_rank; ++s) n += is_written(rank, s) ? 1 : 0;
  return n;
}

ExpectedSlots expected_written_slots(const MoeProblem& problem) {
  ExpectedSlots out;
  out.num_ranks = problem.num_ranks;
  out.slots_per_rank = problem.slots_per_rank();
  out.written.assign(static_cast<std::size_t>(out.num_ranks) * out.slots_per_rank, 0);
  for (std::uint64_t row = 0; row < problem.num_pool_rows(); ++row) {
    if (problem.pool_arrival[row] < 0) continue;
    out.written[static_cast<std::size_t>(problem.pool_dst_rank[row]) * out.slots_per_rank +
                problem.pool_dst_slot[row]] = 1;
  }
  return out;
}

}  // namespace xs::moe
