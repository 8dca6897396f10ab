#include "nn/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace stepscope::nn {
namespace {

TEST(Sgd, MomentumAndWeightDecayMatchHandComputedSteps) {
  OptimizerConfig c{
      .kind = OptimizerKind::kSgd, .lr = 0.1f, .momentum = 0.9f, .weight_decay = 0.01f};
  auto opt = MakeOptimizer(c, 2);
  std::vector<float> p = {1.0f, -2.0f};
  const std::vector<float> g = {0.5f, 0.25f};
  opt->Step(p, g);
  // v = g + wd p = {0.51, 0.23}; p -= 0.1 v
  EXPECT_NEAR(p[0], 1.0f - 0.051f, 1e-6);
  EXPECT_NEAR(p[1], -2.0f - 0.023f, 1e-6);
  opt->Step(p, g);
  // v = 0.9 v + g + wd p
  const float v0 = 0.9f * 0.51f + 0.5f + 0.01f * 0.949f;
  const float v1 = 0.9f * 0.23f + 0.25f + 0.01f * -2.023f;
  EXPECT_NEAR(p[0], 0.949f - 0.1f * v0, 1e-6);
  EXPECT_NEAR(p[1], -2.023f - 0.1f * v1, 1e-6);
}

TEST(Sgd, PlainSgdWithoutMomentum) {
  auto opt = MakeOptimizer({.kind = OptimizerKind::kSgd, .lr = 0.5f, .momentum = 0.0f}, 1);
  std::vector<float> p = {3.0f};
  const std::vector<float> g = {2.0f};
  opt->Step(p, g);
  opt->Step(p, g);
  EXPECT_FLOAT_EQ(p[0], 1.0f);
}

TEST(AdamW, FirstStepsMatchHandComputedValues) {
  OptimizerConfig c{.kind = OptimizerKind::kAdamW,
                    .lr = 0.01f,
                    .beta1 = 0.9f,
                    .beta2 = 0.999f,
                    .eps = 1e-8f,
                    .weight_decay = 0.1f};
  auto opt = MakeOptimizer(c, 2);
  std::vector<float> p = {1.0f, -1.0f};
  const std::vector<float> g1 = {0.2f, -4.0f};
  opt->Step(p, g1);
  // step 1: bias-corrected m/sqrt(v) = g/|g| = sign(g); decay p by (1 - lr wd)
  EXPECT_NEAR(p[0], 1.0f * (1 - 0.001f) - 0.01f, 1e-6);
  EXPECT_NEAR(p[1], -1.0f * (1 - 0.001f) + 0.01f, 1e-6);
  const double p0 = p[0];
  const std::vector<float> g2 = {0.1f, -4.0f};
  opt->Step(p, g2);
  const double m = 0.9 * (0.1 * 0.2) + 0.1 * 0.1;
  const double v = 0.999 * (0.001 * 0.04) + 0.001 * 0.01;
  const double mhat = m / (1 - 0.81), vhat = v / (1 - 0.999 * 0.999);
  EXPECT_NEAR(p[0], p0 * (1 - 0.001) - 0.01 * mhat / (std::sqrt(vhat) + 1e-8), 1e-6);
}

TEST(Optimizer, LearningRateCanBeChanged) {
  auto opt = MakeOptimizer({.kind = OptimizerKind::kSgd, .lr = 1.0f, .momentum = 0.0f}, 1);
  EXPECT_FLOAT_EQ(opt->lr(), 1.0f);
  opt->set_lr(0.25f);
  std::vector<float> p = {0.0f};
  const std::vector<float> g = {1.0f};
  opt->Step(p, g);
  EXPECT_FLOAT_EQ(p[0], -0.25f);
}

}  // namespace
}  // namespace stepscope::nn

namespace stepscope::nn {
namespace {

TEST(Optimizer, StepAndZeroGradsEqualsStepThenZero) {
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdamW}) {
    const size_t n = 10001;  // not a multiple of any block size
    OptimizerConfig c{.kind = kind, .lr = 0.01f, .weight_decay = 0.05f};
    auto a = MakeOptimizer(c, n), b = MakeOptimizer(c, n);
    std::vector<float> pa(n), pb(n), ga(n), gb(n);
    for (size_t i = 0; i < n; ++i) pa[i] = pb[i] = std::sin(static_cast<float>(i));
    for (int step = 0; step < 3; ++step) {
      for (size_t i = 0; i < n; ++i) ga[i] = gb[i] = std::cos(static_cast<float>(i * (step + 1)));
      a->Step(pa, ga);
      b->StepAndZeroGrads(pb, gb);
      ASSERT_EQ(pa, pb);
      for (float g : gb) ASSERT_EQ(g, 0.0f);
    }
  }
}

}  // namespace
}  // namespace stepscope::nn
