// xstage backends/gpu layer: data verification (see verification.hpp).
#include "xs/backends/gpu/verification.hpp"

#include <cstdio>

#include "xs/common/program_name.hpp"
#include "xs/kernels/remote_store/loaded_layout.cuh"

namespace xs::runtime {
namespace {

constexpr int kMaxReported = 8;

struct Counter {
  std::uint64_t wrong = 0;
  void mismatch(std::uint64_t byte_offset, const char* region, std::uint32_t expected, std::uint32_t got) {
    if (wrong < kMaxReported)
      std::fprintf(stderr, "%s: verification: %s word at buffer offset %llu: expected 0x%08x, found 0x%08x\n",
                   xs::program_name(), region, static_cast<unsigned long long>(byte_offset), expected, got);
    ++wrong;
  }
};

}  // namespace

Verification verify_ring(const std::uint32_t* words, const RingClaim& claim) {
  using kernels::remote_store::kPoisonWord;
  using kernels::remote_store::BurstLayout;
  using kernels::remote_store::pattern_seed;
  const auto& layout = claim.layout;
  Counter counter;
  auto check_poison = [&](std::uint64_t first_byte, std::uint64_t num_bytes, const char* region) {
    for (std::uint64_t i = first_byte / 4; i < (first_byte + num_bytes) / 4; ++i)
      if (words[i] != kPoisonWord) counter.mismatch(4 * i, region, kPoisonWord, words[i]);
  };

  check_poison(0, claim.guard_bytes, "guard (before ring)");
  const std::uint64_t words_per_slice = layout.bytes_per_producer / 4;
  // Bursts producer p wrote: [0, n(p)).
  const auto n_of = [&](std::uint64_t producer_idx) {
    return claim.bursts_per_producer.empty() ? claim.num_bursts_written : claim.bursts_per_producer[producer_idx];
  };
  if (layout.scattered()) {
    // Every logical row once (the permutation is a bijection, so every row slot once): its last writer's
    // words, or poison where no burst reached it.
    constexpr std::uint64_t kWordsPerRow = BurstLayout::kRowBytes / 4;
    const auto perm = layout.row_permutation();
    for (std::uint64_t logical = 0; logical < layout.num_rows(); ++logical) {
      const std::uint64_t row_byte =
          claim.guard_bytes + static_cast<std::uint64_t>(perm(static_cast<std::uint32_t>(logical))) * BurstLayout::kRowBytes;
      kernels::remote_store::RowWriter writer;
      // The producer whose rows these are (whoever wrote them, if anyone): position within a burst slot.
      const std::uint64_t owner = (logical % layout.rows_per_burst()) / layout.rows_per_producer();
      if (!kernels::remote_store::last_row_writer(layout, n_of(owner), logical, &writer)) {
        check_poison(row_byte, BurstLayout::kRowBytes, "unwritten row");
        continue;
      }
      const std::uint32_t seed = pattern_seed(writer.burst_idx, writer.producer_idx);
      for (std::uint64_t w = 0; w < kWordsPerRow; ++w) {
        const auto expected = seed ^ static_cast<std::uint32_t>(writer.row * kWordsPerRow + w);
        const std::uint32_t found = words[row_byte / 4 + w];
        if (found != expected) counter.mismatch(row_byte + 4 * w, "row", expected, found);
      }
    }
  }
  for (std::uint32_t slot = 0; slot < layout.num_slots && !layout.scattered(); ++slot) {
    for (std::uint32_t p = 0; p < layout.num_producers; ++p) {
      std::uint64_t burst_idx = 0;  // the slice's last user
      if (!kernels::remote_store::last_slice_writer(layout, n_of(p), slot, &burst_idx)) {
        check_poison(claim.guard_bytes + static_cast<std::uint64_t>(slot) * layout.volume_bytes() +
                         static_cast<std::uint64_t>(p) * layout.bytes_per_producer,
                     layout.bytes_per_producer, "unwritten slice");
        continue;
      }
      const std::uint64_t first_word = (claim.guard_bytes + layout.slice_offset_bytes(burst_idx, p)) / 4;
      const std::uint32_t seed = pattern_seed(burst_idx, p);
      for (std::uint64_t w = 0; w < words_per_slice; ++w) {
        const std::uint32_t expected = seed ^ static_cast<std::uint32_t>(w);
        const std::uint32_t found = words[first_word + w];
        if (found != expected) counter.mismatch(4 * (first_word + w), "slice", expected, found);
      }
    }
  }
  check_poison(claim.guard_bytes + layout.ring_bytes(), claim.guard_bytes, "guard (after ring)");

  if (counter.wrong > 0)
    std::fprintf(stderr, "%s: verification: %llu wrong words of %llu bytes checked (K=%u B=%llu slots=%u "
                 "row_bits=%u)\n", xs::program_name(), static_cast<unsigned long long>(counter.wrong),
                 static_cast<unsigned long long>(claim.buffer_bytes()), layout.num_producers,
                 static_cast<unsigned long long>(layout.bytes_per_producer), layout.num_slots, layout.row_bits);
  Verification v;
  v.checked = true;
  v.bytes_checked = claim.buffer_bytes();
  v.wrong = counter.wrong;
  return v;
}

}  // namespace xs::runtime
