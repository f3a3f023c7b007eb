// xstage attention host layer: the CPU float64 attention reference (small shapes only: O(M^2 d) per
// head) and the checks every attention test and the runner share: error against a reference, and the
// Ulysses destination layout against the local output. Plain C++.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "xs/kernels/attention/layout.cuh"

namespace xs::attention {

// O = softmax(Q K^T * scale) V for query rows 0, row_step, 2*row_step, ... of every head, in float64.
// q, k, v: [num_heads][seq_len][head_dim] bf16 bits. Returns [num_heads][rows_per_head][head_dim].
std::vector<double> cpu_attention_reference(const std::vector<std::uint16_t>& q, const std::vector<std::uint16_t>& k,
                                            const std::vector<std::uint16_t>& v, int num_heads, int seq_len,
                                            int head_dim, int row_step = 1, double softmax_scale = 0);

// ||out - ref|| / ||ref|| over the sampled rows, plus the worst element (for the failure message).
struct ErrorStats {
  double rel_error = 0;      // Frobenius
  double max_abs_error = 0;
  std::uint64_t worst_idx = 0;  // index into ref
  double worst_out = 0, worst_ref = 0;
  std::uint64_t num_nonfinite = 0;  // NaN/Inf in out (e.g. poison left unwritten)
  std::string describe() const;
};
// out: full [num_heads][seq_len][head_dim] bf16; ref: rows 0, row_step, ... per head (ref_rows_per_head rows).
ErrorStats compare_sampled_rows(const std::uint16_t* out, int num_heads, int seq_len, int head_dim, int row_step,
                                const double* ref);
ErrorStats compare_sampled_rows(const std::uint16_t* out, int num_heads, int seq_len, int head_dim, int row_step,
                                const float* ref);

// Counts elements left at the poison pattern.
std::uint64_t count_poison(const std::uint16_t* data, std::uint64_t count);

// The destination check after the All-to-All: every element this sender owns in dst[r] equals the local
// output bit for bit (same compute path), every other element of dst[r] is still poison.
struct DestinationCheck {
  std::uint64_t num_checked = 0;
  std::uint64_t num_wrong = 0;        // owned element != local output (incl. unwritten poison)
  std::uint64_t num_unwritten = 0;    // owned element still poison
  std::uint64_t num_foreign_written = 0;  // element of another sender's heads no longer poison
  std::string first_wrong;            // "rank r token t head h col c: got 0x.., want 0x.."
  bool ok() const { return num_wrong == 0 && num_foreign_written == 0; }
};
DestinationCheck check_ulysses_destination(const xs::kernels::attention::UlyssesLayout& layout,
                                           const std::uint16_t* local_out,
                                           const std::vector<const std::uint16_t*>& dst_per_rank);
// The receive side of a multi-rank exchange (fa_runner.hpp FaExchange): a rank's window holds one block per
// sender (sender s at s * elems_per_block), and with the same inputs on every rank each block must equal
// `own_slice`, the rank's own FA-only slice. Poison (still 0xFFFF) counts as unwritten and wrong.
DestinationCheck check_received_blocks(const std::uint16_t* window, int num_senders, const std::uint16_t* own_slice,
                                       std::size_t elems_per_block);

}  // namespace xs::attention
