// xstage layout tests (CPU, run on CI without a GPU): the scattered-rows address mode of the burst kernel.
// src/xs/kernels/remote_store/layout.cuh is host+device code: these tests enumerate exactly what the kernel
// computes (scattered_store_offset over each thread's elements) and what the verifier expects.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <vector>

#include "xs/kernels/remote_store/layout.cuh"

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
    // Every row of the S whole-burst slots is written; the rows past them never are.
    const std::uint64_t used_bytes = l.scattered_burst_slots() * l.rows_per_burst() * kRow;
    std::uint64_t covered_bytes = 0;
    for (std::uint8_t x : covered) covered_bytes += x;
    ASSERT_EQ(covered_bytes, used_bytes) << "bytes of the ring written over two wraps";
    // The verifier's inverse view: last_row_writer names the same producer-burst the enumeration saw last.
    for (std::uint64_t logical = 0; logical < l.num_rows(); ++logical) {
      rs::RowWriter w;
      const bool used = logical < l.scattered_burst_slots() * l.rows_per_burst();
      ASSERT_EQ(rs::last_row_writer(l, num_bursts, logical, &w), used) << "logical row " << logical;
      if (!used) continue;
      ASSERT_EQ(l.logical_row(w.burst_idx, w.producer_idx, w.row), logical);
      const std::uint32_t slot = perm(static_cast<std::uint32_t>(logical));
      EXPECT_EQ(owner[slot], static_cast<std::int64_t>(w.burst_idx * l.num_producers + w.producer_idx));
    }
  }
}

TEST(ScatterLayout, LastWriterKnowsRowsNoBurstReached) {
  const rs::BurstLayout l = scattered_layout(2, 3, 5, 9);  // 6 rows per burst, 32 rows: 5 burst slots
  ASSERT_EQ(l.scattered_burst_slots(), 5u);
  rs::RowWriter w;
  EXPECT_FALSE(rs::last_row_writer(l, 0, 0, &w));
  ASSERT_TRUE(rs::last_row_writer(l, 2, 11, &w));  // rows 0..11 written by bursts 0, 1
  EXPECT_EQ(w.burst_idx, 1u);
  EXPECT_EQ(w.producer_idx, 1u);
  EXPECT_EQ(w.row, 2u);
  EXPECT_FALSE(rs::last_row_writer(l, 2, 12, &w));
  // 6 bursts: burst 5 reused slot 0 (rows 0..5) with the same producers and rows as burst 0.
  ASSERT_TRUE(rs::last_row_writer(l, 6, 0, &w));
  EXPECT_EQ(w.burst_idx, 5u);
  EXPECT_EQ(w.producer_idx, 0u);
  EXPECT_EQ(w.row, 0u);
  ASSERT_TRUE(rs::last_row_writer(l, 6, 10, &w));  // slot 1, not rewritten: burst 1, producer 1, row 1
  EXPECT_EQ(w.burst_idx, 1u);
  EXPECT_EQ(w.producer_idx, 1u);
  EXPECT_EQ(w.row, 1u);
  // Rows 30, 31 hold no whole burst: never written, however many bursts ran.
  EXPECT_FALSE(rs::last_row_writer(l, 1000, 30, &w));
  EXPECT_FALSE(rs::last_row_writer(l, 1000, 31, &w));
}

// The property the H200 found missing: over many wraps of the ring, a row slot is only ever rewritten by
// the producer (and row) that wrote it first. Producers are not in phase, so a slot shared by two producers
// would end with whichever store landed last.
TEST(ScatterLayout, ARowSlotIsRewrittenOnlyByTheSameProducerAndRow) {
  for (std::uint32_t k : {1u, 3u, 33u, 66u, 132u}) {
    for (std::uint64_t rows_per_producer : {1ull, 5ull, 64ull}) {
      const std::uint64_t rows = 2 * k * rows_per_producer;
      std::uint32_t bits = 1;
      while ((1ull << bits) < rows) ++bits;
      const rs::BurstLayout l = scattered_layout(k, rows_per_producer, bits, 5);
      SCOPED_TRACE(testing::Message() << "K=" << k << " rows/producer=" << rows_per_producer << " bits=" << bits);
      std::vector<std::int64_t> writer(l.num_rows(), -1);  // producer * rows_per_producer + row
      for (std::uint64_t b = 0; b < 3 * l.scattered_burst_slots() + 1; ++b)
        for (std::uint32_t p = 0; p < k; ++p)
          for (std::uint64_t r = 0; r < rows_per_producer; ++r) {
            const std::uint64_t slot = l.row_offset_bytes(b, p, r) / kRow;
            const auto who = static_cast<std::int64_t>(p * rows_per_producer + r);
            ASSERT_TRUE(writer[slot] == -1 || writer[slot] == who)
                << "slot " << slot << " written by producer-row " << writer[slot] << " and " << who << " (burst " << b << ")";
            writer[slot] = who;
          }
    }
  }
}

}  // namespace
}  // namespace xs
