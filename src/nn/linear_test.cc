#include "nn/linear.h"

#include <gtest/gtest.h>

#include "nn/grad_check_testing.h"

namespace stepscope::nn {
namespace {

using testing::Dot;
using testing::ExpectGradientMatches;
using testing::RandomVector;

TEST(Linear, ForwardMatchesHandComputedValues) {
  // inp (1,2) = [1, 2]; weight (3,2); bias (3)
  const float inp[] = {1, 2};
  const float weight[] = {1, 0, 0, 1, 1, 1};
  const float bias[] = {0.5f, -1, 0};
  float out[3];
  LinearForward(out, inp, weight, bias, 1, 2, 3);
  EXPECT_FLOAT_EQ(out[0], 1.5f);
  EXPECT_FLOAT_EQ(out[1], 1.0f);
  EXPECT_FLOAT_EQ(out[2], 3.0f);
}

TEST(Linear, GradientMatchesFiniteDifferences) {
  const int B = 3, C = 5, OC = 4;
  std::vector<float> inp = RandomVector(B * C, 1), weight = RandomVector(OC * C, 2),
                     bias = RandomVector(OC, 3), r = RandomVector(B * OC, 4);
  std::vector<float> out(B * OC);
  auto loss = [&] {
    LinearForward(out.data(), inp.data(), weight.data(), bias.data(), B, C, OC);
    return Dot(out, r);
  };
  std::vector<float> dinp(B * C, 0.0f), dweight(OC * C, 0.0f), dbias(OC, 0.0f);
  LinearBackward(dinp.data(), dweight.data(), dbias.data(), r.data(), inp.data(), weight.data(), B,
                 C, OC);
  ExpectGradientMatches("dinp", inp, dinp, loss);
  ExpectGradientMatches("dweight", weight, dweight, loss);
  ExpectGradientMatches("dbias", bias, dbias, loss);
}

TEST(Linear, BackwardAccumulatesAndSplitHalvesAgree) {
  const int B = 2, C = 3, OC = 2;
  std::vector<float> inp = RandomVector(B * C, 5), weight = RandomVector(OC * C, 6),
                     dout = RandomVector(B * OC, 7);
  std::vector<float> dinp1(B * C, 0.0f), dw1(OC * C, 0.0f), db1(OC, 0.0f);
  LinearBackward(dinp1.data(), dw1.data(), db1.data(), dout.data(), inp.data(), weight.data(), B, C,
                 OC);
  std::vector<float> dinp2(B * C, 1.0f), dw2(OC * C, 1.0f), db2(OC, 1.0f);
  LinearBackwardParams(dw2.data(), db2.data(), dout.data(), inp.data(), B, C, OC);
  LinearBackwardInput(dinp2.data(), dout.data(), weight.data(), B, C, OC);
  for (size_t i = 0; i < dinp1.size(); ++i) EXPECT_NEAR(dinp2[i], dinp1[i] + 1, 1e-5);
  for (size_t i = 0; i < dw1.size(); ++i) EXPECT_NEAR(dw2[i], dw1[i] + 1, 1e-5);
  for (size_t i = 0; i < db1.size(); ++i) EXPECT_NEAR(db2[i], db1[i] + 1, 1e-5);
}

}  // namespace
}  // namespace stepscope::nn
