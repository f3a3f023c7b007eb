// xstage kernels layer (moe): the MegaMoE tile schedules (paper section 4.2, Algorithm 1). Serial,
// ExpertWave and Interleaved share one interface, begin() and next(); the kernel is templated on the
// schedule type. Header-only, host and device: the CPU tests enumerate exactly this code.
#pragma once
#include <cstdint>

#include "xs/kernels/moe/layout.cuh"

namespace xs::kernels::moe {

// Per-instance state. Instance g of G visits a strided subsequence of each tile list, so every cursor
// position stays congruent to g modulo `stride`. stride == 0 marks an instance with nothing to do.
struct ScheduleCursor {
  std::uint32_t k1 = 0;      // next Linear-1 position (Serial, Interleaved: dense L1 index p*P1 + n1;
                             // ExpertWave: position in the current wave's L1 list)
  std::uint32_t k2 = 0;      // next Linear-2 position, likewise (dense p*P2 + n2 / position in the wave)
  std::uint32_t stride = 0;  // G, the number of instances
  std::uint32_t wave_first_expert = 0;  // ExpertWave: first expert of the current wave; unused otherwise
};

namespace detail {
XS_HD ScheduleCursor strided_cursor(std::uint32_t instance, std::uint32_t num_instances) {
  // An instance id outside [0, G) would repeat another instance's tiles: give it nothing instead.
  if (instance >= num_instances) return ScheduleCursor{0, 0, 0, 0};
  return ScheduleCursor{instance, instance, num_instances, 0};
}
XS_HD TileId l1_tile(std::uint32_t first_row_block, std::uint32_t k, std::uint32_t per_row) {
  return TileId{TileKind::kL1, first_row_block + k / per_row, k % per_row};
}
XS_HD TileId l2_tile(std::uint32_t first_row_block, std::uint32_t k, std::uint32_t per_row) {
  return TileId{TileKind::kL2, first_row_block + k / per_row, k % per_row};
}
}  // namespace detail

// All Linear-1 tiles, then all Linear-2 tiles: instance g takes dense L1 indices g, g+G, ..., then dense
// L2 indices g, g+G, ... Every L2 dependency is one full L1 phase old when the instance reaches it.
struct Serial {
  XS_HD ScheduleCursor begin(const ScheduleProblem&, std::uint32_t instance, std::uint32_t num_instances) const {
    return detail::strided_cursor(instance, num_instances);
  }
  XS_HD bool next(const ScheduleProblem& prob, ScheduleCursor& cur, TileId& out) const {
    if (cur.stride == 0) return false;
    const TileSpace& t = prob.tiles;
    if (cur.k1 < t.num_l1_tiles()) {
      out = detail::l1_tile(0, cur.k1, t.l1_tiles_per_row);
      cur.k1 += cur.stride;
      return true;
    }
    if (cur.k2 < t.num_l2_tiles()) {
      out = detail::l2_tile(0, cur.k2, t.l2_tiles_per_row);
      cur.k2 += cur.stride;
      return true;
    }
    return false;
  }
};

// The original MegaMoE order: waves of experts_per_wave consecutive experts. A wave covers row blocks
// [expert_first_block[e0], expert_first_block[min(e0 + w, E)]); per wave, instance g takes the j-th tiles
// (j = g, g+G, ...) of the wave's L1 list, then of its L2 list. The L2 tiles of a wave run back to back,
// so their Combine bursts meet only the Linear-2 mainloop as gap. Experts with no row blocks are allowed.
// experts_per_wave == 0 schedules nothing (rejected on the host by schedule_invalid_reason).
struct ExpertWave {
  std::uint32_t experts_per_wave = 1;

  XS_HD ScheduleCursor begin(const ScheduleProblem&, std::uint32_t instance, std::uint32_t num_instances) const {
    return detail::strided_cursor(instance, num_instances);
  }
  XS_HD bool next(const ScheduleProblem& prob, ScheduleCursor& cur, TileId& out) const {
    if (cur.stride == 0 || experts_per_wave == 0) return false;
    const TileSpace& t = prob.tiles;
    while (cur.wave_first_expert < prob.num_experts) {
      const std::uint32_t first = cur.wave_first_expert;
      // min(first + w, E) without overflowing for w near 2^32 ("all experts in one wave").
      const std::uint32_t end = prob.num_experts - first <= experts_per_wave ? prob.num_experts
                                                                              : first + experts_per_wave;
      const std::uint32_t first_row_block = prob.expert_first_block[first];
      const std::uint32_t num_rows = prob.expert_first_block[end] - first_row_block;
      if (cur.k1 < num_rows * t.l1_tiles_per_row) {
        out = detail::l1_tile(first_row_block, cur.k1, t.l1_tiles_per_row);
        cur.k1 += cur.stride;
        return true;
      }
      if (cur.k2 < num_rows * t.l2_tiles_per_row) {
        out = detail::l2_tile(first_row_block, cur.k2, t.l2_tiles_per_row);
        cur.k2 += cur.stride;
        return true;
      }
      // Next wave: restart at position g, recovered from the cursor (k1 = g + m*G throughout).
      const std::uint32_t instance = cur.k1 % cur.stride;
      cur.wave_first_expert = end;
      cur.k1 = instance;
      cur.k2 = instance;
    }
    return false;
  }
};

// Algorithm 1 with single-CTA instances (r = 0, one CTA per pair): merge the instance's strided L1 and L2
// streams, emitting L2 (row p2 = k2 / P2) only while the L1 stream (row p1 = k1 / P1, +inf when done)
// leads by at least D = lead_rows rows, else the next L1 tile. Row blocks are global across experts, so
// the paper's e(p) and O_e are implicit in TileId::row_block. D >= 1 makes every L2(p) an instance emits
// come after all of its own L1(p); D = 0 can make a single-CTA instance wait on itself (see
// schedule_invalid_reason).
struct Interleaved {
  std::uint32_t lead_rows = 1;  // D

  XS_HD ScheduleCursor begin(const ScheduleProblem&, std::uint32_t instance, std::uint32_t num_instances) const {
    return detail::strided_cursor(instance, num_instances);
  }
  XS_HD bool next(const ScheduleProblem& prob, ScheduleCursor& cur, TileId& out) const {
    if (cur.stride == 0) return false;
    const TileSpace& t = prob.tiles;
    const bool l1_left = cur.k1 < t.num_l1_tiles();
    const bool l2_left = cur.k2 < t.num_l2_tiles();
    if (l2_left) {
      const std::uint64_t p2 = cur.k2 / t.l2_tiles_per_row;
      // p1 = +inf once L1 is done; 64-bit so that p2 + D cannot wrap for any D.
      if (!l1_left || p2 + lead_rows <= cur.k1 / t.l1_tiles_per_row) {
        out = detail::l2_tile(0, cur.k2, t.l2_tiles_per_row);
        cur.k2 += cur.stride;
        return true;
      }
    }
    if (!l1_left) return false;
    out = detail::l1_tile(0, cur.k1, t.l1_tiles_per_row);
    cur.k1 += cur.stride;
    return true;
  }
};

// ---- Host-side validation (nullptr when fine, else why not and what is accepted) ----------------------
inline const char* schedule_invalid_reason(const Serial&) { return nullptr; }
inline const char* schedule_invalid_reason(const ExpertWave& s) {
  return s.experts_per_wave == 0 ? "experts_per_wave = 0 forms no wave and schedules no tile; use experts_per_wave >= 1"
                                 : nullptr;
}
inline const char* schedule_invalid_reason(const Interleaved& s) {
  return s.lead_rows == 0 ? "D = 0 can deadlock: an instance may wait on its own unfinished Linear-1 tiles of the "
                            "same row; use D >= 1"
                          : nullptr;
}

// The expert boundaries the schedules read (host memory): E + 1 entries, non-decreasing, from 0 to P.
inline const char* schedule_problem_invalid_reason(const ScheduleProblem& prob) {
  if (prob.expert_first_block == nullptr)
    return "expert_first_block is null; it needs num_experts + 1 entries from 0 to num_row_blocks";
  if (prob.expert_first_block[0] != 0) return "expert_first_block[0] must be 0";
  for (std::uint32_t e = 0; e < prob.num_experts; ++e)
    if (prob.expert_first_block[e + 1] < prob.expert_first_block[e])
      return "expert_first_block must be non-decreasing (an expert owns a row-block range, possibly empty)";
  if (prob.expert_first_block[prob.num_experts] != prob.tiles.num_row_blocks)
    return "expert_first_block[num_experts] must equal tiles.num_row_blocks";
  return nullptr;
}

}  // namespace xs::kernels::moe
