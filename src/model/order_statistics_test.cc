#include "model/order_statistics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stepscope::model {
namespace {

TEST(ExpectedMaximum, HandComputedFromTwoValues) {
  // Each draw is 1 or 2 with probability 1/2: max of one draw 1.5; of two, 1/4 * 1 + 3/4 * 2.
  EXPECT_DOUBLE_EQ(ExpectedMaximum({2.0, 1.0}, 1), 1.5);
  EXPECT_DOUBLE_EQ(ExpectedMaximum({2.0, 1.0}, 2), 1.75);
  EXPECT_NEAR(ExpectedMaximum({1.0, 2.0}, 3), 1.0 / 8 + 2.0 * 7 / 8, 1e-12);
}

TEST(ExpectedMaximum, GrowsWithDrawsTowardTheLargestValue) {
  const std::vector<double> s{0.9, 1.0, 1.0, 1.1, 1.3};
  double last = 0;
  for (long long n : {1LL, 2LL, 16LL, 256LL, 4096LL}) {
    const double e = ExpectedMaximum(s, n);
    EXPECT_GE(e, last);
    last = e;
  }
  EXPECT_NEAR(ExpectedMaximum(s, 4096), 1.3, 1e-9);
  EXPECT_NEAR(ExpectedMaximum(s, 1), 1.06, 1e-12);  // the mean
}

TEST(ExpectedMaximum, TheTruncatedSumAgreesWithTheFullOne) {
  // 1,000 values 1.000 .. 1.999: E[max of N] = sum x_(i) ((i/n)^N - ((i-1)/n)^N), summed here
  // over every term.
  std::vector<double> s;
  for (int i = 0; i < 1000; ++i) s.push_back(1.0 + i / 1000.0);
  for (long long draws : {2LL, 64LL, 4096LL}) {
    double full = 0;
    for (int i = 1; i <= 1000; ++i) {
      full += s[i - 1] * (std::pow(i / 1000.0, draws) - std::pow((i - 1) / 1000.0, draws));
    }
    EXPECT_NEAR(ExpectedMaximum(s, draws), full, 1e-12) << draws;
  }
  std::vector<double> reversed(s.rbegin(), s.rend());  // any order
  EXPECT_NEAR(ExpectedMaximum(reversed, 64), ExpectedMaximum(s, 64), 1e-15);
}

TEST(ExpectedMaximum, EmptyAndConstantSamples) {
  EXPECT_EQ(ExpectedMaximum({}, 8), 0.0);
  EXPECT_DOUBLE_EQ(ExpectedMaximum({1.0, 1.0, 1.0}, 1000), 1.0);
  EXPECT_DOUBLE_EQ(ExpectedMaximum({3.0}, 0), 3.0);  // fewer than one draw counts as one
}

TEST(ExpectedMaximumScaled, HandComputedFromTwoRanks) {
  // Ranks of work 1 and 1.1, noise 0.9 or 1.1: (0.9, 0.99) 0.99, (0.9, 1.21) 1.21,
  // (1.1, 0.99) 1.1, (1.1, 1.21) 1.21, each a quarter.
  EXPECT_NEAR(ExpectedMaximumScaled({0.9, 1.1}, {1.0, 1.1}), 4.51 / 4, 1e-12);
  // Work apart by more than the noise: the heavier rank is always the slowest.
  EXPECT_NEAR(ExpectedMaximumScaled({0.9, 1.1}, {1.0, 2.0}), 2.0, 1e-12);
}

TEST(ExpectedMaximumScaled, EqualWorkIsTheExpectedMaximumScaled) {
  const std::vector<double> noise{0.8, 0.95, 1.0, 1.05, 1.2};
  EXPECT_NEAR(ExpectedMaximumScaled(noise, {1.5, 1.5, 1.5, 1.5}), 1.5 * ExpectedMaximum(noise, 4),
              1e-12);
  EXPECT_NEAR(ExpectedMaximumScaled(noise, {2.0}), 2.0, 1e-12);  // one rank: its mean work
  EXPECT_EQ(ExpectedMaximumScaled({}, {1.0}), 0.0);
  EXPECT_EQ(ExpectedMaximumScaled(noise, {}), 0.0);
}

}  // namespace
}  // namespace stepscope::model
