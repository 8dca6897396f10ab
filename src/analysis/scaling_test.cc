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
  EXPECT_FALSE(ScalingCurve({{1, 100}, {1, 90}}).ok());
  EXPECT_FALSE(ScalingCurve({}).ok());
}

// A marginal device value needs two measured replica counts: one count against an estimated
// (or given) single-device reference has none.
TEST(Scaling, NoMarginalFromASingleMeasuredCount) {
  Result<std::vector<ScalingPoint>> one = ScalingCurve({{8, 300}}, 100);
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_FALSE((*one)[0].has_marginal);
  EXPECT_DOUBLE_EQ((*one)[0].speedup, 3.0);

  Result<std::vector<ScalingPoint>> two = ScalingCurve({{8, 300}, {4, 200}}, 100);
  ASSERT_TRUE(two.ok()) << two.status().message();
  EXPECT_FALSE((*two)[0].has_marginal);  // N=4: nothing measured before it
  ASSERT_TRUE((*two)[1].has_marginal);
  EXPECT_DOUBLE_EQ((*two)[1].marginal_device_value, (300.0 - 200) / 100 / 4);
}

TEST(Scaling, UnitTextRoundTrips) {
  for (ThroughputUnit u : {ThroughputUnit::kSamples, ThroughputUnit::kSteps}) {
    EXPECT_EQ(ParseThroughputUnit(UnitText(u)), u);
  }
  EXPECT_EQ(UnitText(ThroughputUnit::kSteps), "steps/s");
  EXPECT_EQ(UnitNoun(ThroughputUnit::kSamples), "samples");
  EXPECT_FALSE(ParseThroughputUnit("samples").has_value());
}

}  // namespace
}  // namespace stepscope::analysis
