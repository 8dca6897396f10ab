#include "core/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace stepscope {
namespace {

TEST(Statistics, PercentileInterpolatesLinearly) {
  EXPECT_DOUBLE_EQ(Percentile({}, 50), 0);
  EXPECT_DOUBLE_EQ(Percentile({3}, 90), 3);
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(Percentile({0, 10}, 90), 9);
  EXPECT_DOUBLE_EQ(Percentile({0, 10}, 150), 10);  // clamped
  EXPECT_DOUBLE_EQ(Median({5, 1, 9}), 5);
  EXPECT_DOUBLE_EQ(Mean({1, 2, 3, 6}), 3);
}

TEST(Statistics, MedianOfOthersIsTheMedianWithoutEachValue) {
  const std::vector<std::vector<double>> samples = {
      {}, {3}, {3, 7}, {5, 1, 4}, {2, 9, 9, 4}, {1, 8, 3, 3, 6, 0.5}, {4, 4, 4, 4, 4}};
  for (const std::vector<double>& values : samples) {
    const std::vector<double> got = MedianOfOthers(values);
    ASSERT_EQ(got.size(), values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      std::vector<double> others = values;
      others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
      EXPECT_EQ(got[i], Median(others)) << "value " << i << " of " << values.size();
    }
  }
}

TEST(Statistics, BootstrapOfConstantSampleIsExact) {
  Estimate e = BootstrapMean({2, 2, 2, 2, 2});
  EXPECT_DOUBLE_EQ(e.value, 2);
  EXPECT_DOUBLE_EQ(e.low, 2);
  EXPECT_DOUBLE_EQ(e.high, 2);
  EXPECT_DOUBLE_EQ(BootstrapMean({}).Width(), 0);
  EXPECT_DOUBLE_EQ(BootstrapMean({7}).value, 7);
}

// For a normal sample the bootstrap interval of the mean is close to the closed form
// mean +- z * sd / sqrt(n), and the same seed gives the same interval.
TEST(Statistics, BootstrapMeanMatchesNormalTheory) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> normal(10, 2);
  std::vector<double> x(400);
  for (double& v : x) v = normal(rng);
  const Estimate e = BootstrapMean(x, {.resamples = 2000, .level = 0.90});
  const double half = 1.645 * 2 / std::sqrt(400.0);
  EXPECT_NEAR(e.value, Mean(x), 1e-12);
  EXPECT_NEAR(e.high - e.value, half, 0.25 * half);
  EXPECT_NEAR(e.value - e.low, half, 0.25 * half);
  const Estimate again = BootstrapMean(x, {.resamples = 2000, .level = 0.90});
  EXPECT_DOUBLE_EQ(e.low, again.low);
  EXPECT_DOUBLE_EQ(e.high, again.high);
}

// Blocks keep correlated neighbours together: on a slowly drifting series the block interval
// is wider than the one that treats every value as independent.
TEST(Statistics, BlockBootstrapWidensForCorrelatedSeries) {
  std::vector<double> x;
  for (int i = 0; i < 200; ++i) x.push_back(std::sin(i / 15.0));
  const Estimate iid = BootstrapMean(x, {.block = 1});
  const Estimate blocks = BootstrapMean(x, {.block = 20});
  EXPECT_GT(blocks.Width(), 1.5 * iid.Width());
}

// The difference of two independent means carries both samples' noise: its interval is close to
// z * sqrt(sd_a^2 / n_a + sd_b^2 / n_b), wider than either sample's own.
TEST(Statistics, PairBootstrapHoldsTheNoiseOfBothSamples) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> a_dist(10, 2), b_dist(4, 1.5);
  std::vector<double> a(400), b(300);
  for (double& v : a) v = a_dist(rng);
  for (double& v : b) v = b_dist(rng);
  auto difference = [](const std::vector<double>& x, const std::vector<double>& y) {
    return Mean(x) - Mean(y);
  };
  const Estimate e = BootstrapPair(a, b, difference, {.resamples = 2000, .level = 0.90});
  const double half = 1.645 * std::sqrt(4.0 / 400 + 2.25 / 300);
  EXPECT_NEAR(e.value, Mean(a) - Mean(b), 1e-12);
  EXPECT_NEAR(e.high - e.value, half, 0.25 * half);
  EXPECT_NEAR(e.value - e.low, half, 0.25 * half);
  // A second sample of one value is held fixed: only the first one's noise is left.
  const Estimate fixed = BootstrapPair(a, {4.0}, difference, {.resamples = 2000, .level = 0.90});
  EXPECT_NEAR(fixed.Width(), 2 * 1.645 * 2 / std::sqrt(400.0), 0.25 * fixed.Width());
  EXPECT_TRUE(BootstrapPair({}, b, difference).Width() == 0);
}

TEST(Estimate, ArithmeticAndJson) {
  const Estimate a{1, 0.5, 2}, b{3, 2, 4};
  const Estimate s = a + b, d = b - a, m = a * -2;
  EXPECT_DOUBLE_EQ(s.low, 2.5);
  EXPECT_DOUBLE_EQ(s.high, 6);
  EXPECT_DOUBLE_EQ(d.value, 2);
  EXPECT_DOUBLE_EQ(d.low, 0);
  EXPECT_DOUBLE_EQ(d.high, 3.5);
  EXPECT_DOUBLE_EQ(m.low, -4);
  EXPECT_DOUBLE_EQ(m.high, -1);
  EXPECT_TRUE(a.Overlaps(b));
  EXPECT_FALSE(a.Overlaps(Estimate{5, 4.5, 6}));
  auto back = EstimateFromJson(ToJson(a), "x");
  ASSERT_TRUE(back.ok());
  EXPECT_DOUBLE_EQ(back->high, 2);
  auto bad = EstimateFromJson(nlohmann::json{{"value", 1}, {"low", 2}, {"high", 3}}, "v.gain");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("v.gain"), std::string::npos);
  auto missing = EstimateFromJson(nlohmann::json{{"value", 1}}, "v.gain");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("v.gain.low"), std::string::npos);
}

}  // namespace
}  // namespace stepscope

namespace stepscope {
namespace {

TEST(TrimmedMean, DropsTheEndsButKeepsACauseOfManySteps) {
  EXPECT_DOUBLE_EQ(TrimmedMean({}), 0);
  EXPECT_DOUBLE_EQ(TrimmedMean({1, 2, 9}), 4);  // under 5 values: nothing dropped
  // One disturbed step of seven is dropped (with the lowest): the mean of the other five.
  EXPECT_DOUBLE_EQ(TrimmedMean({1, 1, 1, 1, 1, 1, 8}), 1);
  // A cause in half the steps stays in the mean.
  EXPECT_DOUBLE_EQ(TrimmedMean({0, 2, 0, 2, 0, 2, 0, 2}), 1);
  // 20 values, 10 %: two from each end.
  std::vector<double> v(20, 5.0);
  v[0] = 100;
  v[1] = 100;
  v[2] = -100;
  v[3] = -100;
  EXPECT_DOUBLE_EQ(TrimmedMean(v), 5);
}

}  // namespace
}  // namespace stepscope
