#include "nn/maxpool2d.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "nn/grad_check_testing.h"

namespace stepscope::nn {
namespace {

TEST(MaxPool2d, ForwardPicksWindowMaxima) {
  // one 4x4 plane
  const float inp[] = {1, 2, 5, 0,  //
                       3, 4, 1, 1,  //
                       0, 0, 9, 8,  //
                       7, 0, 8, 9.5f};
  float out[4];
  int32_t idx[4];
  MaxPool2dForward(out, idx, inp, 1, 1, 4, 4);
  EXPECT_EQ(out[0], 4);
  EXPECT_EQ(out[1], 5);
  EXPECT_EQ(out[2], 7);
  EXPECT_EQ(out[3], 9.5f);
  EXPECT_EQ(idx[0], 5);
  EXPECT_EQ(idx[3], 15);
}

TEST(MaxPool2d, GradientMatchesFiniteDifferences) {
  const int B = 2, C = 3, H = 6, W = 4;
  const size_t n = static_cast<size_t>(B) * C * H * W;
  // distinct values at least 0.1 apart, so a perturbation of 0.01 never changes a maximum
  std::vector<float> inp(n);
  std::iota(inp.begin(), inp.end(), 0.0f);
  std::shuffle(inp.begin(), inp.end(), std::mt19937_64(3));
  for (float& v : inp) v *= 0.1f;
  const size_t m = n / 4;
  const std::vector<float> r = testing::RandomVector(m, 4);
  std::vector<float> out(m);
  std::vector<int32_t> idx(m);
  auto loss = [&] {
    MaxPool2dForward(out.data(), idx.data(), inp.data(), B, C, H, W);
    return testing::Dot(out, r);
  };
  loss();
  std::vector<float> dinp(n, 0.0f);
  MaxPool2dBackward(dinp.data(), r.data(), idx.data(), B, C, H, W);
  testing::ExpectGradientMatches("dinp", inp, dinp, loss, {.max_checks = 1000});
}

}  // namespace
}  // namespace stepscope::nn
