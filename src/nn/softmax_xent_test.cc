#include "nn/softmax_xent.h"

#include <gtest/gtest.h>

#include <cmath>

#include "nn/grad_check_testing.h"

namespace stepscope::nn {
namespace {

TEST(SoftmaxXent, UniformLogitsGiveLogV) {
  const int B = 2, V = 10;
  std::vector<float> logits(B * V, 3.0f), probs(B * V), losses(B);
  const int32_t targets[] = {0, 7};
  int64_t correct = -1;
  const double sum =
      SoftmaxXentForward(probs.data(), losses.data(), &correct, logits.data(), targets, B, V);
  EXPECT_NEAR(sum, 2 * std::log(10.0), 1e-5);
  EXPECT_NEAR(probs[3], 0.1f, 1e-6);
  EXPECT_EQ(correct, 1);  // ties go to class 0, which is right for the first row only
}

TEST(SoftmaxXent, CountsCorrectAndIsStableForLargeLogits) {
  const int B = 2, V = 3;
  const float logits[] = {1000, 0, 0, 0, 0, 50};
  const int32_t targets[] = {0, 1};
  float probs[6], losses[2];
  int64_t correct = 0;
  const double sum = SoftmaxXentForward(probs, losses, &correct, logits, targets, B, V);
  EXPECT_EQ(correct, 1);
  EXPECT_NEAR(losses[0], 0.0, 1e-6);
  EXPECT_NEAR(losses[1], 50.0, 1e-4);
  EXPECT_TRUE(std::isfinite(sum));
}

TEST(SoftmaxXent, GradientOfScaledMeanMatchesFiniteDifferences) {
  const int B = 4, V = 5;
  std::vector<float> logits = testing::RandomVector(B * V, 1, -2, 2), probs(B * V), losses(B);
  const int32_t targets[] = {0, 4, 2, 2};
  const float dloss = 0.7f;
  auto loss = [&] {
    return dloss / B *
           SoftmaxXentForward(probs.data(), losses.data(), nullptr, logits.data(), targets, B, V);
  };
  loss();
  std::vector<float> dlogits(B * V, 0.0f);
  SoftmaxXentBackward(dlogits.data(), probs.data(), targets, dloss, B, V);
  testing::ExpectGradientMatches("dlogits", logits, dlogits, loss, {.eps = 1e-2f});
}

}  // namespace
}  // namespace stepscope::nn
