#include "model/host_crowding.h"

#include <gtest/gtest.h>

namespace stepscope::model {
namespace {

TEST(HostCrowding, RanksPerCoreBeyondOne) {
  EXPECT_DOUBLE_EQ(Crowding(1, 2), 0);
  EXPECT_DOUBLE_EQ(Crowding(2, 2), 0);
  EXPECT_DOUBLE_EQ(Crowding(8, 2), 3);
  EXPECT_DOUBLE_EQ(Crowding(8, 0), 0);  // cores unknown: no crowding
}

TEST(HostCrowding, LinesThroughTheCrowdedBaselines) {
  // 2 cores; overhead 2 ms per rank per core beyond one, compute 10 % more per unit.
  std::vector<CrowdingPoint> points;
  for (int n : {1, 2, 4, 8}) {
    const double c = Crowding(n, 2);
    points.push_back({n, 2, 1 + 0.1 * c, 0.001 + 0.002 * c});
  }
  const std::optional<HostCrowding> h = FitHostCrowding(points, true);
  ASSERT_TRUE(h.has_value());
  EXPECT_NEAR(h->overhead_b.estimate.value, 0.002, 1e-12);
  EXPECT_NEAR(h->overhead_a.estimate.value, 0.001, 1e-12);
  EXPECT_NEAR(h->compute_ratio_b.estimate.value, 0.1, 1e-12);
  EXPECT_NEAR(h->overhead_b.estimate.Width(), 0, 1e-12);  // exact points: every pair agrees
  EXPECT_EQ(h->max_ranks_per_host, 8);
  EXPECT_EQ(ScenarioRanksPerHost(*h, 16, std::nullopt), 16);  // one host: all of them
  EXPECT_EQ(ScenarioRanksPerHost(*h, 16, 4), 4);
}

TEST(HostCrowding, NoisyPointsBandTheSlope) {
  const std::vector<CrowdingPoint> points = {
      {1, 2, 1.0, 0.001}, {4, 2, 1.1, 0.008}, {8, 2, 1.3, 0.014}};
  const std::optional<HostCrowding> h = FitHostCrowding(points, false);
  ASSERT_TRUE(h.has_value());
  EXPECT_LT(h->overhead_b.estimate.low, h->overhead_b.estimate.value);
  EXPECT_GT(h->overhead_b.estimate.high, h->overhead_b.estimate.value);
  EXPECT_FALSE(h->one_host);
  EXPECT_EQ(ScenarioRanksPerHost(*h, 64, std::nullopt), 8);  // as the fitted runs did
}

TEST(HostCrowding, NothingToFitWithoutACrowdedBaselineOrTwoLevels) {
  EXPECT_FALSE(FitHostCrowding({{1, 4, 1, 0.001}, {4, 4, 1, 0.001}}, true));   // never crowded
  EXPECT_FALSE(FitHostCrowding({{4, 2, 1, 0.001}, {4, 2, 1, 0.002}}, true));   // one level
  EXPECT_FALSE(FitHostCrowding({{1, 0, 1, 0.001}, {8, 0, 1, 0.004}}, true));   // cores unknown
  EXPECT_FALSE(FitHostCrowding({{1, 2, 1, 0.001}, {8, 4, 1, 0.004}}, true));   // cores differ
  EXPECT_FALSE(FitHostCrowding({{8, 2, 1, 0.004}}, true));
}

}  // namespace
}  // namespace stepscope::model
