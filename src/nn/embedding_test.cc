#include "nn/embedding.h"

#include <gtest/gtest.h>

#include "nn/gpt_testing.h"

namespace stepscope::nn {
namespace {

using gpt_testing::AllIndices;
using gpt_testing::Dot;
using gpt_testing::MaxRelativeError;
using testing::RandomVector;

TEST(EmbeddingTest, ForwardAddsTokenAndPositionRows) {
  const int B = 1, T = 2, C = 2;
  const std::vector<int32_t> tokens = {2, 0};
  const std::vector<float> wte = {1, 2, 3, 4, 5, 6};  // (3,2)
  const std::vector<float> wpe = {10, 20, 30, 40};    // (2,2)
  std::vector<float> out(B * T * C);
  EmbeddingForward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C);
  EXPECT_EQ(out, (std::vector<float>{15, 26, 31, 42}));
}

TEST(EmbeddingTest, GradientMatchesFiniteDifferences) {
  const int B = 2, T = 3, C = 4, V = 5;
  const std::vector<int32_t> tokens = {1, 4, 1, 0, 3, 1};  // token 1 repeats: rows accumulate
  std::vector<float> wte = RandomVector(V * C, 1);
  std::vector<float> wpe = RandomVector(T * C, 2);
  const std::vector<float> w = RandomVector(B * T * C, 3);
  std::vector<float> out(B * T * C);
  auto objective = [&] {
    EmbeddingForward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C);
    return Dot(out.data(), w);
  };
  std::vector<float> dwte(V * C, 0.0f), dwpe(T * C, 0.0f);
  EmbeddingBackward(dwte.data(), dwpe.data(), w.data(), tokens.data(), B, T, C);
  EXPECT_LT(MaxRelativeError(objective, wte.data(), dwte.data(), AllIndices(V * C), 1e-2f, 1e-3),
            1e-3);
  EXPECT_LT(MaxRelativeError(objective, wpe.data(), dwpe.data(), AllIndices(T * C), 1e-2f, 1e-3),
            1e-3);
  // token 2 never occurs: its row gets no gradient
  for (int c = 0; c < C; ++c) EXPECT_EQ(dwte[2 * C + c], 0.0f);
}

}  // namespace
}  // namespace stepscope::nn
