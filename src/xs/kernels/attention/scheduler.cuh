// xstage kernels layer (attention): the persistent tile scheduler. Tiles run in bands of heads_per_band heads,
// the head fastest inside a band, then the m-block (coord). One head per band is the m-block-fastest order:
// co-running CTAs stream the same head's K/V through L2. (A diagonal order that gives co-running CTAs every
// head was measured on the H200, results/h200/archive/2026-12-02-f4cd35e/fa_a2a-diagonal/: FA-only in the Ulysses layout 6% faster at
// M = 8K, 11% slower at 32K-64K where the K/V reuse in L2 matters more; auto_heads_per_band in config.hpp
// picks the widest band whose K/V fits in L2.)
// Static: cluster c visits units
// c, c + num_clusters, c + 2*num_clusters, ... Dynamic (config.hpp TileSchedulerKind): cluster c starts with
// unit c, then each ticket n drawn from a global counter (0, 1, 2, ... across the grid; with clusters of 2
// only rank 0 draws and hands the unit to its peer) is unit num_clusters + n, until a ticket lands past
// the last unit. Without clusters (cluster_size 1) a unit is a tile and a cluster a CTA.
// Split tail (FlashAttentionConfig::tail_kv_splits): the last split_units tile units of the order run as
// kv_splits units each, one per disjoint range of KV tiles (consecutive in the unit order), so the last round
// of a launch hands out pieces 1/kv_splits as long and the CTAs finish closer together; the warpgroup that
// finishes a tile's last piece combines the others' partial results (split_combine.cuh) and stores the tile.
// Units are the scheduler's work items from here on: tile_of, kv_begin and kv_count say what a unit covers.
// Header-only, host and device (CPU tests enumerate both).
#pragma once
#include <cstdint>

#include "xs/kernels/attention/layout.cuh"

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
  // Split tail: the last split_units tile units (split_units <= num_tile_units()) each run as kv_splits units
  // over disjoint KV ranges of num_kv_tiles / kv_splits tiles each; kv_splits divides num_kv_tiles (the
  // kernel's Q-loop count is a kernel parameter: resolve_tail_split takes a divisor, validate_flash_attention
  // refuses any other). kv_splits 1 or split_units 0: no split; every unit covers KV tiles [0, num_kv_tiles).
  std::uint32_t kv_splits = 1;
  std::uint32_t split_units = 0;
  std::uint32_t num_kv_tiles = 0;  // M / b_n

  XS_HD std::uint32_t num_tiles() const { return num_heads * num_m_blocks; }
  // Groups of cluster_size tiles that share K/V (one head's consecutive m-blocks).
  XS_HD std::uint32_t num_tile_units() const { return num_tiles() / cluster_size; }
  XS_HD bool splits() const { return kv_splits > 1 && split_units > 0; }
  XS_HD std::uint32_t num_whole_units() const { return num_tile_units() - (splits() ? split_units : 0u); }
  // Units the scheduler hands out: whole tile units, then kv_splits pieces of each split one.
  XS_HD std::uint32_t num_units() const {
    return num_tile_units() + (splits() ? split_units * (kv_splits - 1) : 0u);
  }
  XS_HD std::uint32_t num_clusters() const { return num_ctas / cluster_size; }
  // Unit -> its tile unit; past the last unit, past the last tile unit (so tile_of stays invalid).
  XS_HD std::uint32_t tile_unit_of(std::uint32_t unit_idx) const {
    const std::uint32_t whole = num_whole_units();
    if (unit_idx < whole) return unit_idx;
    const std::uint32_t r = unit_idx - whole, pieces = (splits() ? split_units * kv_splits : 0u);
    return r < pieces ? whole + r / kv_splits : num_tile_units() + (r - pieces);
  }
  // Which piece of its tile unit a unit is (0 for a whole unit), and how many pieces the tile unit has.
  XS_HD std::uint32_t kv_part(std::uint32_t unit_idx) const {
    return unit_idx < num_whole_units() ? 0u : (unit_idx - num_whole_units()) % kv_splits;
  }
  XS_HD std::uint32_t kv_parts(std::uint32_t unit_idx) const { return unit_idx < num_whole_units() ? 1u : kv_splits; }
  // KV tiles [kv_begin, kv_begin + kv_count) of the unit.
  XS_HD std::uint32_t kv_count(std::uint32_t unit_idx) const { return num_kv_tiles / kv_parts(unit_idx); }
  XS_HD std::uint32_t kv_begin(std::uint32_t unit_idx) const { return kv_part(unit_idx) * kv_count(unit_idx); }
  // Instrumentation slot of (unit, cluster rank): 2 TileRecords (one per consumer warpgroup) each.
  XS_HD std::uint32_t num_record_slots() const { return num_units() * cluster_size; }
  XS_HD std::uint32_t record_slot(std::uint32_t unit_idx, std::uint32_t cluster_rank) const {
    return unit_idx * cluster_size + cluster_rank;
  }
  // Split tiles (every tile of a split tile unit) get consecutive indices from 0, for the partials and counters.
  XS_HD std::uint32_t num_split_tiles() const { return splits() ? split_units * cluster_size : 0u; }
  XS_HD std::uint32_t split_tile_idx(std::uint32_t tile_idx) const {
    return tile_idx - num_whole_units() * cluster_size;
  }
  // Tile -> (head, m-block). Tiles unit * cluster_size + r of a unit are consecutive m-blocks of one head.
  XS_HD TileCoord coord(std::uint32_t tile_idx) const {
    const std::uint32_t unit = tile_idx / cluster_size, rank = tile_idx % cluster_size;
    const std::uint32_t units_per_head = num_m_blocks / cluster_size;
    const std::uint32_t band_units = heads_per_band * units_per_head;
    const std::uint32_t band = unit / band_units, in_band = unit % band_units;
    return TileCoord{band * heads_per_band + in_band % heads_per_band, (in_band / heads_per_band) * cluster_size + rank};
  }
  XS_HD std::uint32_t tile_of(std::uint32_t unit_idx, std::uint32_t cluster_rank) const {
    return tile_unit_of(unit_idx) * cluster_size + cluster_rank;
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
  // Static only: how many units CTA cta_idx runs (dynamic: decided at run time).
  XS_HD std::uint32_t num_tiles_of(std::uint32_t cta_idx) const {
    const std::uint32_t cluster = cta_idx / cluster_size;
    return cluster < num_units() ? (num_units() - cluster + num_clusters() - 1) / num_clusters() : 0;
  }
};

}  // namespace xs::kernels::attention
