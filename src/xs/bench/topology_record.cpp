// xstage bench layer: the topology check and record of peer / nccl runs (see topology_record.hpp).
#include "xs/bench/topology_record.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "xs/common/error.hpp"

namespace xs::bench {
namespace {

std::string pair_text(const GpuPair& p) { return "GPU " + std::to_string(p.from) + " -> GPU " + std::to_string(p.to); }

const PeerLink* find_link(const std::vector<PeerLink>& links, const GpuPair& pair) {
  for (const auto& l : links)
    if (l.pair == pair) return &l;
  return nullptr;
}

}  // namespace

std::string link_type(const PeerLink& link) {
  if (!link.can_access) return "none";
  return link.native_atomics ? "nvlink" : "pcie";
}

std::optional<RemoteTarget> remote_target_of(const std::string& text) {
  for (const char* kind : {"peer", "nccl"}) {
    const std::string prefix = std::string(kind) + ":";
    if (text.rfind(prefix, 0) != 0) continue;
    const std::string n = text.substr(prefix.size());
    if (n.empty() || n.size() > 6 || !std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    return RemoteTarget{kind, std::stoi(n)};
  }
  return std::nullopt;
}

std::vector<GpuPair> pairs_for_point(const std::string& target_text, int device, int alltoall_ranks) {
  const auto remote = remote_target_of(target_text);
  if (!remote) return {};
  std::set<std::pair<int, int>> pairs;
  if (remote->device != device) pairs.insert({device, remote->device});
  if (remote->kind == "peer" && alltoall_ranks > 1)
    for (int r = 0; r < alltoall_ranks; ++r)
      if (r != device) pairs.insert({device, r});
  std::vector<GpuPair> out;
  for (const auto& [from, to] : pairs) out.push_back({from, to});
  return out;
}

std::vector<int> gpus_of(const std::vector<GpuPair>& pairs) {
  std::set<int> gpus;
  for (const auto& p : pairs) {
    gpus.insert(p.from);
    gpus.insert(p.to);
  }
  return {gpus.begin(), gpus.end()};
}

void check_peer_access(const std::string& target_text, const std::vector<GpuPair>& needed,
                       const std::vector<PeerLink>& links, int num_gpus) {
  std::string accessible;
  for (const auto& l : links)
    if (l.can_access) accessible += (accessible.empty() ? "" : ", ") + pair_text(l.pair);
  for (const auto& pair : needed) {
    if (pair.from >= num_gpus || pair.to >= num_gpus) continue;  // the runner skips it: "unavailable: ..."
    const PeerLink* l = find_link(links, pair);
    if (l != nullptr && l->can_access) continue;
    throw input_error("--target", target_text + " stores from GPU " + std::to_string(pair.from) + " into GPU " +
                                      std::to_string(pair.to) + ", but " + pair_text(pair) +
                                      " has no peer access here (cudaDeviceCanAccessPeer = 0); pairs with peer "
                                      "access: " + (accessible.empty() ? std::string("none") : accessible) +
                                      ". Use --target host or local, or GPUs that are peers");
  }
}

nlohmann::json topology_record_json(const std::vector<int>& gpus, const std::vector<PeerLink>& links,
                                    const std::vector<CopyReference>& copies, const nlohmann::json& nccl_alltoall) {
  nlohmann::json j = {{"gpus", gpus}, {"link_type_from", kLinkTypeFrom}};
  j["links"] = nlohmann::json::array();
  for (const auto& l : links)
    j["links"].push_back({{"from", l.pair.from}, {"to", l.pair.to}, {"peer_access", l.can_access},
                          {"performance_rank", l.performance_rank}, {"native_atomics", l.native_atomics},
                          {"link_type", link_type(l)}});
  j["copy_engine"] = nlohmann::json::array();
  for (const auto& c : copies) {
    const bool measured = c.status == "ok" && std::isfinite(c.bandwidth_bps) && c.bandwidth_bps > 0;
    j["copy_engine"].push_back({{"from", c.pair.from}, {"to", c.pair.to}, {"method", "cudaMemcpyPeerAsync"},
                                {"bytes", c.bytes},
                                {"bandwidth_bps", measured ? nlohmann::json(c.bandwidth_bps) : nlohmann::json(nullptr)},
                                {"status", c.status}});
  }
  j["nccl_alltoall"] = nccl_alltoall.is_null() ? nlohmann::json{{"status", "not measured"}} : nccl_alltoall;
  return j;
}

void check_target_names(const std::vector<std::string>& targets) {
  for (const auto& t : targets) {
    if (t == "local" || t == "host") continue;
    const bool remote = t.rfind("peer:", 0) == 0 || t.rfind("nccl:", 0) == 0;
    const std::string n = remote ? t.substr(5) : "";
    const bool digits = !n.empty() && n.size() <= 4 && n.find_first_not_of("0123456789") == std::string::npos;
    if (!remote || !digits)
      throw input_error("--target", "'" + t + "' is not a target; accepted: local, host, peer:N, nccl:N "
                                    "(N a GPU index or rank, e.g. host,local or nccl:1)");
  }
}

void check_targets_on_ranks(const std::string& suite, const std::vector<std::string>& targets, int num_ranks) {
  check_target_names(targets);
  if (num_ranks <= 1) return;
  for (const auto& t : targets) {
    if (t.rfind("nccl:", 0) == 0 || (!remote_target_of(t) && t.rfind("peer:", 0) != 0)) continue;
    throw input_error("--target", t + " on " + std::to_string(num_ranks) + " ranks: " + suite +
                                      " would store through peer access, which does not cross processes; on "
                                      "several ranks nccl:N stores into every rank's NCCL window "
                                      "(docs/multi-gpu.md), and local or host run the one-GPU emulation on each "
                                      "rank's GPU; run " + t + " as one process, which emulates the ranks from "
                                      "one sender");
  }
}

}  // namespace xs::bench
