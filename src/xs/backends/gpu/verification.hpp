// xstage backends/gpu layer: data verification of one point. The buffer is [guard | ring | guard]; before
// the point every byte is poisoned (0xFF), after it every 4-byte word is compared with what the kernel
// claims: each ring slot (scattered mode: each row slot) holds the pattern of the last burst that used it
// (layout.cuh), slots no burst reached and both guards stay poisoned (an out-of-bounds store shows up there).
#pragma once
#include <cstdint>
#include <vector>

#include "xs/kernels/remote_store/layout.cuh"
#include "xs/report/records.hpp"

namespace xs::runtime {

struct RingClaim {
  kernels::remote_store::BurstLayout layout;
  std::uint64_t guard_bytes = 0;     // before and after the ring, multiple of 4
  std::uint64_t num_bursts_written = 0;  // global bursts [0, n) were stored, in order
  // When not empty: producer p stored its bursts [0, bursts_per_producer[p]) instead (the loaded suite, whose
  // CTAs each store until their own mainloop ends); one entry per producer.
  std::vector<std::uint64_t> bursts_per_producer;
  std::uint64_t buffer_bytes() const { return 2 * guard_bytes + layout.ring_bytes(); }
};

// Counts mismatching words over the whole buffer; prints the first few (and a total) on stderr.
Verification verify_ring(const std::uint32_t* words, const RingClaim& claim);

}  // namespace xs::runtime
