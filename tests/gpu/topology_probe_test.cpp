// xstage GPU tests: the topology queries of peer / nccl runs (backends/gpu/topology_probe.hpp): a rank's device
// description, the pairs queried (a GPU's pair with itself and pairs naming a missing GPU left out), and the
// record of a run on this node, with a copy-engine reference for every pair that has peer access.
#if defined(XS_HAVE_CUDA)
#include <gtest/gtest.h>

#include "xs/backends/cuda/devices.hpp"
#include "xs/backends/nccl/nccl_comm.hpp"
#include "xs/backends/gpu/topology_probe.hpp"

namespace xs::runtime {
namespace {

TEST(TopologyProbe, DescribesTheRankDevice) {
  const nlohmann::json d = describe_rank_device(0);
  EXPECT_EQ(d["device"]["index"], 0);
  EXPECT_EQ(d["uuid"].get<std::string>().rfind("GPU-", 0), 0u) << d.dump();
  EXPECT_GT(d["driver_version"].get<int>(), 0);
  EXPECT_EQ(d["topology"]["num_gpus"].get<int>(), count_devices());
}

TEST(TopologyProbe, QueriesOnlyPairsOfExistingGpus) {
  const int n = count_devices();
  const std::vector<bench::GpuPair> pairs = {{0, 0}, {0, n}, {0, 1}};
  const auto links = query_peer_links(pairs);
  ASSERT_EQ(links.size(), n >= 2 ? 1u : 0u);
  if (n >= 2) {
    EXPECT_EQ(links[0].pair, (bench::GpuPair{0, 1}));
    if (!links[0].can_access) {
      EXPECT_EQ(links[0].performance_rank, -1);
    }
  }
}

TEST(TopologyProbe, RecordOfAPeerRunOnThisNode) {
  const int n = count_devices();
  const std::vector<bench::GpuPair> pairs = {{0, 1}};
  const auto links = query_peer_links(pairs);
  const nlohmann::json j = measure_topology_record({0, 1}, pairs, links);
  ASSERT_EQ(j["copy_engine"].size(), 1u);
  const nlohmann::json& copy = j["copy_engine"][0];
  if (n < 2) {
    EXPECT_EQ(copy["status"], "not measured: a GPU of the pair is not on this node");
    EXPECT_TRUE(copy["bandwidth_bps"].is_null());
    EXPECT_NE(j["nccl_alltoall"]["status"].get<std::string>().find("not"), std::string::npos);
  } else if (links[0].can_access) {
    EXPECT_EQ(copy["status"], "ok") << copy.dump();
    EXPECT_GT(copy["bandwidth_bps"].get<double>(), 0.0);
  }
  std::printf("%s\n", j.dump(1).c_str());
}

TEST(TopologyProbe, OneGpuNcclRunGetsAOneRankAlltoallReference) {
  const nlohmann::json j = measure_topology_record({0}, {}, {});
  EXPECT_TRUE(j["links"].empty());
  EXPECT_TRUE(j["copy_engine"].empty());
  if (!nccl_built()) {
    EXPECT_EQ(j["nccl_alltoall"]["status"], "unavailable: built without NCCL");
    return;
  }
  EXPECT_EQ(j["nccl_alltoall"]["status"], "ok") << j.dump(1);
  EXPECT_EQ(j["nccl_alltoall"]["num_ranks"], 1);
  EXPECT_TRUE(j["nccl_alltoall"]["verified"].get<bool>()) << j.dump(1);
}

}  // namespace
}  // namespace xs::runtime
#endif
