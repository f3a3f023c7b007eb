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

// The destination ring. Burst b (a global index: it keeps counting across launches of one point)
// occupies slot b % num_slots, V = K*B bytes; producer p writes [slot*V + p*B, slot*V + (p+1)*B).
// "fresh" address mode: num_slots*V >= 2 x L2, so a burst never rewrites lines still resident in L2
// (rewrites could be absorbed by L2 and look like drain). "same" mode: num_slots = 1.
struct BurstLayout {
  std::uint64_t bytes_per_producer = 0;  // B
  std::uint32_t num_producers = 0;       // K
  std::uint32_t num_slots = 1;

  XS_HD std::uint64_t volume_bytes() const { return bytes_per_producer * num_producers; }  // V = K*B
  XS_HD std::uint64_t ring_bytes() const { return volume_bytes() * num_slots; }
  XS_HD std::uint64_t slice_offset_bytes(std::uint64_t burst_idx, std::uint32_t producer_idx) const {
    return (burst_idx % num_slots) * volume_bytes() + producer_idx * bytes_per_producer;
  }
};

// The stored pattern: word w (4 B) of the slice of (burst, producer) holds seed(burst, producer) ^ w.
// The seed is a hash with bit 31 clear and w < 2^31, so no valid word equals the 0xFFFFFFFF poison.
// One XOR per word keeps pattern generation out of the issue time; a W-byte store holds W/4
// consecutive words, and since the first is W/4-aligned, word k of it is (seed ^ w0) ^ k.
XS_HD std::uint32_t mix32(std::uint32_t x) {  // "lowbias32" integer hash (bijective)
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
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
