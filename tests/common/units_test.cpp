// Tests for common/units: every accepted suffix, and clear errors naming the field for bad input.
#include "xs/common/units.hpp"

#include <gtest/gtest.h>

#include "xs/common/error.hpp"

namespace xs {
namespace {

TEST(Units, BytesSuffixes) {
  EXPECT_EQ(parse_bytes("32KiB"), 32768u);
  EXPECT_EQ(parse_bytes("32KB"), 32000u);
  EXPECT_EQ(parse_bytes("4.25MiB"), 4456448u);
  EXPECT_EQ(parse_bytes("1MB"), 1000000u);
  EXPECT_EQ(parse_bytes("2GiB"), 2147483648ull);
  EXPECT_EQ(parse_bytes("3GB"), 3000000000ull);
  EXPECT_EQ(parse_bytes("64 B"), 64u);
  EXPECT_EQ(parse_bytes("4096"), 4096u);
}

TEST(Units, TimesAndRates) {
  EXPECT_DOUBLE_EQ(parse_seconds("0.76us"), 0.76e-6);
  EXPECT_DOUBLE_EQ(parse_seconds("10ns"), 10e-9);
  EXPECT_DOUBLE_EQ(parse_seconds("1.5ms"), 1.5e-3);
  EXPECT_DOUBLE_EQ(parse_seconds("2s"), 2.0);
  EXPECT_DOUBLE_EQ(parse_seconds("0"), 0.0);
  EXPECT_DOUBLE_EQ(parse_rate_bps("717GB/s"), 717e9);
  EXPECT_DOUBLE_EQ(parse_rate_bps("1GiB/s"), 1073741824.0);
}

TEST(Units, BadInputNamesFieldAndForm) {
  try {
    parse_bytes("32 KiBs", "--B");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("--B"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("KiB"), std::string::npos);
  }
  EXPECT_THROW(parse_bytes("-4KiB"), Error);
  EXPECT_THROW(parse_seconds("5"), Error);      // a bare non-zero time has no unit
  EXPECT_THROW(parse_seconds("5 parsecs"), Error);
  EXPECT_THROW(parse_rate_bps("0GB/s"), Error);
  EXPECT_THROW(parse_rate_bps("fast"), Error);
  EXPECT_THROW(parse_integer("12x", "--K"), Error);
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_bytes(4456448), "4.25 MiB");
  EXPECT_EQ(format_seconds(6e-6), "6.000 us");
  EXPECT_EQ(format_rate(717e9), "717.0 GB/s");
  // A small rate is not printed as 0.0 GB/s, a huge time not in 300 digits (hostile review of 2026-12-07).
  EXPECT_EQ(format_rate(1e6), "1.0 MB/s");
  EXPECT_EQ(format_rate(12.0), "12 B/s");
  EXPECT_EQ(format_seconds(1e300), "1.000e+300 s");
  EXPECT_EQ(format_seconds(2.5), "2.500 s");
}

}  // namespace
}  // namespace xs
