// xstage moe host layer: the emulated rank's problem built from a routing: arrival rows, the
// expert-sorted pool with its routing tables exactly in layout.cuh's RoutingTables layout, the tile space,
// and the set of Combine slots a correct launch writes. Plain C++ (host vectors; the runner copies them).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "xs/kernels/moe/layout.cuh"
#include "xs/moe/point/routing.hpp"

namespace xs::moe {

inline constexpr int kPoolBlockRows = xs::kernels::moe::TileShape<128>::kBlockM;  // b_m = 128

struct MoeProblem {
  int num_ranks = 0;          // P
  int tokens_per_rank = 0;    // T
  int top_k = 0;
  int hidden = 0;             // h
  int intermediate = 0;       // I
  int emulated_rank = 0;      // the rank this GPU plays
  int num_local_experts = 0;  // E / P
  int first_expert = 0;       // global id of local expert 0 (= emulated_rank * E / P)

  // Arrival rows: distinct (src_rank, token) with at least one pair on this rank, in (src_rank, token) order.
  std::vector<std::int32_t> arrival_src_rank;
  std::vector<std::int32_t> arrival_token;

  // Pool rows [num_row_blocks * 128]: expert e's pairs in (src_rank, token, k) order, padded to 128.
  std::vector<std::int32_t> pool_arrival;   // arrival row, -1 for padding
  std::vector<std::int32_t> pool_dst_rank;  // source rank of the token, -1 for padding
  std::vector<std::int32_t> pool_dst_slot;  // token * top_k + k, -1 for padding
  std::vector<float> pool_weight;           // top-k weight, 0 for padding
  std::vector<std::uint32_t> expert_first_block;  // [num_local_experts + 1]
  std::vector<std::uint32_t> row_block_expert;    // [num_row_blocks] local expert of each row block
  std::uint32_t num_row_blocks = 0;

  std::uint64_t num_received_pairs = 0;               // valid pool rows
  std::vector<std::uint64_t> pairs_per_local_expert;  // [num_local_experts]
  std::uint64_t num_remote_pairs = 0;                 // pairs whose src_rank != emulated_rank

  int num_arrivals() const { return static_cast<int>(arrival_token.size()); }
  std::uint64_t num_pool_rows() const { return static_cast<std::uint64_t>(num_row_blocks) * kPoolBlockRows; }
  int slots_per_rank() const { return tokens_per_rank * top_k; }
  // Throws input_error naming the field unless block_n is 128 or 256, h % block_n == 0, 2I % block_n == 0.
  xs::kernels::moe::TileSpace tile_space(int block_n) const;
};

// Builds the emulated rank (routing.emulated_rank) of `routing` with hidden size h and expert intermediate
// size I (h, I >= 1, else input_error). The shape's tile divisibility is checked by tile_space().
MoeProblem build_problem(const Routing& routing, int hidden, int intermediate);

// Throws input_error("block_n" / "hidden" / "intermediate", ...) where the tiles do not fit the shape.
void validate_tile_shape(int hidden, int intermediate, int block_n);
// validate_tile_shape plus the precision: bf16 or fp8, and fp8 at b_n = 128 only. input_error otherwise. The run
// and the sweep's expansion (its dry run too) call it, so a sweep the dry run prints is one the run accepts.
void validate_tile_and_precision(int hidden, int intermediate, int block_n, const std::string& precision);
// The default tile width (megamoe's --block-n auto): 256 where that width runs (bf16; h and 2I multiples of 256),
// else 128. Issue 29's "the faster width as default": on an H100, b_n 256 beat 128 for every schedule at every local
// K_SM 132 configuration of the matrix that can run it (results/h100/calls-227e5e5, calls-cebb531).
int default_block_n(int hidden, int intermediate, const std::string& precision);

// Combine slots a correct launch writes: written[rank * slots_per_rank + slot] = 1 for every valid pool row
// (its dst rank and slot), 0 elsewhere. A verifier checks every 1 was written and every 0 left alone.
struct ExpectedSlots {
  int num_ranks = 0;
  int slots_per_rank = 0;
  std::vector<std::uint8_t> written;
  bool is_written(int rank, int slot) const {
    return written[static_cast<std::size_t>(rank) * slots_per_rank + slot] != 0;
  }
  std::uint64_t count(int rank) const;  // slots written on `rank`
};
ExpectedSlots expected_written_slots(const MoeProblem& problem);

}  // namespace xs::moe
