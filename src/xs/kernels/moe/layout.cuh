// xstage kernels layer (moe): where everything of a MegaMoE launch lives. The tile space (Linear-1 and
// Linear-2 tiles of every expert-sorted row block), the routing tables the Dispatch and Combine stages
// read, the Combine destination of a pool row, the per-tile instrumentation record and the epoch-tagged
// synchronisation words. Header-only, host and device: CPU tests enumerate exactly this code.
#pragma once
#include <cstdint>

#include "xs/kernels/moe/config.hpp"

#ifndef XS_HD
#if defined(__CUDACC__)
#define XS_HD __host__ __device__ __forceinline__
#else
#define XS_HD inline
#endif
#endif

namespace xs::kernels::moe {

// ---- Tile space ---------------------------------------------------------------------------------------
// The expert-sorted pool holds every received (token, top-k) pair of this rank, grouped by local expert;
// expert e owns row blocks [expert_first_block[e], expert_first_block[e + 1]) of b_m = 128 rows each (its
// last block padded). A scheduler row p is one row block.
enum class TileKind : std::uint32_t { kL1 = 0, kL2 = 1 };

struct TileId {
  TileKind kind = TileKind::kL1;
  std::uint32_t row_block = 0;  // p
  std::uint32_t n_block = 0;    // n1 in [0, P1) for L1, n2 in [0, P2) for L2
};

struct TileSpace {
  std::uint32_t num_row_blocks = 0;     // P (the paper's "rows/stream")
  std::uint32_t l1_tiles_per_row = 0;   // P1 = 2I / b_n  (gate and up columns together)
  std::uint32_t l2_tiles_per_row = 0;   // P2 = h / b_n
  XS_HD std::uint32_t num_l1_tiles() const { return num_row_blocks * l1_tiles_per_row; }
  XS_HD std::uint32_t num_l2_tiles() const { return num_row_blocks * l2_tiles_per_row; }
  XS_HD std::uint32_t num_tiles() const { return num_l1_tiles() + num_l2_tiles(); }
  // Dense index for records: all L1 tiles (row-major over (p, n1)), then all L2 tiles.
  XS_HD std::uint32_t tile_index(const TileId& t) const {
    return t.kind == TileKind::kL1 ? t.row_block * l1_tiles_per_row + t.n_block
                                   : num_l1_tiles() + t.row_block * l2_tiles_per_row + t.n_block;
  }
  XS_HD TileId tile_at(std::uint32_t index) const {
    if (index < num_l1_tiles()) return TileId{TileKind::kL1, index / l1_tiles_per_row, index % l1_tiles_per_row};
    const std::uint32_t j = index - num_l1_tiles();
    return TileId{TileKind::kL2, j / l2_tiles_per_row, j % l2_tiles_per_row};
  }
};

// What a scheduler sees of the problem: the tile space and the expert boundaries (host or device memory,
// num_experts + 1 entries, expert_first_block[0] = 0, expert_first_block[num_experts] = num_row_blocks).
struct ScheduleProblem {
  TileSpace tiles;
  std::uint32_t num_experts = 0;
  const std::uint32_t* expert_first_block = nullptr;
};

// ---- Routing tables (device memory, written by the host before the launch) ---------------------------
// Pool row r (r < num_row_blocks * 128):
//   pool_arrival[r]  arrival row whose token it holds, -1 for padding (Dispatch zero-fills those rows)
//   pool_dst_rank[r] rank the Combine row goes to (the token's source rank), -1 for padding
//   pool_dst_slot[r] destination slot = token * top_k + k on that rank
//   pool_weight[r]   the top-k routing weight (fp32), applied after SwiGLU in the Linear-1 epilogue
// row_block_expert[p]: local expert of row block p.
struct RoutingTables {
  const std::int32_t* pool_arrival = nullptr;
  const std::int32_t* pool_dst_rank = nullptr;
  const std::int32_t* pool_dst_slot = nullptr;
  const float* pool_weight = nullptr;
  const std::uint32_t* row_block_expert = nullptr;
  const std::uint32_t* expert_first_block = nullptr;
};

// ---- Combine destination --------------------------------------------------------------------------------
// Rank r receives dst[r] = [tokens_per_rank][top_k][hidden] bf16: slot (token * top_k + k) holds this
// rank's expert output for that (token, k); the source rank reduces the top-k rows itself. An L2 tile
// (p, n2) writes columns [n2 * b_n, (n2 + 1) * b_n) of each valid row: one b_n * 2-byte segment per row.
XS_HD std::uint64_t combine_byte_offset(std::uint32_t slot, std::uint32_t hidden, std::uint32_t col) {
  return (static_cast<std::uint64_t>(slot) * hidden + col) * 2u;
}
XS_HD std::uint64_t combine_bytes_per_rank(std::uint32_t tokens_per_rank, std::uint32_t top_k, std::uint32_t hidden) {
  return static_cast<std::uint64_t>(tokens_per_rank) * top_k * hidden * 2u;
}

// ---- Synchronisation words (device memory, zeroed once at allocation, never reset) ---------------------
// Counters are epoch-tagged: launch number `epoch` (1, 2, ...; read from epoch_word at kernel start and
// advanced by the last CTA to finish) waits for dispatch_flag[p] == epoch and for
// l1_done[p] >= epoch * l1_tiles_per_row, so graph replays need no reset.
//   [0] epoch_word   [1] finished_ctas (monotonic: epoch * num_ctas when launch `epoch` ends)
//   [2, 2 + P)       dispatch_flag[p]
//   [2 + P, 2 + 2P)  l1_done[p]
struct SyncLayout {
  std::uint32_t num_row_blocks = 0;
  XS_HD std::uint32_t num_words() const { return 2u + 2u * num_row_blocks; }
  XS_HD std::uint64_t bytes() const { return 4ull * num_words(); }
  XS_HD std::uint32_t epoch_word() const { return 0; }
  XS_HD std::uint32_t finished_word() const { return 1; }
  XS_HD std::uint32_t dispatch_word(std::uint32_t p) const { return 2u + p; }
  XS_HD std::uint32_t l1_done_word(std::uint32_t p) const { return 2u + num_row_blocks + p; }
};

// ---- Instrumentation: one record per tile (80 B), indexed by TileSpace::tile_index --------------------
// Cycle stamps are clock64 of the SM the CTA runs on (comparable within a CTA); start_ns is %globaltimer
// at the mainloop start, to align SMs on one time axis.
struct TileRecord {
  std::uint32_t cta = 0;                 // CTA (instance) that ran the tile
  std::uint32_t sequence = 0;            // position of the tile in that CTA's schedule
  std::uint64_t start_ns = 0;            // %globaltimer at mainloop start
  std::uint64_t mainloop_start_cycles = 0;
  std::uint64_t mainloop_end_cycles = 0;
  std::uint64_t store_start_cycles = 0;  // storer span T_RS: stamp, all storer threads issue, sync, stamp
  std::uint64_t store_end_cycles = 0;
  std::uint32_t staging_wait_cycles = 0; // MMA side: wait on the staging slot's `empty` barrier
  std::uint32_t dependency_spin_cycles = 0;  // producer: wait on dispatch_flag (L1) or l1_done (L2); the
                                             // producer runs ahead, so part of it overlaps earlier tiles
  std::uint32_t queue_cycles = 0;        // staging slot full -> first store issued
  std::uint32_t sm = 0;                  // %smid
  std::uint32_t first_stage_wait_cycles = 0;  // MMA side: wait for the tile's first k-block (the exposed
                                              // part of the dependency spin and of the load latency)
  std::uint32_t reserved = 0;
  // %globaltimer at kernel entry (the CTA's first tile) and at kernel exit (its last tile); 0 elsewhere.
  // Entry -> first mainloop start is the start-up (Dispatch of the first row block, the first flags);
  // last store end -> exit is the end fence and the final barrier.
  std::uint64_t cta_boundary_ns = 0;
};
static_assert(sizeof(TileRecord) == 80, "TileRecord is 80 bytes");

}  // namespace xs::kernels::moe
