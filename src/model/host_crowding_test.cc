#include "model/host_crowding.h"

#include <gtest/gtest.h>

#include "model/host_cpu.h"

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
    points.push_back({n, 2, 1 + 0.1 * c, 0.001 + 0.002 * c, {}, 0});
  }
  const std::optional<HostCrowding> h = FitHostCrowding(points);
  ASSERT_TRUE(h.has_value());
  EXPECT_NEAR(h->overhead_b.estimate.value, 0.002, 1e-12);
  EXPECT_NEAR(h->overhead_a.estimate.value, 0.001, 1e-12);
  EXPECT_NEAR(h->compute_ratio_b.estimate.value, 0.1, 1e-12);
  EXPECT_NEAR(h->overhead_b.estimate.Width(), 0, 1e-12);  // exact points: every pair agrees
  EXPECT_EQ(h->max_ranks_per_host, 8);
  Scenario s;
  s.replicas = 16;
  EXPECT_EQ(ScenarioRanksPerHost(h->max_ranks_per_host, s),
            8);  // beyond what was measured: hosts like the largest run's
  s.replicas = 4;
  EXPECT_EQ(ScenarioRanksPerHost(h->max_ranks_per_host, s), 4);
  s.replicas = 16;
  s.devices_per_host = 2;
  EXPECT_EQ(ScenarioRanksPerHost(h->max_ranks_per_host, s), 2);
  s.ranks_per_host = 16;  // a measured run: as it ran
  EXPECT_EQ(ScenarioRanksPerHost(h->max_ranks_per_host, s), 16);
}

TEST(HostCrowding, TheCrowdedResidualIsALineOfItsOwn) {
  // 2 cores at N = 1, 2, 4, 8: residuals 0, 0, 30 and 90 ms (crowding 0, 0, 1, 3).
  std::vector<CrowdingPoint> points;
  for (int n : {1, 2, 4, 8}) points.push_back({n, 2, 1, 0.001, {}, 0});
  const std::vector<Seconds> residual = {0, 0, 0.030, 0.090};
  for (size_t i = 0; i < points.size(); ++i) points[i].residual = residual[i];
  std::optional<HostCrowding> h = FitHostCrowding(points);
  ASSERT_TRUE(h.has_value());
  ASSERT_TRUE(h->residual_a.has_value() && h->residual_b.has_value());
  EXPECT_NEAR(h->residual_b->estimate.value, 0.030, 1e-12);
  EXPECT_NEAR(h->residual_a->estimate.value, 0, 1e-12);
  EXPECT_EQ(h->residual_b->name, "crowding_residual_b");
  // Nothing where no residual was added.
  for (CrowdingPoint& p : points) p.residual = 0;
  const HostCrowding none = *FitHostCrowding(points);
  EXPECT_FALSE(none.residual_a.has_value());
  EXPECT_FALSE(none.residual_b.has_value());
}

TEST(HostCrowding, NoisyPointsBandTheSlope) {
  const std::vector<CrowdingPoint> points = {
      {1, 2, 1.0, 0.001, {}, 0}, {4, 2, 1.1, 0.008, {}, 0}, {8, 2, 1.3, 0.014, {}, 0}};
  const std::optional<HostCrowding> h = FitHostCrowding(points);
  ASSERT_TRUE(h.has_value());
  EXPECT_LT(h->overhead_b.estimate.low, h->overhead_b.estimate.value);
  EXPECT_GT(h->overhead_b.estimate.high, h->overhead_b.estimate.value);
  Scenario s;
  s.replicas = 64;
  EXPECT_EQ(ScenarioRanksPerHost(h->max_ranks_per_host, s), 8);  // as the fitted runs did
}

TEST(HostCrowding, NothingToFitWithoutACrowdedBaselineOrTwoLevels) {
  EXPECT_FALSE(
      FitHostCrowding({{1, 4, 1, 0.001, {}, 0}, {4, 4, 1, 0.001, {}, 0}}));  // never crowded
  EXPECT_FALSE(FitHostCrowding({{4, 2, 1, 0.001, {}, 0}, {4, 2, 1, 0.002, {}, 0}}));  // one level
  EXPECT_FALSE(
      FitHostCrowding({{1, 0, 1, 0.001, {}, 0}, {8, 0, 1, 0.004, {}, 0}}));  // cores unknown
  EXPECT_FALSE(
      FitHostCrowding({{1, 2, 1, 0.001, {}, 0}, {8, 4, 1, 0.004, {}, 0}}));  // cores differ
  EXPECT_FALSE(FitHostCrowding({{8, 2, 1, 0.004, {}, 0}}));
}

TEST(HostCrowding, AQueuesWaitingWhereACrowdedHostWasAtLeastHalfBusy) {
  EXPECT_DOUBLE_EQ(QueueWait(0.5), 1);
  EXPECT_DOUBLE_EQ(QueueWait(-1), 0);
  EXPECT_DOUBLE_EQ(QueueWait(3), QueueWait(kMaxQueueLoad));
  // 2 cores; compute 1 % longer per unit of rho/(1-rho); a step of 100 ms.
  const double loads[] = {0.1, 0.2, 0.3, 0.6};
  std::vector<CrowdingPoint> points;
  int i = 0;
  for (int n : {1, 2, 4, 8}) {
    const double load = loads[i++];
    points.push_back({n, 2, 1 + 0.01 * QueueWait(load), 0.001, load, 0.1});
  }
  std::optional<HostCrowding> h = FitHostCrowding(points);
  ASSERT_TRUE(h.has_value());
  ASSERT_TRUE(h->queue_a && h->queue_b);
  EXPECT_NEAR(h->queue_b->estimate.value, 0.01, 1e-12);
  EXPECT_NEAR(h->queue_a->estimate.value, 1, 1e-12);
  // Each rank's CPU per step in the most loaded: 60 % of 2 cores' 100 ms over 8 ranks.
  EXPECT_NEAR(h->cpu_per_rank_step, 0.6 * 0.1 * 2 / 8, 1e-15);
  EXPECT_DOUBLE_EQ(h->queue_load, 0.6);
  // The most loaded crowded baseline below half busy: the line alone.
  points.back().load = 0.4;
  h = FitHostCrowding(points);
  ASSERT_TRUE(h.has_value());
  EXPECT_FALSE(h->queue_b.has_value());
  // A load not recorded, or at the cap: the line alone.
  points.back().load = 0.6;
  points.front().load.reset();
  EXPECT_FALSE(FitHostCrowding(points)->queue_b.has_value());
  points.front().load = 0.1;
  points.back().load = kMaxQueueLoad;
  EXPECT_FALSE(FitHostCrowding(points)->queue_b.has_value());
}

}  // namespace
}  // namespace stepscope::model
