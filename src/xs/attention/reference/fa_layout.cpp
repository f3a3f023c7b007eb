// xstage attention host layer: Ulysses rank slices <-> heads-major (see fa_layout.hpp).
#include "xs/attention/reference/fa_layout.hpp"

#include <algorithm>

#include "xs/common/error.hpp"

namespace xs::attention {

namespace ka = xs::kernels::attention;

namespace {
void check_slices(const ka::UlyssesLayout& u, std::size_t num_slices) {
  if (u.num_ranks == 0 || u.seq_len % u.num_ranks != 0 || num_slices != u.num_ranks)
    throw input_error("P", "need one slice per rank and P dividing M (P = " + std::to_string(u.num_ranks) +
                               ", M = " + std::to_string(u.seq_len) + ", " + std::to_string(num_slices) + " slices)");
}
}  // namespace

std::vector<std::uint16_t> gather_heads_major(const ka::UlyssesLayout& u, const std::vector<const std::uint16_t*>& slices) {
  check_slices(u, slices.size());
  const std::uint32_t d = u.head_dim;
  std::vector<std::uint16_t> out(static_cast<std::size_t>(u.num_heads) * u.seq_len * d);
  for (std::uint32_t h = 0; h < u.num_heads; ++h)
    for (std::uint32_t t = 0; t < u.seq_len; ++t) {
      const std::uint16_t* src = slices[u.owner_rank(t)] + u.dst_element_offset(h, t);
      std::copy(src, src + d, out.begin() + static_cast<std::ptrdiff_t>(ka::local_element_offset(h, t, u.seq_len, d)));
    }
  return out;
}

std::vector<std::vector<std::uint16_t>> scatter_rank_slices(const ka::UlyssesLayout& u, const std::uint16_t* heads_major,
                                                            std::uint16_t fill) {
  check_slices(u, u.num_ranks);
  const std::uint32_t d = u.head_dim;
  std::vector<std::vector<std::uint16_t>> slices(u.num_ranks,
                                                 std::vector<std::uint16_t>(u.dst_bytes_per_rank() / 2, fill));
  for (std::uint32_t h = 0; h < u.num_heads; ++h)
    for (std::uint32_t t = 0; t < u.seq_len; ++t) {
      const std::uint16_t* src = heads_major + ka::local_element_offset(h, t, u.seq_len, d);
      std::copy(src, src + d, slices[u.owner_rank(t)].begin() + static_cast<std::ptrdiff_t>(u.dst_element_offset(h, t)));
    }
  return slices;
}

std::vector<const std::uint16_t*> contiguous_rank_slices(const ka::UlyssesLayout& u, const std::uint16_t* base) {
  std::vector<const std::uint16_t*> out;
  for (std::uint32_t r = 0; r < u.num_ranks; ++r) out.push_back(base + r * (u.dst_bytes_per_rank() / 2));
  return out;
}

}  // namespace xs::attention
