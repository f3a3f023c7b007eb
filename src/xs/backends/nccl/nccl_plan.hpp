// xstage backends/nccl layer, plain C++ (no CUDA or NCCL header): the decisions around the nccl:N target that CPU
// tests reach: NCCL version codes, when the device API can be used, argument checks, the LSA-to-world pointer
// table, the all-to-all bandwidth arithmetic and its verification pattern. Header-only (no host-only library).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "xs/common/error.hpp"

namespace xs::runtime {

struct NcclVersion {
  int major = 0, minor = 0, patch = 0;
};

// NCCL_VERSION(X,Y,Z) in nccl.h: X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z from 2.9 on.
inline NcclVersion decode_nccl_version(int code) {
  if (code < 10000) return {code / 1000, (code % 1000) / 100, code % 100};
  return {code / 10000, (code % 10000) / 100, code % 100};
}

inline std::string nccl_version_text(int code) {
  const NcclVersion v = decode_nccl_version(code);
  return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

inline int nccl_version_code(int major, int minor, int patch) {
  return (major <= 2 && minor <= 8) ? major * 1000 + minor * 100 + patch : major * 10000 + minor * 100 + patch;
}

inline std::string nccl_built_without_reason() {
  return "unavailable: built without NCCL (nccl.h or libnccl was not found at configure time)";
}

// Why the device API (ncclDevCommCreate, ncclGetLsaPointer) cannot be used when built against `header_code`
// and running `runtime_code`, or nullopt. It appeared in 2.28; its structs (ncclDevComm, ncclWindow_vidmem,
// ncclDevCommRequirements) are compiled into the caller and grew between 2.28 patch releases, so a different
// major.minor at run time is refused rather than guessed at (patch differences are padded for, see nccl_window).
inline std::optional<std::string> nccl_device_api_refusal(int header_code, int runtime_code) {
  const int first = nccl_version_code(2, 28, 0);
  if (header_code < first)
    return "unavailable: built against NCCL " + nccl_version_text(header_code) +
           ", which has no device API (ncclDevCommCreate / ncclGetLsaPointer need NCCL 2.28 or later)";
  if (runtime_code < first)
    return "unavailable: running NCCL " + nccl_version_text(runtime_code) +
           ", which has no device API (ncclDevCommCreate / ncclGetLsaPointer need NCCL 2.28 or later)";
  const NcclVersion h = decode_nccl_version(header_code), r = decode_nccl_version(runtime_code);
  if (h.major != r.major || h.minor != r.minor)
    return "unavailable: built against NCCL " + nccl_version_text(header_code) + " but running " +
           nccl_version_text(runtime_code) + "; the device-API structs differ between releases: rebuild against the "
           "running NCCL";
  return std::nullopt;
}

// NCCL 2.28.0-2.28.6 gave a communicator whose node holds one rank no symmetric-memory support
// (ncclTransportCheckP2pType set isAllDirectP2p = 0 when localRanks == 1), so ncclDevCommCreate fails with
// "Communicator does not support symmetric memory!" and the window handle is a plain local registration
// (host memory). 2.28.7 dropped that case. Returns the explanation to append to NCCL's own reason, or "".
inline std::string nccl_one_local_rank_note(int runtime_code, int num_local_ranks) {
  if (num_local_ranks != 1) return "";
  if (runtime_code < nccl_version_code(2, 28, 0) || runtime_code >= nccl_version_code(2, 28, 7)) return "";
  return "; NCCL " + nccl_version_text(runtime_code) +
         " gives a communicator with one rank on its node no symmetric memory (changed in 2.28.7): use two or more "
         "GPUs or NCCL >= 2.28.7";
}

// The single-process communicator behind nccl:N measured from GPU `device`: rank 0 drives `device`, rank 1
// owns the window written to. nccl:<device> is a one-rank communicator storing through its own window.
inline std::vector<int> nccl_target_devices(int device, int peer) {
  if (peer == device) return {device};
  return {device, peer};
}

// ncclCommInitAll devices: at least one, distinct, each an existing GPU. Throws input_error "devices".
inline void validate_nccl_devices(const std::vector<int>& devices, int num_gpus) {
  if (devices.empty()) throw input_error("devices", "no GPU given; give one or more distinct GPU indices");
  std::set<int> seen;
  for (int d : devices) {
    if (d < 0 || d >= num_gpus)
      throw input_error("devices", "GPU " + std::to_string(d) + " does not exist here (" + std::to_string(num_gpus) +
                                       " GPUs: 0.." + std::to_string(num_gpus - 1) + ")");
    if (!seen.insert(d).second)
      throw input_error("devices", "GPU " + std::to_string(d) + " is given twice; one rank per GPU");
  }
}

// One rank of a multi-process communicator: world_size >= 1 and 0 <= rank < world_size. Throws input_error "rank".
inline void validate_nccl_rank(int world_size, int rank) {
  if (world_size < 1) throw input_error("rank", "world size " + std::to_string(world_size) + "; give 1 or more ranks");
  if (rank < 0 || rank >= world_size)
    throw input_error("rank", "rank " + std::to_string(rank) + " outside 0.." + std::to_string(world_size - 1));
}

// A symmetric window covers whole 4 KiB pages (NCCL_WIN_REQUIRED_ALIGNMENT): every rank registers the same,
// rounded-up size. Throws input_error "bytes" for 0.
inline std::size_t nccl_window_bytes(std::size_t bytes_per_rank) {
  constexpr std::size_t kAlign = 4096;
  if (bytes_per_rank == 0) throw input_error("bytes", "a window of 0 bytes; give a positive size");
  return (bytes_per_rank + kAlign - 1) / kAlign * kAlign;
}

// An LSA team as ncclTeamLsa reports it (mirrors ncclTeam_t without including nccl_device.h).
struct NcclTeamView {
  int num_ranks = 0;  // nRanks
  int rank = 0;       // this rank's index in the team
  int stride = 1;     // world-rank distance between consecutive team members
};

// dst[world rank] from the pointers of LSA-team members (lsa_ptrs[i] for team index i); nullptr for world
// ranks outside the team (not load/store reachable). World rank of team index i = world_rank + (i - rank)*stride
// (ncclTeamRankToWorld). Throws input_error "lsa" for a team inconsistent with the world.
inline std::vector<void*> world_pointer_table(int world_size, int world_rank, const NcclTeamView& lsa,
                                              const std::vector<void*>& lsa_ptrs) {
  if (lsa.num_ranks < 1 || lsa.rank < 0 || lsa.rank >= lsa.num_ranks || lsa.stride < 1 ||
      static_cast<int>(lsa_ptrs.size()) != lsa.num_ranks)
    throw input_error("lsa", "team of " + std::to_string(lsa.num_ranks) + " ranks, rank " + std::to_string(lsa.rank) +
                                 ", stride " + std::to_string(lsa.stride) + ", " + std::to_string(lsa_ptrs.size()) +
                                 " pointers: not a team");
  std::vector<void*> dst(static_cast<std::size_t>(world_size), nullptr);
  for (int i = 0; i < lsa.num_ranks; ++i) {
    const int w = world_rank + (i - lsa.rank) * lsa.stride;
    if (w < 0 || w >= world_size)
      throw input_error("lsa", "team index " + std::to_string(i) + " maps to world rank " + std::to_string(w) +
                                   " outside 0.." + std::to_string(world_size - 1));
    dst[static_cast<std::size_t>(w)] = lsa_ptrs[static_cast<std::size_t>(i)];
  }
  return dst;
}

// All-to-all bandwidth as nccl-tests reports it: every rank sends bytes_per_peer to each of the P ranks
// (itself included), algbw = P * bytes_per_peer / time, busbw = algbw * (P - 1) / P (the share that crosses
// links; 0 for one rank, whose "all-to-all" is a local copy).
struct AlltoallBandwidth {
  double algbw_bps = 0;
  double busbw_bps = 0;
};

inline AlltoallBandwidth alltoall_bandwidth(std::size_t bytes_per_peer, int num_ranks, double time_s) {
  if (num_ranks < 1) throw input_error("ranks", "an all-to-all needs at least one rank");
  if (!(time_s > 0)) throw input_error("time", "an all-to-all time must be positive");
  AlltoallBandwidth bw;
  bw.algbw_bps = static_cast<double>(bytes_per_peer) * num_ranks / time_s;
  bw.busbw_bps = bw.algbw_bps * (num_ranks - 1) / num_ranks;
  return bw;
}

// The byte sender `src_rank` places at offset `byte_idx` of its block for `dst_rank`: a SplitMix64 hash, so
// every rank (also in another process) knows what it must receive without exchanging data, and blocks differ
// per (src, dst) so a misrouted block is caught.
inline std::uint8_t alltoall_pattern_byte(std::uint64_t seed, int src_rank, int dst_rank, std::size_t byte_idx) {
  std::uint64_t z = seed ^ (static_cast<std::uint64_t>(src_rank) << 48) ^ (static_cast<std::uint64_t>(dst_rank) << 32) ^
                    (static_cast<std::uint64_t>(byte_idx) >> 3) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<std::uint8_t>(z >> (8 * (byte_idx & 7)));
}

// The all-to-all reference's inputs: bytes_per_peer > 0, timed_iterations >= 1, warmup_iterations >= 0.
inline void validate_alltoall_args(std::size_t bytes_per_peer, int warmup_iterations, int timed_iterations) {
  if (bytes_per_peer == 0) throw input_error("bytes_per_peer", "0 bytes; give a positive byte count per peer");
  if (timed_iterations < 1)
    throw input_error("iterations", std::to_string(timed_iterations) + " timed iterations; give 1 or more");
  if (warmup_iterations < 0)
    throw input_error("warmup", std::to_string(warmup_iterations) + " warm-up iterations; give 0 or more");
}

}  // namespace xs::runtime
