#include "nn/gelu.h"

#include <gtest/gtest.h>

#include "nn/gpt_testing.h"

namespace stepscope::nn {
namespace {

using gpt_testing::AllIndices;
using gpt_testing::Dot;
using gpt_testing::MaxRelativeError;
using testing::RandomVector;

TEST(GeluTest, KnownValues) {
  const std::vector<float> inp = {0.0f, 10.0f, -10.0f, 1.0f};
  std::vector<float> out(inp.size());
  GeluForward(out.data(), inp.data(), inp.size());
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_NEAR(out[1], 10.0f, 1e-5);
  EXPECT_NEAR(out[2], 0.0f, 1e-5);
  EXPECT_NEAR(out[3], 0.841192f, 1e-5);  // 0.5 (1 + tanh(sqrt(2/pi) 1.044715))
}

TEST(GeluTest, GradientMatchesFiniteDifferencesAndAccumulates) {
  const size_t N = 64;
  std::vector<float> inp = RandomVector(N, 9, -4.0f, 4.0f);
  const std::vector<float> w = RandomVector(N, 10);
  std::vector<float> out(N);
  auto objective = [&] {
    GeluForward(out.data(), inp.data(), N);
    return Dot(out.data(), w);
  };
  std::vector<float> dinp(N, 0.0f);
  GeluBackward(dinp.data(), inp.data(), w.data(), N);
  EXPECT_LT(MaxRelativeError(objective, inp.data(), dinp.data(), AllIndices(N), 1e-3f, 1e-2), 1e-2);
  std::vector<float> twice = dinp;
  GeluBackward(twice.data(), inp.data(), w.data(), N);
  for (size_t i = 0; i < N; ++i) EXPECT_FLOAT_EQ(twice[i], 2.0f * dinp[i]);
}

}  // namespace
}  // namespace stepscope::nn
