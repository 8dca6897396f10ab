#include "nn/seq_cross_entropy.h"

#include <gtest/gtest.h>

#include <cmath>

#include "nn/gpt_testing.h"

namespace stepscope::nn {
namespace {

using gpt_testing::AllIndices;
using gpt_testing::Dot;
using gpt_testing::MaxRelativeError;
using testing::RandomVector;

TEST(SeqCrossEntropyTest, UniformLogitsCostLogV) {
  const int N = 3, V = 256;
  const std::vector<float> logits(N * V, 0.7f);
  const std::vector<int32_t> targets = {0, 255, 17};
  std::vector<float> probs(N * V), losses(N);
  const double sum =
      SeqCrossEntropyForward(probs.data(), losses.data(), logits.data(), targets.data(), N, V);
  EXPECT_NEAR(sum, N * std::log(256.0), 1e-4);
  for (float p : probs) EXPECT_NEAR(p, 1.0 / 256, 1e-7);
}

TEST(SeqCrossEntropyTest, InPlaceMatchesOutOfPlace) {
  const int N = 4, V = 7;
  const std::vector<float> logits = RandomVector(N * V, 11, -5.0f, 5.0f);
  const std::vector<int32_t> targets = {6, 0, 3, 3};
  std::vector<float> probs(N * V), losses(N), losses2(N);
  SeqCrossEntropyForward(probs.data(), losses.data(), logits.data(), targets.data(), N, V);
  std::vector<float> inplace = logits;
  SeqCrossEntropyForward(inplace.data(), losses2.data(), inplace.data(), targets.data(), N, V);
  EXPECT_EQ(probs, inplace);
  EXPECT_EQ(losses, losses2);
}

TEST(SeqCrossEntropyTest, GradientMatchesFiniteDifferences) {
  const int N = 5, V = 6;
  std::vector<float> logits = RandomVector(N * V, 12, -3.0f, 3.0f);
  const std::vector<int32_t> targets = {1, 5, 0, 2, 2};
  const std::vector<float> dlosses = RandomVector(N, 13);
  std::vector<float> probs(N * V), losses(N);
  auto objective = [&] {
    SeqCrossEntropyForward(probs.data(), losses.data(), logits.data(), targets.data(), N, V);
    return Dot(losses.data(), dlosses);
  };
  objective();
  std::vector<float> dlogits(N * V, 0.0f);
  SeqCrossEntropyBackward(dlogits.data(), probs.data(), targets.data(), dlosses.data(), N, V);
  EXPECT_LT(
      MaxRelativeError(objective, logits.data(), dlogits.data(), AllIndices(N * V), 1e-3f, 1e-2),
      1e-2);
}

TEST(SeqCrossEntropyTest, PaddedPositionsCostNothingAndGetNoGradient) {
  const int N = 3, V = 5;
  const std::vector<float> logits = RandomVector(N * V, 14, -2.0f, 2.0f);
  const std::vector<int32_t> all = {1, 4, 2};
  const std::vector<int32_t> padded = {1, kPaddedTarget, 2};
  std::vector<float> probs(N * V), losses(N), probs_padded(N * V), losses_padded(N);
  const double sum =
      SeqCrossEntropyForward(probs.data(), losses.data(), logits.data(), all.data(), N, V);
  const double sum_padded = SeqCrossEntropyForward(probs_padded.data(), losses_padded.data(),
                                                   logits.data(), padded.data(), N, V);
  EXPECT_EQ(losses_padded[1], 0.0f);
  EXPECT_EQ(losses_padded[0], losses[0]);
  EXPECT_EQ(losses_padded[2], losses[2]);
  EXPECT_NEAR(sum_padded, sum - losses[1], 1e-6);
  const std::vector<float> dlosses(N, 1.0f);
  std::vector<float> dlogits(N * V, 0.5f);
  SeqCrossEntropyBackward(dlogits.data(), probs_padded.data(), padded.data(), dlosses.data(), N, V);
  for (int v = 0; v < V; ++v) EXPECT_EQ(dlogits[V + v], 0.5f) << v;  // left as it was
  EXPECT_NE(dlogits[0], 0.5f);
}

}  // namespace
}  // namespace stepscope::nn
