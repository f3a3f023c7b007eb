// xstage layout tests (CPU, run on CI without a GPU): the scattered-rows address mode of the burst kernel.
// kernels/remote_store/layout.cuh is host+device code: these tests enumerate exactly what the kernel
// computes (scattered_store_offset over each thread's elements) and what the verifier expects.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <vector>

#include "../../kernels/remote_store/layout.cuh"

namespace xs {
namespace {

namespace rs = kernels::remote_store;
constexpr std::uint64_t kRow = rs::BurstLayout::kRowBytes;

rs::BurstLayout scattered_layout(std::uint32_t k, std::uint64_t rows_per_producer, std::uint32_t row_bits,
                                 std::uint32_t seed) {
  rs::BurstLayout l;
  l.num_producers = k;
  l.bytes_per_producer = rows_per_producer * kRow;
  l.row_bits = row_bits;
  l.row_seed = seed;
  return l;
}

TEST(ScatterLayout, RowPermutationIsABijectionForEveryWidthAndSeed) {
  for (std::uint32_t bits : {1u, 2u, 3u, 5u, 8u, 11u, 16u}) {
    for (std::uint32_t seed : {0u, 1u, 7u, 0xdeadbeefu}) {
      const rs::RowPermutation perm = scattered_layout(1, 1, bits, seed).row_permutation();
      std::vector<bool> hit(std::size_t{1} << bits, false);
      for (std::uint32_t x = 0; x < (1u << bits); ++x) {
        const std::uint32_t y = perm(x);
        ASSERT_LT(y, 1u << bits) << "bits " << bits << " seed " << seed;
        ASSERT_FALSE(hit[y]) << "slot " << y << " hit twice; bits " << bits << " seed " << seed;
        hit[y] = true;
      }
    }
  }
}

TEST(ScatterLayout, RingSizeIsThePowerOfTwoRowsAboveTheMinimum) {
  EXPECT_EQ(rs::scattered_row_bits(1), 1u);
  EXPECT_EQ(rs::scattered_row_bits(512), 1u);
  EXPECT_EQ(rs::scattered_row_bits(513), 2u);
  // H200: 2 x 60 MiB L2 -> 128 MiB = 2^19 rows of 256 B.
  EXPECT_EQ(rs::scattered_row_bits(2 * 62914560ull), 19u);
  EXPECT_EQ(rs::scattered_row_bits(128ull << 20), 19u);
  EXPECT_EQ(rs::scattered_row_bits((128ull << 20) + 1), 20u);
}

// Every producer, burst and row, through the kernel's own per-thread store loop (thread t stores elements
// t, t+T, ...), for 2-warp producers (T = 64) and other shapes: the bytes of one burst are disjoint and in
// range, each producer's rows hold its slice in order, and consecutive bursts cover the whole ring.
struct Shape {
  std::uint32_t k;
  std::uint64_t rows_per_producer;
  std::uint32_t row_bits;
  std::uint32_t threads;
  std::uint32_t width;
};

TEST(ScatterLayout, KernelStoresOfEveryProducerBurstAndRowAreDisjointInRangeAndCoverTheRing) {
  const Shape shapes[] = {{3, 5, 6, 64, 16}, {7, 4, 7, 64, 16}, {132, 2, 10, 64, 4}, {5, 3, 5, 256, 8},
                          {2, 13, 8, 32, 16}};
  for (const Shape& sh : shapes) {
    SCOPED_TRACE(testing::Message() << "K=" << sh.k << " rows/producer=" << sh.rows_per_producer << " bits="
                                    << sh.row_bits << " threads=" << sh.threads << " W=" << sh.width);
    const rs::BurstLayout l = scattered_layout(sh.k, sh.rows_per_producer, sh.row_bits, 42);
    ASSERT_LE(2 * l.rows_per_burst(), l.num_rows()) << "the plan keeps the ring >= 2 V";
    const rs::RowPermutation perm = l.row_permutation();
    const std::uint64_t num_elems = l.bytes_per_producer / sh.width;
    // Enough bursts to wrap the ring twice, so coverage and the wrap are both exercised.
    const std::uint64_t num_bursts = 2 * l.num_rows() / l.rows_per_burst() + 2;
    std::vector<std::uint8_t> covered(l.ring_bytes(), 0);
    std::vector<std::int64_t> owner(l.num_rows(), -1);  // last (burst * K + producer) per row slot
    for (std::uint64_t b = 0; b < num_bursts; ++b) {
      std::vector<std::uint8_t> in_burst(l.ring_bytes(), 0);
      for (std::uint32_t p = 0; p < l.num_producers; ++p) {
        const std::uint32_t first_row = l.logical_row(b, p, 0);
        for (std::uint32_t t = 0; t < sh.threads; ++t) {
          for (std::uint64_t e = t; e < num_elems; e += sh.threads) {
            const std::uint64_t off = rs::scattered_store_offset(perm, first_row, static_cast<std::uint32_t>(e), sh.width);
            ASSERT_LE(off + sh.width, l.ring_bytes()) << "store out of the ring";
            ASSERT_EQ(off % sh.width, 0u) << "misaligned store";
            // The element's row is row e*W/256 of the producer's slice, at the layout's slot.
            const std::uint64_t row = e * sh.width / kRow;
            ASSERT_EQ(off - off % kRow, l.row_offset_bytes(b, p, row));
            ASSERT_EQ(off % kRow, e * sh.width % kRow);
            for (std::uint32_t i = 0; i < sh.width; ++i) {
              ASSERT_EQ(in_burst[off + i], 0) << "burst " << b << " writes byte " << off + i << " twice";
              in_burst[off + i] = 1;
              covered[off + i] = 1;
            }
            owner[off / kRow] = static_cast<std::int64_t>(b * l.num_producers + p);
          }
        }
      }
      std::uint64_t bytes = 0;
      for (std::uint8_t x : in_burst) bytes += x;
      ASSERT_EQ(bytes, l.volume_bytes()) << "burst " << b << " writes exactly V distinct bytes";
    }
    for (std::uint64_t i = 0; i < covered.size(); ++i) ASSERT_EQ(covered[i], 1) << "ring byte " << i << " never written";
    // The verifier's inverse view: last_row_writer names the same producer-burst the enumeration saw last.
    for (std::uint64_t logical = 0; logical < l.num_rows(); ++logical) {
      rs::RowWriter w;
      ASSERT_TRUE(rs::last_row_writer(l, num_bursts, logical, &w));
      ASSERT_EQ(l.logical_row(w.burst_idx, w.producer_idx, w.row), logical);
      const std::uint32_t slot = perm(static_cast<std::uint32_t>(logical));
      EXPECT_EQ(owner[slot], static_cast<std::int64_t>(w.burst_idx * l.num_producers + w.producer_idx));
    }
  }
}

TEST(ScatterLayout, LastWriterKnowsRowsNoBurstReached) {
  const rs::BurstLayout l = scattered_layout(2, 3, 5, 9);  // 6 rows per burst, 32 rows
  rs::RowWriter w;
  EXPECT_FALSE(rs::last_row_writer(l, 0, 0, &w));
  ASSERT_TRUE(rs::last_row_writer(l, 2, 11, &w));  // rows 0..11 written by bursts 0, 1
  EXPECT_EQ(w.burst_idx, 1u);
  EXPECT_EQ(w.producer_idx, 1u);
  EXPECT_EQ(w.row, 2u);
  EXPECT_FALSE(rs::last_row_writer(l, 2, 12, &w));
  // 6 bursts = 36 rows: logical rows 0..3 were rewritten at stream positions 32..35 (burst 5 = 30..35).
  ASSERT_TRUE(rs::last_row_writer(l, 6, 0, &w));  // position 32 = burst 5, producer 0, row 2
  EXPECT_EQ(w.burst_idx, 5u);
  EXPECT_EQ(w.producer_idx, 0u);
  EXPECT_EQ(w.row, 2u);
  ASSERT_TRUE(rs::last_row_writer(l, 6, 4, &w));  // position 4 = burst 0, producer 1, row 1 (not rewritten)
  EXPECT_EQ(w.burst_idx, 0u);
  EXPECT_EQ(w.producer_idx, 1u);
  EXPECT_EQ(w.row, 1u);
}

// The H200 ring (2^19 rows): consecutive rows of a stream land far apart, as a random permutation would
// put them, and the seed changes the placement.
TEST(ScatterLayout, ConsecutiveRowsLandFarApartAndTheSeedMatters) {
  const rs::BurstLayout a = scattered_layout(132, 64, 19, 1), b = scattered_layout(132, 64, 19, 2);
  const rs::RowPermutation pa = a.row_permutation(), pb = b.row_permutation();
  std::uint64_t near = 0, same = 0;
  const std::uint32_t n = 1u << 19;
  for (std::uint32_t x = 0; x + 1 < n; ++x) {
    const long long d = static_cast<long long>(pa(x + 1)) - static_cast<long long>(pa(x));
    near += std::llabs(d) < 16 ? 1 : 0;  // within 4 KiB
    same += pa(x) == pb(x) ? 1 : 0;
  }
  EXPECT_LT(near, n / 1000) << "a random permutation puts ~32/2^19 of neighbours within 4 KiB";
  EXPECT_LT(same, n / 1000);
  // One burst (K=132, B=16 KiB: 8448 rows) touches almost as many distinct 4-KiB pages as it has rows.
  std::set<std::uint32_t> pages;
  for (std::uint64_t r = 0; r < a.rows_per_burst(); ++r) pages.insert(pa(static_cast<std::uint32_t>(r)) / 16);
  EXPECT_GT(pages.size(), a.rows_per_burst() * 9 / 10);
}

}  // namespace
}  // namespace xs
