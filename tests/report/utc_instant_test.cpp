// Strict ISO 8601 instants: "measured before" compares instants, and anything malformed is unknown.
#include "xs/report/utc_instant.hpp"

#include <gtest/gtest.h>

namespace xs::report {
namespace {

TEST(UtcInstant, EpochAndKnownInstants) {
  EXPECT_EQ(parse_utc_instant("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_utc_instant("2000-03-01T00:00:00Z"), 951868800);  // after a leap day of a 400-year
  EXPECT_EQ(parse_utc_instant("2026-12-05T21:50:00Z"), 1796507400);
  EXPECT_NEAR(*parse_utc_instant("2026-12-05T21:50:00.123456Z"), 1796507400.123456, 1e-5);
  EXPECT_EQ(parse_utc_instant("2026-12-05t21:50:00z"), 1796507400);  // RFC 3339 allows either case
  EXPECT_EQ(parse_utc_instant("2016-12-31T23:59:60Z"), parse_utc_instant("2017-01-01T00:00:00Z"));
}

TEST(UtcInstant, OffsetsAreHonoured) {
  EXPECT_EQ(parse_utc_instant("2026-12-05T22:50:00+01:00"), parse_utc_instant("2026-12-05T21:50:00Z"));
  EXPECT_EQ(parse_utc_instant("2026-12-05T20:20:00-01:30"), parse_utc_instant("2026-12-05T21:50:00Z"));
  // As text "2026-12-05T22:00:00+01:00" sorts after "...21:50:00Z"; as an instant it is before.
  EXPECT_EQ(compare_instants("2026-12-05T22:00:00+01:00", "2026-12-05T21:50:00Z"), -1);
}

TEST(UtcInstant, MalformedIsUnknown) {
  for (const char* bad : {"", "2026-12-05", "2026-12-05T21:50:00", "2026-12-05 21:50:00Z", "2026-13-05T21:50:00Z",
                          "2026-02-29T00:00:00Z", "2026-12-32T00:00:00Z", "2026-12-05T24:00:00Z",
                          "2026-12-05T21:60:00Z", "2026-12-05T21:50:00.Z", "2026-12-05T21:50:00Zjunk",
                          "2026-12-05T21:50:00+0100", "2026-12-05T21:50:00+01", "yesterday", "2026-1x-05T21:50:00Z",
                          "2026-12-05T21:50:60Z"})  // a leap second only at 23:59
    EXPECT_FALSE(parse_utc_instant(bad).has_value()) << bad;
  EXPECT_TRUE(parse_utc_instant("2024-02-29T00:00:00Z").has_value());
  EXPECT_FALSE(compare_instants("", "2026-12-05T21:50:00Z").has_value());
  EXPECT_FALSE(compare_instants("2026-12-05T21:50:00Z", "not a date").has_value());
  // Fractions count: .1 is before .9 of the same second.
  EXPECT_EQ(compare_instants("2026-12-05T21:50:00.1Z", "2026-12-05T21:50:00.9Z"), -1);
}

TEST(UtcInstant, ARecordedDateMustBePlausible) {
  const double now = *parse_utc_instant("2026-12-06T03:00:00Z");
  EXPECT_TRUE(parse_record_instant("2026-12-05T21:50:00Z", now).has_value());
  // Placeholders and clock errors are unknown, never "before" anything.
  for (const char* bad : {"1970-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "0000-01-01T00:00:00Z",
                          "1999-12-31T23:59:59Z", "2099-01-01T00:00:00Z", "2026-12-07T03:00:01Z"})
    EXPECT_FALSE(parse_record_instant(bad, now).has_value()) << bad;
  EXPECT_FALSE(compare_record_instants("1970-01-01T00:00:00Z", "2026-12-05T21:50:00Z", now).has_value());
  EXPECT_EQ(compare_record_instants("2026-12-04T21:50:00Z", "2026-12-05T21:50:00Z", now), -1);
}

}  // namespace
}  // namespace xs::report
