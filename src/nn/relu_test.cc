#include "nn/relu.h"

#include <gtest/gtest.h>

#include <cmath>

#include "nn/grad_check_testing.h"

namespace stepscope::nn {
namespace {

TEST(Relu, ForwardClampsNegatives) {
  const float inp[] = {-2, -0.0f, 0.5f, 3};
  float out[4];
  ReluForward(out, inp, 4);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 0.5f);
  EXPECT_EQ(out[3], 3.0f);
}

TEST(Relu, GradientMatchesFiniteDifferencesAwayFromTheKink) {
  const size_t N = 64;
  std::vector<float> inp = testing::RandomVector(N, 1);
  for (float& v : inp) {
    if (std::fabs(v) < 0.05f) v = 0.1f;  // keep every entry further than eps from 0
  }
  const std::vector<float> r = testing::RandomVector(N, 2);
  std::vector<float> out(N);
  auto loss = [&] {
    ReluForward(out.data(), inp.data(), N);
    return testing::Dot(out, r);
  };
  loss();
  std::vector<float> dinp(N);
  ReluBackward(dinp.data(), r.data(), out.data(), N);
  testing::ExpectGradientMatches("dinp", inp, dinp, loss);
}

TEST(Relu, WorksInPlace) {
  std::vector<float> x = {-1, 2, -3, 4};
  ReluForward(x.data(), x.data(), x.size());
  std::vector<float> d = {10, 20, 30, 40};
  ReluBackward(d.data(), d.data(), x.data(), d.size());
  EXPECT_EQ(d, (std::vector<float>{0, 20, 0, 40}));
}

}  // namespace
}  // namespace stepscope::nn
