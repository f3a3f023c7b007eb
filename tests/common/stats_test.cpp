// Tests for common/stats: interpolated quantiles and summaries.
#include "xs/common/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace xs {
namespace {

TEST(Stats, QuantilesInterpolate) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(quantile({0, 10}, 0.9), 9.0);
  EXPECT_TRUE(std::isnan(median({})));
}

TEST(Stats, SummaryKeepsSamples) {
  const Summary s = summarize({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_NEAR(s.p10, 1.4, 1e-12);
  EXPECT_NEAR(s.p90, 4.6, 1e-12);
  EXPECT_EQ(s.samples.size(), 5u);
}

}  // namespace
}  // namespace xs
