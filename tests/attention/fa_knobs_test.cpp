// Tests for the FlashAttention kernel's knobs (attention/point/fa_knobs.hpp): the defaults are the kernel's own, the
// axes written and read back are the same knobs, a key absent from a file means what every earlier point ran, and
// the kernel config and the dry run's words follow the knobs.
#include <gtest/gtest.h>

#include "xs/attention/point/fa_app_point.hpp"
#include "xs/attention/point/fa_knobs.hpp"
#include "xs/common/error.hpp"

namespace xs::attention {
namespace {

namespace ka = xs::kernels::attention;
using nlohmann::json;

TEST(FaKnobs, DefaultsAreTheKernelsAndOnlyTheDynamicTilesDifferFromEarlierPoints) {
  const FaKnobs k;
  EXPECT_EQ(k.schedule, "baseline");
  EXPECT_EQ(k.tile_scheduler, "dynamic");
  EXPECT_EQ(k.store_cache, "default");
  EXPECT_EQ(k.kv_cluster, 1);
  EXPECT_EQ(k.heads_per_band, 1);
  EXPECT_EQ(k.tail_splits, ka::kDefaultTailKvSplits);
  EXPECT_EQ(json(k), (json{{"fa_tile_scheduler", "dynamic"}}));
  EXPECT_EQ(json(fa_knobs_of_earlier_points()), json::object()) << "earlier points keep their keys";
}

TEST(FaKnobs, WrittenAxesReadBackAsTheSameKnobs) {
  FaKnobs k;
  k.store_cache = "streaming";
  k.kv_cluster = 2;
  k.heads_per_band = 0;
  k.tail_splits = 2;
  EXPECT_EQ(json(k).get<FaKnobs>(), k);
  FaA2aPointSpec s;
  s.knobs = k;
  EXPECT_EQ(fa_canonical_spec(s).get<FaKnobs>(), k) << "the point's axes carry the knobs among its other keys";
  EXPECT_EQ(json::object().get<FaKnobs>(), fa_knobs_of_earlier_points()) << "an absent key: the earlier value";
  try {
    (void)json{{"fa_kv_cluster", "two"}}.get<FaKnobs>();
    FAIL() << "a string kv cluster was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "axes.fa_kv_cluster");
  }
}

TEST(FaKnobs, KernelConfigAndDryRunWordsFollowTheKnobs) {
  FaKnobs k;
  k.tile_scheduler = "static";
  k.store_cache = "streaming";
  k.kv_cluster = 2;
  k.heads_per_band = 4;
  k.tail_splits = 2;
  const ka::FlashAttentionConfig c = fa_kernel_config(k);
  EXPECT_EQ(c.schedule, ka::MainloopSchedule::kBaseline);
  EXPECT_EQ(c.tile_scheduler, ka::TileSchedulerKind::kStatic);
  EXPECT_EQ(c.store_cache, ka::StoreCachePolicy::kStreaming);
  EXPECT_EQ(c.kv_cluster_size, 2);
  EXPECT_EQ(c.heads_per_band, 4);
  EXPECT_EQ(c.tail_kv_splits, 2);
  EXPECT_EQ(describe_fa_knobs(k), " tiles=static store_cache=streaming kv_cluster=2 heads_per_band=4 tail_splits=2");
  EXPECT_EQ(describe_fa_knobs(FaKnobs{}), " tiles=dynamic");
  k.heads_per_band = 0;
  k.schedule = "pingpong";
  EXPECT_EQ(describe_fa_knobs(k),
            " schedule=pingpong tiles=static store_cache=streaming kv_cluster=2 heads_per_band=auto tail_splits=2");
}

TEST(FaKnobs, TheSweepExpandsTargetsHeadsAndMInThatOrderAndChecksEveryPoint) {
  FaA2aPointSpec prototype;
  prototype.num_ranks = 2;
  prototype.knobs.tail_splits = 2;
  const auto points = fa_sweep_points(prototype, {"local", "host"}, {4, 8}, {8192, 16384});
  ASSERT_EQ(points.size(), 8u);
  EXPECT_EQ(points[0].target, "local");
  EXPECT_EQ(points[1].seq_len, 16384);
  EXPECT_EQ(points[2].num_heads, 8);
  EXPECT_EQ(points[4].target, "host");
  for (const auto& p : points) EXPECT_EQ(p.knobs, prototype.knobs);
  try {
    (void)fa_sweep_points(prototype, {"local"}, {4}, {8192, 1000});
    FAIL() << "M = 1000 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "--M");
  }
  prototype.knobs.heads_per_band = 3;
  try {
    (void)fa_sweep_points(prototype, {"local"}, {4}, {8192});
    FAIL() << "3 heads per band of 4 heads was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "--fa-heads-per-band");
  }
}

}  // namespace
}  // namespace xs::attention
