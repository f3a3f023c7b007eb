// xstage kernels layer: where each remote-store burst writes and what it writes. Header-only and
// callable from host and device, so the host verifier checks exactly what the kernel claims to store.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define XS_HD __host__ __device__ __forceinline__
#else
#define XS_HD inline
#endif

namespace xs::kernels::remote_store {

// "lowbias32" integer hash (bijective): pattern seeds and row permutation constants.
XS_HD std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// The seeded row permutation of the scattered mode: a bijection of [0, 2^bits) built from steps that are
// each bijective modulo 2^bits (add a constant, xor-shift right, multiply by an odd constant), so it needs
// no cycle-walking and costs ~12 integer operations per store. The constants come from the seed; the
// shift is half the width, so high bits reach the low ones and back (lowbias32's structure).
struct RowPermutation {
  std::uint32_t mask = 0;
  std::uint32_t shift = 1;
  std::uint32_t add = 0, mul1 = 1, mul2 = 1;
  XS_HD std::uint32_t operator()(std::uint32_t x) const {
    x = (x + add) & mask;
    x ^= x >> shift;
    x = (x * mul1) & mask;
    x ^= x >> shift;
    x = (x * mul2) & mask;
    x ^= x >> shift;
    return x;
  }
};

// The destination ring. Burst b is a global index: it keeps counting across launches of one point.
// Contiguous modes (fresh, same): burst b occupies slot b % num_slots, V = K*B bytes; producer p writes
// [slot*V + p*B, slot*V + (p+1)*B). "fresh": num_slots*V >= 2 x L2, so a burst never rewrites lines still
// resident in L2 (rewrites could be absorbed by L2 and look like drain). "same": num_slots = 1.
// Scattered mode (row_bits > 0): the ring is 2^row_bits rows of kRowBytes, holding S = floor(2^row_bits /
// (V/kRowBytes)) whole bursts (S >= 2: the plan keeps the ring >= 2 V). Producer p's B bytes of burst b are
// rows r = 0 .. B/kRowBytes-1 at logical row (b mod S)*K*(B/kRowBytes) + p*(B/kRowBytes) + r, stored in row
// slot perm(logical). A slot is rewritten only S bursts later and only by the same producer and row, as in
// the contiguous modes: producers drift out of phase under backpressure, and a slot shared by two producers
// would leave its final contents to that race (seen on the H200 when logical rows wrapped mod 2^row_bits).
// Consecutive bursts take consecutive logical rows, so a slot is rewritten only after ~the whole ring
// (>= 2 x L2) was written.
struct BurstLayout {
  std::uint64_t bytes_per_producer = 0;  // B
  std::uint32_t num_producers = 0;       // K
  std::uint32_t num_slots = 1;           // contiguous modes
  std::uint32_t row_bits = 0;            // scattered: log2(ring rows); 0 = contiguous
  std::uint32_t row_seed = 0;            // scattered: permutation seed

  static constexpr std::uint64_t kRowBytes = 256;

  XS_HD bool scattered() const { return row_bits != 0; }
  XS_HD std::uint64_t volume_bytes() const { return bytes_per_producer * num_producers; }  // V = K*B
  XS_HD std::uint64_t num_rows() const { return std::uint64_t{1} << row_bits; }
  XS_HD std::uint64_t ring_bytes() const {
    return scattered() ? num_rows() * kRowBytes : volume_bytes() * num_slots;
  }
  XS_HD std::uint64_t slice_offset_bytes(std::uint64_t burst_idx, std::uint32_t producer_idx) const {
    return (burst_idx % num_slots) * volume_bytes() + producer_idx * bytes_per_producer;
  }
  // Scattered mode.
  XS_HD std::uint64_t rows_per_producer() const { return bytes_per_producer / kRowBytes; }
  XS_HD std::uint64_t rows_per_burst() const { return rows_per_producer() * num_producers; }
  XS_HD std::uint64_t scattered_burst_slots() const { return num_rows() / rows_per_burst(); }  // S
  XS_HD std::uint32_t logical_row(std::uint64_t burst_idx, std::uint32_t producer_idx, std::uint64_t row) const {
    return static_cast<std::uint32_t>((burst_idx % scattered_burst_slots()) * rows_per_burst() +
                                      producer_idx * rows_per_producer() + row);
  }
  XS_HD RowPermutation row_permutation() const {
    RowPermutation perm;
    perm.mask = row_bits >= 32 ? 0xffffffffU : (1U << row_bits) - 1U;
    perm.shift = (row_bits + 1) / 2;
    perm.add = mix32(row_seed ^ 0x5bd1e995U);
    perm.mul1 = mix32(row_seed + 0x9e3779b9U) | 1U;
    perm.mul2 = mix32(row_seed ^ 0x85ebca6bU) | 1U;
    return perm;
  }
  XS_HD std::uint64_t row_offset_bytes(std::uint64_t burst_idx, std::uint32_t producer_idx, std::uint64_t row) const {
    return static_cast<std::uint64_t>(row_permutation()(logical_row(burst_idx, producer_idx, row))) * kRowBytes;
  }
};

// Scattered mode, as the kernel computes it: byte offset in the ring of store element `elem_idx` (W bytes,
// W | kRowBytes) of the producer-burst whose row 0 is logical row `first_row`.
XS_HD std::uint64_t scattered_store_offset(const RowPermutation& perm, std::uint32_t first_row,
                                           std::uint32_t elem_idx, std::uint32_t width_bytes) {
  const std::uint32_t elems_per_row = static_cast<std::uint32_t>(BurstLayout::kRowBytes) / width_bytes;
  const std::uint32_t slot = perm((first_row + elem_idx / elems_per_row) & perm.mask);
  return static_cast<std::uint64_t>(slot) * BurstLayout::kRowBytes + (elem_idx % elems_per_row) * width_bytes;
}

// Scattered mode: the smallest row_bits whose ring holds at least min_ring_bytes (>= 1 row bit).
XS_HD std::uint32_t scattered_row_bits(std::uint64_t min_ring_bytes) {
  std::uint32_t bits = 1;
  while ((std::uint64_t{1} << bits) * BurstLayout::kRowBytes < min_ring_bytes) ++bits;
  return bits;
}

// Scattered mode: who stored logical row `logical` last after bursts [0, num_bursts_written): the last
// burst b < num_bursts_written with b mod S = logical / (V/kRowBytes). False: no one (rows past S whole
// bursts are never used; burst slots no burst reached yet).
struct RowWriter {
  std::uint64_t burst_idx = 0;
  std::uint32_t producer_idx = 0;
  std::uint64_t row = 0;                 // row within the producer's B bytes: words row*64 .. row*64+63
};
XS_HD bool last_row_writer(const BurstLayout& layout, std::uint64_t num_bursts_written, std::uint64_t logical,
                           RowWriter* writer) {
  const std::uint64_t slots = layout.scattered_burst_slots();
  const std::uint64_t slot = logical / layout.rows_per_burst();
  if (slot >= slots || slot >= num_bursts_written) return false;
  const std::uint64_t in_burst = logical % layout.rows_per_burst();
  writer->burst_idx = slot + (num_bursts_written - 1 - slot) / slots * slots;
  writer->producer_idx = static_cast<std::uint32_t>(in_burst / layout.rows_per_producer());
  writer->row = in_burst % layout.rows_per_producer();
  return true;
}

// The stored pattern: word w (4 B) of the slice of (burst, producer) holds seed(burst, producer) ^ w.
// The seed is a hash with bit 31 clear and w < 2^31, so no valid word equals the 0xFFFFFFFF poison.
// One XOR per word keeps pattern generation out of the issue time; a W-byte store holds W/4
// consecutive words, and since the first is W/4-aligned, word k of it is (seed ^ w0) ^ k.
XS_HD std::uint32_t pattern_seed(std::uint64_t burst_idx, std::uint32_t producer_idx) {
  return mix32(static_cast<std::uint32_t>(burst_idx) ^ mix32(producer_idx + 0x9e3779b9U)) & 0x7fffffffU;
}
inline constexpr std::uint32_t kPoisonWord = 0xffffffffU;  // memset(0xFF)

// Device status word (mapped host memory, readable after a trap). Non-zero: which spin-wait timed out.
enum class BurstStatus : std::uint32_t {
  kOk = 0,
  kStartBarrierTimeout = 1,  // flag: start_time_ns, the %globaltimer start barrier
};
XS_HD const char* burst_status_flag(std::uint32_t status) {
  switch (static_cast<BurstStatus>(status)) {
    case BurstStatus::kOk: return "none";
    case BurstStatus::kStartBarrierTimeout: return "start_time_ns (the %globaltimer start barrier)";
  }
  return "unknown status code";
}

}  // namespace xs::kernels::remote_store
