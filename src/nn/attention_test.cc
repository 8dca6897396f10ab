#include "nn/attention.h"

#include <gtest/gtest.h>

#include "nn/gpt_testing.h"

namespace stepscope::nn {
namespace {

using gpt_testing::AllIndices;
using gpt_testing::Dot;
using gpt_testing::MaxRelativeError;
using testing::RandomVector;

TEST(AttentionTest, ProbabilitiesAreCausalAndNormalised) {
  const int B = 2, T = 5, C = 8, NH = 2, hs = C / NH;
  const std::vector<float> qkv = RandomVector(B * T * 3 * C, 14, -2.0f, 2.0f);
  std::vector<float> out(B * T * C), att(B * NH * T * T);
  AttentionForward(out.data(), att.data(), qkv.data(), B, T, C, NH);
  for (int bh = 0; bh < B * NH; ++bh) {
    for (int i = 0; i < T; ++i) {
      double sum = 0;
      for (int j = 0; j < T; ++j) {
        const float a = att[(bh * T + i) * T + j];
        if (j > i) {
          EXPECT_EQ(a, 0.0f);
        }
        sum += a;
      }
      EXPECT_NEAR(sum, 1.0, 1e-6);
    }
  }
  // the first position can only attend to itself: its output is its own v
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      for (int d = 0; d < hs; ++d) {
        EXPECT_FLOAT_EQ(out[b * T * C + h * hs + d], qkv[b * T * 3 * C + 2 * C + h * hs + d]);
      }
    }
  }
}

TEST(AttentionTest, GradientMatchesFiniteDifferences) {
  const int B = 2, T = 4, C = 8, NH = 2;
  std::vector<float> qkv = RandomVector(B * T * 3 * C, 15, -1.5f, 1.5f);
  const std::vector<float> w = RandomVector(B * T * C, 16);
  std::vector<float> out(B * T * C), att(B * NH * T * T);
  auto objective = [&] {
    AttentionForward(out.data(), att.data(), qkv.data(), B, T, C, NH);
    return Dot(out.data(), w);
  };
  objective();
  std::vector<float> dqkv(qkv.size(), 0.0f), scratch(T * T);
  AttentionBackward(dqkv.data(), scratch.data(), w.data(), qkv.data(), att.data(), B, T, C, NH);
  EXPECT_LT(
      MaxRelativeError(objective, qkv.data(), dqkv.data(), AllIndices(qkv.size()), 1e-3f, 1e-2),
      1e-2);
}

}  // namespace
}  // namespace stepscope::nn
