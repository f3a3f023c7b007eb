// Tests for the one range grammar (common/range): geometric, arithmetic, lists, and bad ranges.
#include "xs/common/range.hpp"

#include <gtest/gtest.h>

#include "xs/common/error.hpp"

namespace xs {
namespace {

TEST(Range, Geometric) {
  const auto b = parse_bytes_range("1KiB:512KiB:x2", "--B");
  ASSERT_EQ(b.size(), 10u);
  EXPECT_EQ(b.front(), 1024u);
  EXPECT_EQ(b.back(), 512u * 1024u);
}

TEST(Range, ArithmeticInclusive) {
  const auto g = parse_seconds_range("0:20us:+1us", "--G");
  ASSERT_EQ(g.size(), 21u);
  EXPECT_DOUBLE_EQ(g.front(), 0.0);
  EXPECT_NEAR(g.back(), 20e-6, 1e-15);
  EXPECT_EQ(parse_seconds_range("0:1us:250ns", "--G").size(), 5u);  // '+' is optional
}

TEST(Range, ListsAndMixed) {
  const auto k = parse_integer_range("1,8,33,132", "--K");
  EXPECT_EQ(k, (std::vector<long long>{1, 8, 33, 132}));
  const auto mixed = parse_integer_range("1,4:16:x2", "--K");
  EXPECT_EQ(mixed, (std::vector<long long>{1, 4, 8, 16}));
}

TEST(Range, BadRangesAreInputErrors) {
  EXPECT_THROW(parse_bytes_range("512KiB:1KiB:x2", "--B"), Error);  // inverted
  EXPECT_THROW(parse_bytes_range("1KiB:512KiB:x1", "--B"), Error);  // factor must exceed 1
  EXPECT_THROW(parse_seconds_range("0:20us:+0us", "--G"), Error);   // zero step
  EXPECT_THROW(parse_seconds_range("0:20us", "--G"), Error);        // missing step
  EXPECT_THROW(parse_integer_range("1,,2", "--K"), Error);          // empty item
  EXPECT_THROW(parse_integer_range("", "--K"), Error);
  EXPECT_THROW(parse_seconds_range("0:1s:+1ns", "--G"), Error);     // too many points
  try {
    parse_bytes_range("512KiB:1KiB:x2", "--B");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("inverted"), std::string::npos);
    EXPECT_EQ(e.field(), "--B");
  }
}

}  // namespace
}  // namespace xs

namespace {

TEST(NameList, SplitsOnCommasAndRefusesEmptyNames) {
  EXPECT_EQ(xs::parse_name_list("host", "--target"), (std::vector<std::string>{"host"}));
  EXPECT_EQ(xs::parse_name_list("host,local,peer:1", "--target"),
            (std::vector<std::string>{"host", "local", "peer:1"}));
  for (const char* bad : {"", ",", "host,", ",host", "a,,b"}) {
    try {
      (void)xs::parse_name_list(bad, "--target");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const xs::Error& e) {
      EXPECT_EQ(e.code(), xs::ExitCode::kBadInput) << bad;
      EXPECT_NE(std::string(e.what()).find("--target"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
