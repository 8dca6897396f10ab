#include "train/noise_scale.h"

#include <gtest/gtest.h>

namespace stepscope::train {
namespace {

// With E|G_b|^2 = |G|^2 + tr/b, the estimator recovers B_noise = tr/|G|^2 exactly.
TEST(NoiseScale, RecoversKnownValue) {
  const double g2 = 4.0, tr = 800.0, b = 32, B = 128;
  EXPECT_NEAR(EstimateNoiseScale(g2 + tr / b, g2 + tr / B, b, B), tr / g2, 1e-9);
}

TEST(NoiseScale, UndefinedCases) {
  EXPECT_EQ(EstimateNoiseScale(1, 1, 32, 32), -1);     // B == b
  EXPECT_EQ(EstimateNoiseScale(1, 2, 32, 64), -1);     // global larger than local: tr < 0
}

}  // namespace
}  // namespace stepscope::train
