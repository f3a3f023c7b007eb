// xstage bench layer: the topology check before a run with a peer or nccl target (issue 14): which ordered GPU
// pairs the points store across, whether each pair has peer access, its link type, the refusal when a needed
// pair has none, and the record kept in the result's meta. Plain C++: backends/gpu/topology_probe.hpp fills PeerLink
// from CUDA; every decision here is reachable from CPU tests.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace xs::bench {

// An ordered pair: `from` issues the stores, `to` owns the memory they land in.
struct GpuPair {
  int from = 0, to = 0;
  bool operator==(const GpuPair&) const = default;
};

// One pair as the CUDA runtime reports it (backends/gpu/topology_probe.cpp).
struct PeerLink {
  GpuPair pair;
  bool can_access = false;      // cudaDeviceCanAccessPeer(from -> to)
  int performance_rank = -1;    // cudaDevP2PAttrPerformanceRank: lower is a better link; -1 without access
  bool native_atomics = false;  // cudaDevP2PAttrNativeAtomicSupported
};

// "none" without peer access; "nvlink" when the pair also has native peer atomics, which CUDA offers over
// NVLink but not over PCIe; "pcie" otherwise. Inferred from CUDA attributes (no NVML in xstage), so the record
// says so (kLinkTypeFrom) and keeps the raw attributes and the measured copy-engine bandwidth beside it.
std::string link_type(const PeerLink& link);
inline constexpr const char* kLinkTypeFrom =
    "cudaDevP2PAttrNativeAtomicSupported: native peer atomics exist over NVLink, not over PCIe (inferred)";

// "peer" or "nccl" and N of a peer:N / nccl:N target text; nullopt for local, host and anything else (the
// runtime's parse_target refuses malformed text later, with its own message).
struct RemoteTarget {
  std::string kind;  // "peer" | "nccl"
  int device = -1;   // N
};
std::optional<RemoteTarget> remote_target_of(const std::string& target_text);

// The pairs one point stores across, from GPU `device`:
//   peer:N / nccl:N   device -> N (nothing for nccl:<device>, a one-rank communicator);
//   plus, when alltoall_ranks > 1 and the target is peer:N (fa_a2a's one-process All-to-All,
//   attention/run/fa_destinations.hpp): device -> r for every rank GPU r in 0..alltoall_ranks-1 other than device.
// local, host: none. Sorted, without duplicates.
std::vector<GpuPair> pairs_for_point(const std::string& target_text, int device, int alltoall_ranks);

// The GPUs of `pairs` (both ends), sorted, without duplicates.
std::vector<int> gpus_of(const std::vector<GpuPair>& pairs);

// Throws input_error("--target", ...) naming the first needed pair that exists on this node (both GPUs below
// num_gpus) but has no peer access, with the pairs that do. A pair naming a GPU this node lacks is no refusal:
// its point is recorded as skipped ("unavailable: ...") by the runner, as on a one-GPU machine.
void check_peer_access(const std::string& target_text, const std::vector<GpuPair>& needed,
                       const std::vector<PeerLink>& links, int num_gpus);

// A copy-engine reference (cudaMemcpyPeerAsync) of one pair, or why it was not measured.
struct CopyReference {
  GpuPair pair;
  double bandwidth_bps = 0;  // bytes / s; 0 when not measured
  double bytes = 0;
  std::string status = "ok";  // "ok" or the reason
};

// meta.topology: {gpus, links: [{from, to, peer_access, performance_rank, native_atomics, link_type}],
// link_type_from, copy_engine: [{from, to, bytes, bandwidth_bps | null, status}], nccl_alltoall: the given
// record (runtime::to_json(NcclAlltoallReference)) or {status: reason}}.
nlohmann::json topology_record_json(const std::vector<int>& gpus, const std::vector<PeerLink>& links,
                                    const std::vector<CopyReference>& copies, const nlohmann::json& nccl_alltoall);

// Several ranks: stores into other ranks' buffers go through nccl:N (every rank's NCCL window,
// backends/nccl/rank_windows.hpp); peer:N (and a malformed peer/remote target) is refused, since peer access does not
// cross processes. Throws input_error("--target", ...) for such a target when num_ranks > 1; one rank: nothing.
// Each target's form (local, host, peer:N, nccl:N), before any GPU is looked at: input_error on --target (exit 2).
void check_target_names(const std::vector<std::string>& targets);
// check_target_names, then: peer:N is refused on several ranks (peer access does not cross processes).
void check_targets_on_ranks(const std::string& suite, const std::vector<std::string>& targets, int num_ranks);

}  // namespace xs::bench
