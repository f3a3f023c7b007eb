// Tests for attention/fa_layout: the layout-matched FA-only output (Ulysses rank slices in local memory)
// gathers back to heads-major exactly, every element once; scatter and gather invert each other and agree
// with the kernel's own UlyssesLayout::dst_element_offset; other senders' heads stay untouched.
#include "xs/attention/reference/fa_layout.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "xs/common/error.hpp"

namespace xs::attention {
namespace {

namespace ka = xs::kernels::attention;

ka::UlyssesLayout layout(std::uint32_t M, std::uint32_t P, std::uint32_t H, std::uint32_t dst_heads, std::uint32_t off,
                         std::uint32_t d) {
  ka::UlyssesLayout u;
  u.seq_len = M;
  u.num_ranks = P;
  u.num_heads = H;
  u.dst_num_heads = dst_heads;
  u.dst_head_offset = off;
  u.head_dim = d;
  return u;
}

// Distinct value per heads-major element (fits 16 bits for the shapes below), never the fill.
std::vector<std::uint16_t> numbered(const ka::UlyssesLayout& u) {
  std::vector<std::uint16_t> v(static_cast<std::size_t>(u.num_heads) * u.seq_len * u.head_dim);
  std::iota(v.begin(), v.end(), std::uint16_t{1});
  return v;
}

std::vector<const std::uint16_t*> pointers(const std::vector<std::vector<std::uint16_t>>& s) {
  std::vector<const std::uint16_t*> p;
  for (const auto& x : s) p.push_back(x.data());
  return p;
}

TEST(FaLayout, ScatterThenGatherIsTheIdentityForEveryShape) {
  for (std::uint32_t P : {1u, 2u, 4u, 8u})
    for (std::uint32_t H : {1u, 3u})
      for (std::uint32_t d : {8u, 16u}) {
        const auto u = layout(64, P, H, H, 0, d);
        const auto heads_major = numbered(u);
        const auto slices = scatter_rank_slices(u, heads_major.data(), 0xFFFF);
        ASSERT_EQ(slices.size(), P);
        EXPECT_EQ(gather_heads_major(u, pointers(slices)), heads_major) << "P=" << P << " H=" << H << " d=" << d;
      }
}

TEST(FaLayout, CompactSlicesAreCoveredOnceInTokenMajorOrder) {
  // dst_num_heads == num_heads: the slices are the fused variant's bytes, nothing left at the fill, and
  // rank r holds tokens [r M/P, (r+1) M/P) as [token][head][d].
  const auto u = layout(32, 4, 2, 2, 0, 4);
  const auto heads_major = numbered(u);
  const auto slices = scatter_rank_slices(u, heads_major.data(), 0xFFFF);
  std::set<std::uint16_t> seen;
  for (std::uint32_t r = 0; r < 4; ++r) {
    ASSERT_EQ(slices[r].size() * 2, u.dst_bytes_per_rank());
    for (std::uint16_t x : slices[r]) {
      EXPECT_NE(x, 0xFFFF);
      EXPECT_TRUE(seen.insert(x).second) << "element written twice";
    }
  }
  EXPECT_EQ(seen.size(), heads_major.size());
  // Token 9 (rank 1, row 1 of its slice), head 1, column 2: heads-major index (1*32 + 9)*4 + 2.
  EXPECT_EQ(slices[1][(1 * 2 + 1) * 4 + 2], heads_major[(1 * 32 + 9) * 4 + 2]);
}

TEST(FaLayout, WideRowsKeepOtherSendersHeadsAndAgreeWithTheKernelOffsets) {
  const auto u = layout(16, 2, 2, 6, 3, 4);  // this sender's heads land at 3, 4 of 6
  const auto heads_major = numbered(u);
  const auto slices = scatter_rank_slices(u, heads_major.data(), 0xFFFF);
  for (std::uint32_t t = 0; t < 16; ++t)
    for (std::uint32_t h = 0; h < 2; ++h)
      for (std::uint32_t c = 0; c < 4; ++c)
        EXPECT_EQ(slices[u.owner_rank(t)][u.dst_element_offset(h, t) + c],
                  heads_major[ka::local_element_offset(h, t, 16, 4) + c]);
  std::size_t untouched = 0;
  for (const auto& s : slices)
    for (std::uint16_t x : s) untouched += x == 0xFFFF;
  EXPECT_EQ(untouched, 16u * 4 * 4);  // 4 foreign heads of 6 per token row
  EXPECT_EQ(gather_heads_major(u, pointers(slices)), heads_major);
}

TEST(FaLayout, ContiguousSlicesStepByTheRankBytes) {
  const auto u = layout(64, 4, 2, 2, 0, 8);
  std::vector<std::uint16_t> buffer(4 * u.dst_bytes_per_rank() / 2);
  const auto p = contiguous_rank_slices(u, buffer.data());
  ASSERT_EQ(p.size(), 4u);
  for (std::size_t r = 0; r < 4; ++r) EXPECT_EQ(p[r] - buffer.data(), static_cast<std::ptrdiff_t>(r * 16 * 2 * 8));
}

TEST(FaLayout, RefusesASliceCountOtherThanP) {
  const auto u = layout(64, 4, 1, 1, 0, 8);
  std::vector<std::uint16_t> a(64 * 8);
  EXPECT_THROW(gather_heads_major(u, {a.data(), a.data()}), Error);
}

}  // namespace
}  // namespace xs::attention
