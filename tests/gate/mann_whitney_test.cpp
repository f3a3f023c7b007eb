// xstage gate tests: the Mann-Whitney U test against values computed by hand (exact null distribution
// by enumeration, normal approximation with tie correction) and one scipy.stats.mannwhitneyu reference.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "xs/gate/mann_whitney.hpp"

namespace xs::gate {
namespace {

TEST(MannWhitney, CompleteSeparationExact) {
  // 3 vs 3, every a below every b: U = 0; 1 of C(6,3) = 20 orderings is this extreme on each side.
  const UTestResult r = mann_whitney_u({1, 2, 3}, {4, 5, 6});
  EXPECT_EQ(r.u, 0);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.p_value, 2.0 / 20.0);
  // 5 vs 5: 2 / C(10,5) = 2/252.
  EXPECT_DOUBLE_EQ(mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}).p_value, 2.0 / 252.0);
  // Swapping the samples flips U to n1*n2 - U and keeps p.
  const UTestResult s = mann_whitney_u({4, 5, 6}, {1, 2, 3});
  EXPECT_EQ(s.u, 9);
  EXPECT_DOUBLE_EQ(s.p_value, r.p_value);
}

TEST(MannWhitney, InterleavedExact) {
  // a = {1,3,5}, b = {2,4,6}: pairs with a > b are (3,2), (5,2), (5,4): U = 3. The null counts of U for
  // 3 vs 3 are 1,1,2,3,3,3,3,2,1,1 (u = 0..9): P(U <= 3) = 7/20, two-sided p = 0.7.
  const UTestResult r = mann_whitney_u({1, 3, 5}, {2, 4, 6});
  EXPECT_EQ(r.u, 3);
  EXPECT_TRUE(r.exact);
  EXPECT_NEAR(r.p_value, 0.7, 1e-12);
}

TEST(MannWhitney, TiesUseTheCorrectedNormalApproximation) {
  // a = {1,2,2,3}, b = {2,3,4,4}. Mid-ranks: 1 -> 1, the three 2s -> 3, the two 3s -> 5.5, the 4s -> 7.5.
  // R_a = 1 + 3 + 3 + 5.5 = 12.5, U = 12.5 - 4*5/2 = 2.5, mean 8. Tie term 24 + 6 + 6 = 36:
  // var = 16/12 * (9 - 36/56) = 11.142857, z = (5.5 - 0.5) / 3.338092 = 1.497862, p = 2 * Q(z) = 0.134169.
  const UTestResult r = mann_whitney_u({1, 2, 2, 3}, {2, 3, 4, 4});
  EXPECT_EQ(r.u, 2.5);
  EXPECT_FALSE(r.exact);
  EXPECT_NEAR(r.p_value, 0.134169, 2e-6);
}

TEST(MannWhitney, LargerExactAgreesWithScipy) {
  // a = 1..12, b = 6.5..17.5: U = 21; scipy.stats.mannwhitneyu(method="exact") gives 0.002316434406890727.
  std::vector<double> a, b;
  for (int i = 1; i <= 12; ++i) a.push_back(i);
  for (int i = 6; i <= 17; ++i) b.push_back(i + 0.5);
  const UTestResult r = mann_whitney_u(a, b);
  EXPECT_EQ(r.u, 21);
  EXPECT_TRUE(r.exact);
  EXPECT_NEAR(r.p_value, 0.002316434406890727, 1e-12);
}

TEST(MannWhitney, IdenticalSamplesGiveNoEvidence) {
  EXPECT_EQ(mann_whitney_u({2, 2, 2, 2}, {2, 2, 2}).p_value, 1.0);
  EXPECT_EQ(mann_whitney_u({7}, {7}).p_value, 1.0);
}

TEST(MannWhitney, SmallestAttainablePValue) {
  EXPECT_NEAR(smallest_p_value(3, 3), 0.1, 1e-12);
  EXPECT_NEAR(smallest_p_value(4, 4), 2.0 / 70.0, 1e-12);
  EXPECT_NEAR(smallest_p_value(5, 5), 2.0 / 252.0, 1e-12);
  EXPECT_NEAR(smallest_p_value(2, 7), 2.0 / 36.0, 1e-12);
  EXPECT_EQ(smallest_p_value(1, 1), 1.0);
  EXPECT_EQ(smallest_p_value(0, 5), 1.0);
}

TEST(MannWhitney, RefusesEmptyAndNonFinite) {
  EXPECT_THROW(mann_whitney_u({}, {1.0}), std::invalid_argument);
  EXPECT_THROW(mann_whitney_u({1.0, NAN}, {1.0}), std::invalid_argument);
}

}  // namespace
}  // namespace xs::gate
