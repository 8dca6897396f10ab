#include "analysis/noise_scale.h"

#include <gtest/gtest.h>

#include "analysis/synthetic_run.h"

namespace stepscope::analysis {
namespace {

TEST(NoiseScale, RecoversKnownNoiseScale) {
  SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.samples_per_rank = 32;
  spec.grad_sq = 2.0;
  spec.trace_sigma = 100.0;  // B_noise = 50
  const NoiseScale ns = EstimateNoiseScale(SynthesizeRun(spec));
  ASSERT_TRUE(ns.known) << ns.reason;
  EXPECT_NEAR(ns.grad_sq, 2.0, 1e-9);
  EXPECT_NEAR(ns.trace_sigma, 100.0, 1e-7);
  EXPECT_NEAR(ns.b_noise, 50.0, 1e-7);
  EXPECT_DOUBLE_EQ(ns.local_batch, 32);
  EXPECT_DOUBLE_EQ(ns.global_batch, 128);
}

TEST(NoiseScale, UnknownWithoutData) {
  SyntheticRunSpec spec;
  spec.grad_sq = 1;
  spec.trace_sigma = 1;
  EXPECT_FALSE(EstimateNoiseScale(SynthesizeRun(spec)).known);  // one replica
  spec.replicas = 2;
  spec.grad_sq = -1;
  EXPECT_FALSE(EstimateNoiseScale(SynthesizeRun(spec)).known);  // no norms
  // Global norm above the local one: negative variance, reported unknown.
  std::vector<StepRecord> records = SynthesizeRun(spec);
  for (StepRecord& r : records) {
    r.local_grad_sq = 1.0;
    r.global_grad_sq = 2.0;
  }
  const NoiseScale ns = EstimateNoiseScale(records);
  EXPECT_FALSE(ns.known);
  EXPECT_NE(ns.reason.find("not positive"), std::string::npos);
}

TEST(NoiseScale, StepsAndSampleCost) {
  EXPECT_DOUBLE_EQ(StepsToTarget(1000, 50, 50), 2000);
  EXPECT_DOUBLE_EQ(RelativeSampleCost(100, 100, 200), 1.5);
  EXPECT_DOUBLE_EQ(RelativeSampleCost(0, 100, 200), 1);
}

}  // namespace
}  // namespace stepscope::analysis

namespace stepscope::analysis {
namespace {

// With E|G_b|^2 = |G|^2 + tr/b, the estimator recovers B_noise = tr/|G|^2 exactly.
TEST(NoiseScaleFromMeans, RecoversKnownValue) {
  const double g2 = 4.0, tr = 800.0, b = 32, big_b = 128;
  NoiseScale ns = NoiseScaleFromMeans(g2 + tr / b, g2 + tr / big_b, b, big_b);
  ASSERT_TRUE(ns.known) << ns.reason;
  EXPECT_NEAR(ns.b_noise, tr / g2, 1e-9);
  EXPECT_FALSE(NoiseScaleFromMeans(1, 1, 32, 32).known);  // B == b
  EXPECT_FALSE(NoiseScaleFromMeans(1, 2, 32, 64).known);  // tr(Sigma) < 0
}

}  // namespace
}  // namespace stepscope::analysis
