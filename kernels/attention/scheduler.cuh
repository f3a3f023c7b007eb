// xstage kernels layer (attention): the persistent tile scheduler. Tile t = (head, m_block) with the
// m_block fastest, so co-running CTAs stream the same head's K/V through L2. CTA c visits tiles
// c, c + num_ctas, c + 2*num_ctas, ... Header-only, host and device (CPU tests enumerate it).
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

  XS_HD std::uint32_t num_tiles() const { return num_heads * num_m_blocks; }
  XS_HD TileCoord coord(std::uint32_t tile_idx) const {
    return TileCoord{tile_idx / num_m_blocks, tile_idx % num_m_blocks};
  }
  XS_HD std::uint32_t first_tile(std::uint32_t cta_idx) const { return cta_idx; }
  XS_HD std::uint32_t next_tile(std::uint32_t tile_idx) const { return tile_idx + num_ctas; }
  XS_HD bool valid(std::uint32_t tile_idx) const { return tile_idx < num_tiles(); }
  XS_HD std::uint32_t num_tiles_of(std::uint32_t cta_idx) const {
    return cta_idx < num_tiles() ? (num_tiles() - cta_idx + num_ctas - 1) / num_ctas : 0;
  }
};

}  // namespace xs::kernels::attention
