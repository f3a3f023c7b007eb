// Tests for the FlashAttention MainloopSchedule switch on the host side (src/xs/kernels/attention/config.hpp,
// attention/fa_app_point): names round-trip, unknown names are refused naming --fa-schedule, and a
// non-baseline schedule is part of an fa_a2a point's key while a baseline point keeps its earlier key.
#include <gtest/gtest.h>

#include "xs/kernels/attention/config.hpp"
#include "xs/attention/point/fa_app_point.hpp"
#include "xs/common/error.hpp"

namespace xs::attention {
namespace {

namespace ka = xs::kernels::attention;

TEST(MainloopSchedule, NamesRoundTripAndUnknownNamesAreRefused) {
  for (int i = 0; i < ka::kNumMainloopSchedules; ++i) {
    const auto schedule = static_cast<ka::MainloopSchedule>(i);
    ka::MainloopSchedule parsed = ka::MainloopSchedule::kBaseline;
    ASSERT_TRUE(ka::parse_mainloop_schedule(ka::mainloop_schedule_name(schedule), &parsed)) << i;
    EXPECT_EQ(parsed, schedule);
  }
  EXPECT_STREQ(ka::mainloop_schedule_name(ka::MainloopSchedule::kPingPong), "pingpong");
  ka::MainloopSchedule untouched = ka::MainloopSchedule::kPingPongFull;
  for (const char* bad : {"", "PingPong", "overlap", "pingpong ", "?"}) {
    EXPECT_FALSE(ka::parse_mainloop_schedule(bad, &untouched)) << bad;
    EXPECT_EQ(untouched, ka::MainloopSchedule::kPingPongFull) << "a refused name leaves the output alone";
  }
  EXPECT_EQ(ka::FlashAttentionConfig{}.schedule, ka::MainloopSchedule::kBaseline) << "opt-in only";
}

TEST(MainloopSchedule, PointSpecRefusesAnUnknownScheduleNamingTheFlag) {
  FaA2aPointSpec s;
  EXPECT_NO_THROW(validate_fa_point_spec(s));
  for (const char* ok : {"baseline", "pingpong", "pingpong_full"}) {
    s.knobs.schedule = ok;
    EXPECT_NO_THROW(validate_fa_point_spec(s)) << ok;
  }
  s.knobs.schedule = "overlap";
  try {
    validate_fa_point_spec(s);
    ADD_FAILURE() << "accepted --fa-schedule overlap";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_EQ(e.field(), "--fa-schedule");
    EXPECT_NE(std::string(e.what()).find("pingpong_full"), std::string::npos) << e.what();
  }
}

TEST(MainloopSchedule, OnlyANonBaselineScheduleEntersThePointKey) {
  FaA2aPointSpec base, ping;
  ping.knobs.schedule = "pingpong";
  EXPECT_FALSE(fa_canonical_spec(base).contains("fa_schedule")) << "baseline points keep their earlier key";
  ASSERT_TRUE(fa_canonical_spec(ping).contains("fa_schedule"));
  EXPECT_EQ(fa_canonical_spec(ping)["fa_schedule"], "pingpong");
  EXPECT_NE(fa_canonical_spec(base), fa_canonical_spec(ping)) << "a resumed run must not reuse another schedule's point";
  FaA2aPointSpec full = ping;
  full.knobs.schedule = "pingpong_full";
  EXPECT_NE(fa_canonical_spec(full), fa_canonical_spec(ping));
}

TEST(TileSchedulerKind, NamesRoundTripAndOnlyDynamicEntersThePointKey) {
  for (int i = 0; i < ka::kNumTileSchedulerKinds; ++i) {
    const auto kind = static_cast<ka::TileSchedulerKind>(i);
    ka::TileSchedulerKind back = ka::TileSchedulerKind::kStatic;
    ASSERT_TRUE(ka::parse_tile_scheduler(ka::tile_scheduler_name(kind), &back));
    EXPECT_EQ(back, kind);
  }
  ka::TileSchedulerKind untouched = ka::TileSchedulerKind::kDynamic;
  EXPECT_FALSE(ka::parse_tile_scheduler("greedy", &untouched));
  EXPECT_EQ(untouched, ka::TileSchedulerKind::kDynamic);
  FaA2aPointSpec fixed, drawn;
  fixed.knobs.tile_scheduler = "static";
  EXPECT_FALSE(fa_canonical_spec(fixed).contains("fa_tile_scheduler")) << "static points keep their earlier key";
  ASSERT_TRUE(fa_canonical_spec(drawn).contains("fa_tile_scheduler")) << "dynamic is the default";
  EXPECT_NE(fa_canonical_spec(fixed), fa_canonical_spec(drawn));
  drawn.knobs.tile_scheduler = "greedy";
  EXPECT_THROW(validate_fa_point_spec(drawn), Error);
}

TEST(StoreCachePolicy, NamesRoundTripAndOnlyStreamingEntersThePointKey) {
  for (int i = 0; i < ka::kNumStoreCachePolicies; ++i) {
    const auto policy = static_cast<ka::StoreCachePolicy>(i);
    ka::StoreCachePolicy back = ka::StoreCachePolicy::kDefault;
    ASSERT_TRUE(ka::parse_store_cache_policy(ka::store_cache_policy_name(policy), &back));
    EXPECT_EQ(back, policy);
  }
  ka::StoreCachePolicy untouched = ka::StoreCachePolicy::kStreaming;
  EXPECT_FALSE(ka::parse_store_cache_policy("evict_last", &untouched));
  EXPECT_EQ(untouched, ka::StoreCachePolicy::kStreaming);
  FaA2aPointSpec plain, streaming;
  streaming.knobs.store_cache = "streaming";
  EXPECT_FALSE(fa_canonical_spec(plain).contains("fa_store_cache")) << "default points keep their earlier key";
  ASSERT_TRUE(fa_canonical_spec(streaming).contains("fa_store_cache"));
  EXPECT_NE(fa_canonical_spec(plain), fa_canonical_spec(streaming));
  streaming.knobs.store_cache = "evict_last";
  try {
    validate_fa_point_spec(streaming);
    ADD_FAILURE() << "an unknown policy was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "--fa-store-cache");
    EXPECT_NE(std::string(e.what()).find("default, streaming"), std::string::npos) << e.what();
  }
}

TEST(KvCluster, OnlyClustersOf2EnterThePointKeyAndBadCombinationsAreRefused) {
  FaA2aPointSpec plain, clustered;
  clustered.knobs.kv_cluster = 2;
  validate_fa_point_spec(clustered);
  EXPECT_FALSE(fa_canonical_spec(plain).contains("fa_kv_cluster")) << "unclustered points keep their earlier key";
  ASSERT_TRUE(fa_canonical_spec(clustered).contains("fa_kv_cluster"));
  EXPECT_EQ(fa_canonical_spec(clustered)["fa_kv_cluster"], 2);
  auto field_of = [](const FaA2aPointSpec& s) {
    try {
      validate_fa_point_spec(s);
    } catch (const Error& e) {
      return e.field();
    }
    return std::string("accepted");
  };
  FaA2aPointSpec bad = clustered;
  bad.knobs.kv_cluster = 4;
  EXPECT_EQ(field_of(bad), "--fa-kv-cluster");
  bad = clustered;
  bad.knobs.schedule = "pingpong";
  EXPECT_EQ(field_of(bad), "--fa-kv-cluster") << "clusters are built for the baseline schedule only";
  bad = clustered;
  bad.seq_len = 8192 + 128;  // a multiple of b_m, not of 2 b_m: the cluster's CTAs would straddle two heads
  bad.num_ranks = 1;
  EXPECT_EQ(field_of(bad), "--fa-kv-cluster");
  bad = clustered;
  bad.num_ctas = 131;
  EXPECT_EQ(field_of(bad), "--ctas");
}

}  // namespace
}  // namespace xs::attention
