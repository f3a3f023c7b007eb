// Tests for the topology check of peer / nccl runs (bench/topology_record.hpp): which pairs a point stores
// across, the link type, the refusal of a needed pair without peer access, the meta record, and the refusal of
// peer/nccl targets on several ranks.
#include <gtest/gtest.h>

#include <functional>

#include "xs/bench/topology_record.hpp"
#include "xs/common/error.hpp"

namespace xs::bench {
namespace {
using nlohmann::json;

std::string refusal(const std::function<void()>& f, std::string* field = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    if (field) *field = e.field();
    return e.what();
  }
  return "";
}

PeerLink link(int from, int to, bool access, bool atomics = false, int rank = 0) {
  return PeerLink{{from, to}, access, access ? rank : -1, atomics};
}

TEST(TopologyRecord, RemoteTargetParsesPeerAndNcclOnly) {
  EXPECT_FALSE(remote_target_of("local"));
  EXPECT_FALSE(remote_target_of("host"));
  EXPECT_FALSE(remote_target_of("peer:"));
  EXPECT_FALSE(remote_target_of("peer:x1"));
  EXPECT_FALSE(remote_target_of("peer:-1"));
  ASSERT_TRUE(remote_target_of("peer:3"));
  EXPECT_EQ(remote_target_of("peer:3")->kind, "peer");
  EXPECT_EQ(remote_target_of("peer:3")->device, 3);
  EXPECT_EQ(remote_target_of("nccl:12")->kind, "nccl");
  EXPECT_EQ(remote_target_of("nccl:12")->device, 12);
}

TEST(TopologyRecord, PairsOfAPoint) {
  EXPECT_TRUE(pairs_for_point("local", 0, 8).empty());
  EXPECT_TRUE(pairs_for_point("host", 0, 8).empty());
  // megamoe peer:N: every other rank's Combine rows on GPU N.
  EXPECT_EQ(pairs_for_point("peer:1", 0, 0), (std::vector<GpuPair>{{0, 1}}));
  // nccl:<device> is a one-rank communicator: no pair.
  EXPECT_TRUE(pairs_for_point("nccl:2", 2, 0).empty());
  EXPECT_EQ(pairs_for_point("nccl:1", 0, 4), (std::vector<GpuPair>{{0, 1}}));  // no All-to-All for nccl here
  // fa_a2a peer:N over P = 4 from GPU 1: every other rank GPU, and N (here outside the ranks).
  EXPECT_EQ(pairs_for_point("peer:5", 1, 4), (std::vector<GpuPair>{{1, 0}, {1, 2}, {1, 3}, {1, 5}}));
  EXPECT_EQ(pairs_for_point("peer:2", 0, 3), (std::vector<GpuPair>{{0, 1}, {0, 2}}));  // N among them: once
  EXPECT_EQ(gpus_of(pairs_for_point("peer:5", 1, 4)), (std::vector<int>{0, 1, 2, 3, 5}));
}

TEST(TopologyRecord, LinkTypeFromAccessAndNativeAtomics) {
  EXPECT_EQ(link_type(link(0, 1, false)), "none");
  EXPECT_EQ(link_type(link(0, 1, true, true)), "nvlink");
  EXPECT_EQ(link_type(link(0, 1, true, false)), "pcie");
}

TEST(TopologyRecord, RefusesANeededPairWithoutPeerAccess) {
  const std::vector<GpuPair> needed = pairs_for_point("peer:1", 0, 4);  // 0->1, 0->2, 0->3
  const std::vector<PeerLink> links = {link(0, 1, true, true), link(0, 2, false), link(0, 3, true, true)};
  std::string field;
  const std::string why = refusal([&] { check_peer_access("peer:1", needed, links, 4); }, &field);
  EXPECT_EQ(field, "--target");
  EXPECT_NE(why.find("peer:1 stores from GPU 0 into GPU 2"), std::string::npos) << why;
  EXPECT_NE(why.find("cudaDeviceCanAccessPeer = 0"), std::string::npos) << why;
  EXPECT_NE(why.find("GPU 0 -> GPU 1, GPU 0 -> GPU 3"), std::string::npos) << why;  // the pairs that work
  EXPECT_NE(why.find("--target host or local"), std::string::npos) << why;
  // A pair the query left out (not queried) is refused too.
  EXPECT_NE(refusal([&] { check_peer_access("peer:1", needed, {link(0, 1, true)}, 4); }).find("into GPU 2"),
            std::string::npos);
}

TEST(TopologyRecord, EveryPairWithAccessOrAMissingGpuIsNoRefusal) {
  const std::vector<GpuPair> needed = pairs_for_point("peer:1", 0, 4);
  EXPECT_NO_THROW(check_peer_access("peer:1", needed, {link(0, 1, true), link(0, 2, true), link(0, 3, true)}, 4));
  // One GPU: GPU 1..3 are not here; the runner records the points as skipped ("unavailable: one GPU").
  EXPECT_NO_THROW(check_peer_access("peer:1", needed, {}, 1));
  // Two GPUs: 0->1 exists and must have access; 0->2, 0->3 are left to the runner.
  EXPECT_NO_THROW(check_peer_access("peer:1", needed, {link(0, 1, true)}, 2));
  EXPECT_NE(refusal([&] { check_peer_access("peer:1", needed, {link(0, 1, false)}, 2); }), "");
}

TEST(TopologyRecord, RecordKeepsLinksCopiesAndTheNcclReference) {
  const std::vector<PeerLink> links = {link(0, 1, true, true, 0), link(0, 2, false)};
  CopyReference ok{{0, 1}, 1.5e11, 268435456.0, "ok"};
  CopyReference no{{0, 2}, 0, 268435456.0, "not measured: no peer access"};
  const json nccl = {{"status", "ok"}, {"algbw_bps", 2e11}};
  const json j = topology_record_json({0, 1, 2}, links, {ok, no}, nccl);
  EXPECT_EQ(j["gpus"], json({0, 1, 2}));
  ASSERT_EQ(j["links"].size(), 2u);
  EXPECT_EQ(j["links"][0]["link_type"], "nvlink");
  EXPECT_EQ(j["links"][0]["performance_rank"], 0);
  EXPECT_EQ(j["links"][1]["link_type"], "none");
  EXPECT_EQ(j["links"][1]["performance_rank"], -1);
  EXPECT_EQ(j["link_type_from"], kLinkTypeFrom);
  EXPECT_DOUBLE_EQ(j["copy_engine"][0]["bandwidth_bps"].get<double>(), 1.5e11);
  EXPECT_TRUE(j["copy_engine"][1]["bandwidth_bps"].is_null());  // never a 0 that reads as a measurement
  EXPECT_EQ(j["copy_engine"][1]["status"], "not measured: no peer access");
  EXPECT_EQ(j["nccl_alltoall"], nccl);
  EXPECT_EQ(topology_record_json({}, {}, {}, nullptr)["nccl_alltoall"]["status"], "not measured");
}

TEST(TopologyRecord, PeerTargetsAreRefusedOnSeveralRanksNcclIsNot) {
  EXPECT_NO_THROW(check_targets_on_ranks("fa_a2a", {"local", "host", "peer:1", "nccl:0"}, 1));
  EXPECT_NO_THROW(check_targets_on_ranks("fa_a2a", {"local", "host", "nccl:1"}, 8));  // the windows' exchange
  std::string field;
  const std::string why = refusal([&] { check_targets_on_ranks("megamoe", {"host", "peer:1"}, 2); }, &field);
  EXPECT_EQ(field, "--target");
  EXPECT_NE(why.find("peer:1 on 2 ranks: megamoe would store through peer access"), std::string::npos) << why;
  EXPECT_NE(why.find("docs/multi-gpu.md"), std::string::npos) << why;
  EXPECT_NE(refusal([] { check_targets_on_ranks("fa_a2a", {"peer:x"}, 2); }), "");  // malformed: refused too
}

}  // namespace
}  // namespace xs::bench
