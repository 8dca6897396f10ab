#include "analysis/scaling.h"

#include <gtest/gtest.h>

namespace stepscope::analysis {
namespace {

TEST(Scaling, EfficiencyMarginalAndSpeedup) {
  Result<std::vector<ScalingPoint>> c = ScalingCurve({{4, 300}, {1, 100}, {2, 180}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->size(), 3u);
  EXPECT_EQ((*c)[0].replicas, 1);
  EXPECT_FALSE((*c)[0].has_marginal);
  EXPECT_DOUBLE_EQ((*c)[1].efficiency, 0.9);
  EXPECT_DOUBLE_EQ((*c)[1].marginal_device_value, 0.8);
  EXPECT_DOUBLE_EQ((*c)[2].speedup, 3.0);
  EXPECT_DOUBLE_EQ((*c)[2].efficiency, 0.75);
  EXPECT_DOUBLE_EQ((*c)[2].marginal_device_value, 120.0 / 100 / 2);
}

TEST(Scaling, NeedsAReferenceAndDistinctCounts) {
  EXPECT_FALSE(ScalingCurve({{2, 100}}).ok());
  Result<std::vector<ScalingPoint>> c = ScalingCurve({{2, 150}}, 100);
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ((*c)[0].efficiency, 0.75);
  EXPECT_DOUBLE_EQ((*c)[0].marginal_device_value, 0.5);
  EXPECT_FALSE(ScalingCurve({{1, 100}, {1, 90}}).ok());
  EXPECT_FALSE(ScalingCurve({}).ok());
}

}  // namespace
}  // namespace stepscope::analysis
