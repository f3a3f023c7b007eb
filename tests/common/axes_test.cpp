// Tests for common/axes: typed axes from the range grammar, products in nested-loop order, zips in step, nesting,
// and the sizes and errors the suites rely on.
#include "xs/common/axes.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <tuple>
#include <vector>

namespace xs {
namespace {

TEST(Axes, EachKindReadsTheRangeGrammar) {
  const IntegerAxis k = integer_axis("1,8:32:x2,8", "--K");
  EXPECT_EQ(k.name(), "--K");
  EXPECT_EQ(k.values(), (std::vector<long long>{1, 8, 16, 32, 8}));  // written order, duplicates kept
  EXPECT_EQ(size_axis("1KiB:4KiB:x2", "--B").values(), (std::vector<std::uint64_t>{1024, 2048, 4096}));
  const TimeAxis g = time_axis("0:2us:+1us", "--G");
  ASSERT_EQ(g.size(), 3u);
  EXPECT_DOUBLE_EQ(g.values()[2], 2e-6);
  EXPECT_EQ(string_axis("local,host", "--target").values(), (std::vector<std::string>{"local", "host"}));
}

TEST(Axes, BadRangesAreInputErrorsNamingTheAxis) {
  const auto field_of = [](auto read) {
    try {
      read();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      return e.field();
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(field_of([] { (void)integer_axis("8:1:+1", "--K"); }), "--K");
  EXPECT_EQ(field_of([] { (void)size_axis("1XB", "--B"); }), "--B");
  EXPECT_EQ(field_of([] { (void)time_axis("", "--G"); }), "--G");
  EXPECT_EQ(field_of([] { (void)string_axis("a,,b", "--target"); }), "--target");
}

TEST(Axes, AProductRunsInNestedLoopOrderLastAxisFastest) {
  const StringAxis targets("--target", {"local", "host"});
  const IntegerAxis heads("--heads", {8, 4, 16});
  const SizeAxis bytes("--B", {4096, 1024});
  std::vector<std::tuple<std::string, long long, std::uint64_t>> expected;
  for (const auto& t : targets.values())
    for (long long h : heads.values())
      for (std::uint64_t b : bytes.values()) expected.emplace_back(t, h, b);
  const auto space = product(targets, heads, bytes);
  EXPECT_EQ(space.size(), 12u);
  EXPECT_EQ(space.name(), "--target x --heads x --B");
  std::vector<std::tuple<std::string, long long, std::uint64_t>> got;
  for (const auto& [t, h, b] : space) got.emplace_back(t, h, b);
  EXPECT_EQ(got, expected);
  for (std::uint64_t i = 0; i < space.size(); ++i) EXPECT_EQ(space.at(i), expected[i]) << i;
}

TEST(Axes, AnEmptyAxisMakesAnEmptyProduct) {
  const auto space = product(IntegerAxis("--K", {1, 2}), TimeAxis("--G", {}));
  EXPECT_EQ(space.size(), 0u);
  EXPECT_TRUE(space.begin() == space.end());
  const auto single = product(IntegerAxis("--K", {3, 1}));
  std::vector<long long> got;
  for (const auto& [k] : single) got.push_back(k);
  EXPECT_EQ(got, (std::vector<long long>{3, 1}));
}

TEST(Axes, AZipAdvancesItsAxesTogether) {
  const auto space = zip(integer_axis("132,66,33", "--K"), size_axis("8KiB,16KiB,32KiB", "--B"));
  EXPECT_EQ(space.size(), 3u);
  EXPECT_EQ(space.name(), "(--K, --B)");
  std::vector<std::pair<long long, std::uint64_t>> got;
  for (const auto& [k, b] : space) got.emplace_back(k, b);
  EXPECT_EQ(got, (std::vector<std::pair<long long, std::uint64_t>>{{132, 8192}, {66, 16384}, {33, 32768}}));
}

TEST(Axes, AZipOfUnequalLengthsNamesTheAxisThatDiffers) {
  try {
    (void)zip(integer_axis("1,2", "--K"), size_axis("1KiB", "--B"), time_axis("0,1us,2us", "--G"));
    FAIL() << "unequal lengths were zipped";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_EQ(e.field(), "--B");
    EXPECT_NE(std::string(e.what()).find("--K has 2"), std::string::npos) << e.what();
  }
}

TEST(Axes, SpacesNest) {
  const StringAxis targets("--target", {"host", "local"});
  const auto pairs = zip(IntegerAxis("--K", {132, 66}), SizeAxis("--B", {8192, 2048}));
  const auto space = product(targets, pairs, TimeAxis("--G", {0.0, 1e-6}));
  EXPECT_EQ(space.size(), 8u);
  EXPECT_EQ(space.name(), "--target x (--K, --B) x --G");
  std::vector<std::tuple<std::string, long long, std::uint64_t, double>> expected;
  for (const auto& t : targets.values())
    for (const auto& [k, b] : pairs)
      for (double g : {0.0, 1e-6}) expected.emplace_back(t, k, b, g);
  std::vector<std::tuple<std::string, long long, std::uint64_t, double>> got;
  for (const auto& [t, k, b, g] : space) got.emplace_back(t, k, b, g);
  EXPECT_EQ(got, expected);
  // A zip of a product with an axis of as many values.
  const auto zipped = zip(product(IntegerAxis("--K", {1, 2}), IntegerAxis("--D", {0, 1})),
                          StringAxis("--label", {"a", "b", "c", "d"}));
  EXPECT_EQ(zipped.at(2), std::make_tuple(2LL, 0LL, std::string("c")));
}

TEST(Axes, AProductTooLargeFor64BitsSaysSo) {
  const IntegerAxis k = integer_axis("1:100000:+1", "--K");  // 1e5 values; 1e5^4 > 2^64
  EXPECT_EQ(product(k, k, k).size(), 1'000'000'000'000'000ull);
  EXPECT_EQ(product(k, k, k, k).size(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(saturating_product(0, std::numeric_limits<std::uint64_t>::max()), 0u);
}

}  // namespace
}  // namespace xs
