// xstage attention host layer: the layout-matched FA-only baseline (issue 13 item 1). FA-only writes the
// Ulysses rank slices ([M/P tokens][dst heads][d] per owner rank, src/xs/kernels/attention/layout.cuh) into local
// memory exactly as the fused epilogue sends them; the reference check reads heads-major [H][M][d], so the
// slices are gathered back here. Plain C++ (the CPU tests enumerate it).
#pragma once
#include <cstdint>
#include <vector>

#include "xs/kernels/attention/layout.cuh"

namespace xs::attention {

// slices[r]: rank r's buffer (UlyssesLayout::dst_bytes_per_rank() bytes). Returns this sender's heads as
// [num_heads][seq_len][head_dim] bf16 bits: element (h, t, c) = slices[owner(t)][dst_element_offset(h, t) + c].
std::vector<std::uint16_t> gather_heads_major(const xs::kernels::attention::UlyssesLayout& layout,
                                              const std::vector<const std::uint16_t*>& slices);

// The inverse: heads-major [num_heads][seq_len][head_dim] into P rank slices; elements of other senders'
// heads (dst_num_heads > num_heads) keep `fill`.
std::vector<std::vector<std::uint16_t>> scatter_rank_slices(const xs::kernels::attention::UlyssesLayout& layout,
                                                            const std::uint16_t* heads_major, std::uint16_t fill);

// Splits one contiguous buffer of P rank slices (rank r at r * dst_bytes_per_rank()) into slice pointers.
std::vector<const std::uint16_t*> contiguous_rank_slices(const xs::kernels::attention::UlyssesLayout& layout,
                                                         const std::uint16_t* base);

}  // namespace xs::attention
