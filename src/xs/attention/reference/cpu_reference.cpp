// xstage attention host layer: CPU float64 reference and output checks (see cpu_reference.hpp).
#include "xs/attention/reference/cpu_reference.hpp"

#include <cmath>
#include <sstream>

#include "xs/attention/reference/bf16.hpp"

namespace xs::attention {

std::vector<double> cpu_attention_reference(const std::vector<std::uint16_t>& q, const std::vector<std::uint16_t>& k,
                                            const std::vector<std::uint16_t>& v, int num_heads, int seq_len,
                                            int head_dim, int row_step, double softmax_scale) {
  const double scale = softmax_scale > 0 ? softmax_scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
  const int rows = (seq_len + row_step - 1) / row_step;
  std::vector<double> out(static_cast<std::size_t>(num_heads) * rows * head_dim, 0.0);
  std::vector<double> scores(seq_len);
  for (int h = 0; h < num_heads; ++h) {
    const std::size_t base = static_cast<std::size_t>(h) * seq_len * head_dim;
    for (int i = 0; i < rows; ++i) {
      const int row = i * row_step;
      double mx = -INFINITY;
      for (int j = 0; j < seq_len; ++j) {
        double dot = 0;
        for (int c = 0; c < head_dim; ++c)
          dot += static_cast<double>(bf16_to_float(q[base + static_cast<std::size_t>(row) * head_dim + c])) *
                 bf16_to_float(k[base + static_cast<std::size_t>(j) * head_dim + c]);
        scores[j] = dot * scale;
        mx = std::max(mx, scores[j]);
      }
      double sum = 0;
      for (int j = 0; j < seq_len; ++j) {
        scores[j] = std::exp(scores[j] - mx);
        sum += scores[j];
      }
      double* o = out.data() + (static_cast<std::size_t>(h) * rows + i) * head_dim;
      for (int j = 0; j < seq_len; ++j) {
        const double p = scores[j] / sum;
        for (int c = 0; c < head_dim; ++c) o[c] += p * bf16_to_float(v[base + static_cast<std::size_t>(j) * head_dim + c]);
      }
    }
  }
  return out;
}

std::string ErrorStats::describe() const {
  std::ostringstream s;
  s << "rel error " << rel_error << ", max abs error " << max_abs_error << " at ref index " << worst_idx << " (out "
    << worst_out << ", ref " << worst_ref << "), non-finite " << num_nonfinite;
  return s.str();
}

namespace {
template <class Ref>
ErrorStats compare_impl(const std::uint16_t* out, int num_heads, int seq_len, int head_dim, int row_step,
                        const Ref* ref) {
  ErrorStats e;
  const int rows = (seq_len + row_step - 1) / row_step;
  double err2 = 0, ref2 = 0;
  for (int h = 0; h < num_heads; ++h) {
    for (int i = 0; i < rows; ++i) {
      const std::size_t o_base = (static_cast<std::size_t>(h) * seq_len + static_cast<std::size_t>(i) * row_step) * head_dim;
      const std::size_t r_base = (static_cast<std::size_t>(h) * rows + i) * head_dim;
      for (int c = 0; c < head_dim; ++c) {
        const double o = bf16_to_float(out[o_base + c]);
        const double r = static_cast<double>(ref[r_base + c]);
        if (!std::isfinite(o)) {
          ++e.num_nonfinite;
          continue;
        }
        const double d = o - r;
        err2 += d * d;
        ref2 += r * r;
        if (std::fabs(d) > e.max_abs_error) {
          e.max_abs_error = std::fabs(d);
          e.worst_idx = r_base + c;
          e.worst_out = o;
          e.worst_ref = r;
        }
      }
    }
  }
  e.rel_error = ref2 > 0 ? std::sqrt(err2 / ref2) : (err2 > 0 ? INFINITY : 0.0);
  if (e.num_nonfinite > 0) e.rel_error = INFINITY;
  return e;
}
}  // namespace

ErrorStats compare_sampled_rows(const std::uint16_t* out, int num_heads, int seq_len, int head_dim, int row_step,
                                const double* ref) {
  return compare_impl(out, num_heads, seq_len, head_dim, row_step, ref);
}
ErrorStats compare_sampled_rows(const std::uint16_t* out, int num_heads, int seq_len, int head_dim, int row_step,
                                const float* ref) {
  return compare_impl(out, num_heads, seq_len, head_dim, row_step, ref);
}

std::uint64_t count_poison(const std::uint16_t* data, std::uint64_t count) {
  std::uint64_t n = 0;
  for (std::uint64_t i = 0; i < count; ++i) n += data[i] == kBf16Poison;
  return n;
}

DestinationCheck check_ulysses_destination(const xs::kernels::attention::UlyssesLayout& u,
                                           const std::uint16_t* local_out,
                                           const std::vector<const std::uint16_t*>& dst_per_rank) {
  DestinationCheck c;
  const std::uint32_t d = u.head_dim;
  for (std::uint32_t rank = 0; rank < u.num_ranks; ++rank) {
    const std::uint16_t* dst = dst_per_rank.at(rank);
    for (std::uint32_t tir = 0; tir < u.tokens_per_rank(); ++tir) {
      const std::uint32_t token = rank * u.tokens_per_rank() + tir;
      for (std::uint32_t dh = 0; dh < u.dst_num_heads; ++dh) {
        const std::uint16_t* row = dst + (static_cast<std::uint64_t>(tir) * u.dst_num_heads + dh) * d;
        const bool owned = dh >= u.dst_head_offset && dh < u.dst_head_offset + u.num_heads;
        if (!owned) {
          for (std::uint32_t col = 0; col < d; ++col) c.num_foreign_written += row[col] != kBf16Poison;
          continue;
        }
        const std::uint32_t h = dh - u.dst_head_offset;
        const std::uint16_t* want = local_out + xs::kernels::attention::local_element_offset(h, token, u.seq_len, d);
        for (std::uint32_t col = 0; col < d; ++col) {
          ++c.num_checked;
          if (row[col] == kBf16Poison) ++c.num_unwritten;
          if (row[col] != want[col]) {
            if (c.num_wrong == 0) {
              std::ostringstream s;
              s << "rank " << rank << " token " << token << " head " << h << " col " << col << ": got 0x" << std::hex
                << row[col] << ", want 0x" << want[col];
              c.first_wrong = s.str();
            }
            ++c.num_wrong;
          }
        }
      }
    }
  }
  return c;
}

DestinationCheck check_received_blocks(const std::uint16_t* window, int num_senders, const std::uint16_t* own_slice,
                                       std::size_t elems_per_block) {
  DestinationCheck c;
  for (int sender = 0; sender < num_senders; ++sender) {
    const std::uint16_t* block = window + static_cast<std::size_t>(sender) * elems_per_block;
    for (std::size_t i = 0; i < elems_per_block; ++i) {
      ++c.num_checked;
      if (block[i] == kBf16Poison) ++c.num_unwritten;
      if (block[i] != own_slice[i]) {
        if (c.num_wrong == 0) {
          std::ostringstream s;
          s << "block from sender " << sender << " element " << i << ": got 0x" << std::hex << block[i] << ", want 0x"
            << own_slice[i];
          c.first_wrong = s.str();
        }
        ++c.num_wrong;
      }
    }
  }
  return c;
}

}  // namespace xs::attention
