// xstage kernels layer (attention): the persistent tile scheduler. Tiles run in bands of heads_per_band heads,
// the head fastest inside a band, then the m-block (coord). One head per band is the m-block-fastest order:
// co-running CTAs stream the same head's K/V through L2. (A diagonal order that gives co-running CTAs every
// head was measured on the H200, results/h200/fa_a2a/f4cd35e/: FA-only in the Ulysses layout 6% faster at
// M = 8K, 11% slower at 32K-64K where the K/V reuse in L2 matters more; auto_heads_per_band in config.hpp
// picks the widest band whose K/V fits in L2.)
// Static: cluster c visits units
// c, c + num_clusters, c + 2*num_clusters, ... Dynamic (config.hpp TileSchedulerKind): cluster c starts with
// unit c, then each ticket n drawn from a global counter (0, 1, 2, ... across the grid; with clusters of 2
// only rank 0 draws and hands the unit to its peer) is unit num_clusters + n, until a ticket lands past
// the last unit. Without clusters (cluster_size 1) a unit is a tile and a cluster a CTA. Header-only, host and device (CPU tests enumerate both).
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
  // CTAs per cluster (FlashAttentionConfig::kv_cluster_size, divides num_ctas and num_m_blocks). The
  // scheduler hands out units of cluster_size consecutive tiles (m-blocks of one head, so the CTAs of a
  // cluster share K/V); the CTA of cluster rank r runs tile unit * cluster_size + r. With 1 a unit is a tile.
  std::uint32_t cluster_size = 1;
  // Heads per band (FlashAttentionConfig::heads_per_band, resolved; divides num_heads). Units run band by band;
  // inside a band the head changes fastest, then the m-block: co-running CTAs cover the band's heads for the
  // same query rows, whose Ulysses output rows [token][H][d] are contiguous. 1: the m-block-fastest order.
  std::uint32_t heads_per_band = 1;

  XS_HD std::uint32_t num_tiles() const { return num_heads * num_m_blocks; }
  XS_HD std::uint32_t num_units() const { return num_tiles() / cluster_size; }
  XS_HD std::uint32_t num_clusters() const { return num_ctas / cluster_size; }
  // Tile -> (head, m-block). Tiles unit * cluster_size + r of a unit are consecutive m-blocks of one head.
  XS_HD TileCoord coord(std::uint32_t tile_idx) const {
    const std::uint32_t unit = tile_idx / cluster_size, rank = tile_idx % cluster_size;
    const std::uint32_t units_per_head = num_m_blocks / cluster_size;
    const std::uint32_t band_units = heads_per_band * units_per_head;
    const std::uint32_t band = unit / band_units, in_band = unit % band_units;
    return TileCoord{band * heads_per_band + in_band % heads_per_band, (in_band / heads_per_band) * cluster_size + rank};
  }
  XS_HD std::uint32_t tile_of(std::uint32_t unit_idx, std::uint32_t cluster_rank) const {
    return unit_idx * cluster_size + cluster_rank;
  }
  // Units, per cluster (cluster_idx = cta_idx / cluster_size).
  XS_HD std::uint32_t first_unit(std::uint32_t cluster_idx) const { return cluster_idx; }
  XS_HD std::uint32_t next_unit(std::uint32_t unit_idx) const { return unit_idx + num_clusters(); }   // static
  XS_HD std::uint32_t ticket_unit(std::uint32_t ticket) const { return num_clusters() + ticket; }   // dynamic
  XS_HD bool valid_unit(std::uint32_t unit_idx) const { return unit_idx < num_units(); }
  // Tiles (what a CTA's consumers see); with cluster_size 1 these are the units.
  XS_HD std::uint32_t first_tile(std::uint32_t cta_idx) const {
    return tile_of(first_unit(cta_idx / cluster_size), cta_idx % cluster_size);
  }
  XS_HD bool valid(std::uint32_t tile_idx) const { return tile_idx < num_tiles(); }
  // Static only: how many tiles CTA cta_idx runs (dynamic: decided at run time).
  XS_HD std::uint32_t num_tiles_of(std::uint32_t cta_idx) const {
    const std::uint32_t cluster = cta_idx / cluster_size;
    return cluster < num_units() ? (num_units() - cluster + num_clusters() - 1) / num_clusters() : 0;
  }
};

}  // namespace xs::kernels::attention
