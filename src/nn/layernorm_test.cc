#include "nn/layernorm.h"

#include <gtest/gtest.h>

#include "nn/gpt_testing.h"

namespace stepscope::nn {
namespace {

using gpt_testing::AllIndices;
using gpt_testing::Dot;
using gpt_testing::MaxRelativeError;
using testing::RandomVector;

TEST(LayerNormTest, UnitWeightGivesZeroMeanUnitVariance) {
  const int N = 3, C = 16;
  const std::vector<float> inp = RandomVector(N * C, 4, -3.0f, 3.0f);
  const std::vector<float> weight(C, 1.0f), bias(C, 0.0f);
  std::vector<float> out(N * C), mean(N), rstd(N);
  LayerNormForward(out.data(), mean.data(), rstd.data(), inp.data(), weight.data(), bias.data(), N,
                   C);
  for (int n = 0; n < N; ++n) {
    double m = 0, v = 0;
    for (int c = 0; c < C; ++c) m += out[n * C + c];
    m /= C;
    for (int c = 0; c < C; ++c) v += (out[n * C + c] - m) * (out[n * C + c] - m);
    v /= C;
    EXPECT_NEAR(m, 0.0, 1e-6);
    EXPECT_NEAR(v, 1.0, 1e-3);  // 1 - eps/var
  }
}

TEST(LayerNormTest, GradientMatchesFiniteDifferences) {
  const int N = 3, C = 8;
  std::vector<float> inp = RandomVector(N * C, 5, -2.0f, 2.0f);
  std::vector<float> weight = RandomVector(C, 6);
  std::vector<float> bias = RandomVector(C, 7);
  const std::vector<float> w = RandomVector(N * C, 8);
  std::vector<float> out(N * C), mean(N), rstd(N);
  auto objective = [&] {
    LayerNormForward(out.data(), mean.data(), rstd.data(), inp.data(), weight.data(), bias.data(),
                     N, C);
    return Dot(out.data(), w);
  };
  objective();
  std::vector<float> dinp(N * C, 0.0f), dweight(C, 0.0f), dbias(C, 0.0f);
  LayerNormBackward(dinp.data(), dweight.data(), dbias.data(), w.data(), inp.data(), weight.data(),
                    mean.data(), rstd.data(), N, C);
  EXPECT_LT(MaxRelativeError(objective, inp.data(), dinp.data(), AllIndices(N * C), 1e-3f, 1e-2),
            1e-2);
  EXPECT_LT(MaxRelativeError(objective, weight.data(), dweight.data(), AllIndices(C), 1e-3f, 1e-2),
            1e-2);
  EXPECT_LT(MaxRelativeError(objective, bias.data(), dbias.data(), AllIndices(C), 1e-3f, 1e-2),
            1e-2);
}

}  // namespace
}  // namespace stepscope::nn
