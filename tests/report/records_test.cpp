// xstage report tests: enum names, point ids and point keys.
#include <gtest/gtest.h>

#include "xs/common/error.hpp"
#include "fixtures.hpp"

namespace xs {
namespace {

TEST(Records, EnumNamesRoundTrip) {
  for (Suite s : {Suite::kPeriodic, Suite::kIsolated, Suite::kLocalControl}) EXPECT_EQ(parse_suite(suite_name(s)), s);
  for (ProducerKind k : {ProducerKind::kCta, ProducerKind::kWarp}) {
    EXPECT_EQ(parse_producer_kind(producer_kind_name(k)), k);
  }
  for (AddressMode m : {AddressMode::kFresh, AddressMode::kSame}) EXPECT_EQ(parse_address_mode(address_mode_name(m)), m);
  EXPECT_STREQ(suite_name(Suite::kLocalControl), "local_control");
}

TEST(Records, UnknownEnumNameListsAcceptedNames) {
  try {
    parse_suite("periodical");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "suite");
    EXPECT_NE(std::string(e.what()).find("periodic, isolated, local_control"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_address_mode("FRESH"), Error);
  EXPECT_THROW(parse_producer_kind(""), Error);
}

TEST(Records, PointIdDropsColonOfTarget) {
  PointSpec spec;
  spec.suite = Suite::kIsolated;
  spec.target = "peer:3";
  EXPECT_EQ(point_id(spec), "remote_store.isolated.peer3");
  spec.target = "host";
  spec.suite = Suite::kLocalControl;
  EXPECT_EQ(point_id(spec), "remote_store.local_control.host");
}

TEST(Records, PointKeySeparatesSpecsAndSurvivesRoundTrip) {
  const PointRecord a = test::sample_record(132, 2e-6);
  PointRecord b = a;
  b.spec.gap_s = 2.5e-6;
  EXPECT_NE(point_key(a.spec), point_key(b.spec));
  b.spec = a.spec;
  b.spec.completion = true;
  EXPECT_NE(point_key(a.spec), point_key(b.spec));
  const PointSpec back = report::spec_from_json(nlohmann::json::parse(point_key(a.spec)), "spec");
  EXPECT_EQ(point_key(back), point_key(a.spec));
}

TEST(Records, VolumeIsKTimesB) {
  PointSpec spec;
  spec.num_producers = 148;
  spec.bytes_per_producer = 33 * 1024;
  EXPECT_EQ(spec.volume_bytes(), 148ull * 33 * 1024);
}

}  // namespace
}  // namespace xs
