// xstage kernels layer (attention): the persistent tile scheduler. Tile t = (head, m_block) with the
// m_block fastest, so co-running CTAs stream the same head's K/V through L2. (A diagonal order that gives
// co-running CTAs every head was measured on the H200, results/h200/fa_a2a/f4cd35e/: FA-only in the
// Ulysses layout 6% faster at M = 8K, 11% slower at 32K-64K where the K/V reuse in L2 matters more.)
// Static: CTA c visits tiles
// c, c + num_ctas, c + 2*num_ctas, ... Dynamic (config.hpp TileSchedulerKind): CTA c starts with tile c,
// then each ticket n drawn from a global counter (0, 1, 2, ... across the grid) is tile num_ctas + n, until
// a ticket lands past the last tile. Header-only, host and device (CPU tests enumerate both).
#pragma once
#include <cstdint>

#include "attention/layout.cuh"

namespace xs::kernels::attention {

struct TileCoord {
  std::uint32_t head = 0;
  std::uint32_t m_block = 0;  // output rows [m_block * b_m, (m_block + 1) * b_m)
};

struct TileScheduler {
  std::uint32_t num_heads = 0;
  std::uint32_t num_m_blocks = 0;  // M / b_m
  std::uint32_t num_ctas = 1;
  bool dynamic = false;            // TileSchedulerKind::kDynamic

  XS_HD std::uint32_t num_tiles() const { return num_heads * num_m_blocks; }
  XS_HD TileCoord coord(std::uint32_t tile_idx) const {
    return TileCoord{tile_idx / num_m_blocks, tile_idx % num_m_blocks};
  }
  XS_HD std::uint32_t first_tile(std::uint32_t cta_idx) const { return cta_idx; }
  XS_HD std::uint32_t next_tile(std::uint32_t tile_idx) const { return tile_idx + num_ctas; }
  XS_HD std::uint32_t ticket_tile(std::uint32_t ticket) const { return num_ctas + ticket; }  // dynamic
  XS_HD bool valid(std::uint32_t tile_idx) const { return tile_idx < num_tiles(); }
  // Static only: how many tiles CTA cta_idx runs (dynamic: decided at run time).
  XS_HD std::uint32_t num_tiles_of(std::uint32_t cta_idx) const {
    return cta_idx < num_tiles() ? (num_tiles() - cta_idx + num_ctas - 1) / num_ctas : 0;
  }
};

}  // namespace xs::kernels::attention
