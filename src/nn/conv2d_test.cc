#include "nn/conv2d.h"

#include <gtest/gtest.h>

#include "nn/grad_check_testing.h"

namespace stepscope::nn {
namespace {

TEST(Conv2d, ForwardOfIdentityKernelCopiesTheInput) {
  const int H = 4, W = 5;
  std::vector<float> inp = testing::RandomVector(H * W, 1);
  const float weight[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
  const float bias[1] = {0.25f};
  std::vector<float> out(H * W), col(9 * H * W);
  Conv2dForward(out.data(), col.data(), inp.data(), weight, bias, 1, 1, H, W, 1, 3, 1);
  for (int i = 0; i < H * W; ++i) EXPECT_FLOAT_EQ(out[i], inp[i] + 0.25f);
}

TEST(Conv2d, ForwardSumsTheZeroPaddedNeighbourhood) {
  // all-ones 3x3 kernel over an all-ones 3x3 image: corners see 4, edges 6, the centre 9
  std::vector<float> inp(9, 1.0f), weight(9, 1.0f), out(9), col(81);
  Conv2dForward(out.data(), col.data(), inp.data(), weight.data(), nullptr, 1, 1, 3, 3, 1, 3, 1);
  EXPECT_EQ(out, (std::vector<float>{4, 6, 4, 6, 9, 6, 4, 6, 4}));
}

TEST(Conv2d, GradientMatchesFiniteDifferences) {
  const int B = 2, C = 3, H = 5, W = 6, OC = 4, K = 3, pad = 1;
  const int OH = ConvOutSize(H, K, pad), OW = ConvOutSize(W, K, pad);
  std::vector<float> inp = testing::RandomVector(B * C * H * W, 1),
                     weight = testing::RandomVector(OC * C * K * K, 2),
                     bias = testing::RandomVector(OC, 3),
                     r = testing::RandomVector(B * OC * OH * OW, 4);
  std::vector<float> out(B * OC * OH * OW), col(B * C * K * K * OH * OW);
  auto loss = [&] {
    Conv2dForward(out.data(), col.data(), inp.data(), weight.data(), bias.data(), B, C, H, W, OC, K,
                  pad);
    return testing::Dot(out, r);
  };
  loss();
  std::vector<float> dinp(inp.size(), 0.0f), dweight(weight.size(), 0.0f), dbias(OC, 0.0f),
      dcol(C * K * K * OH * OW);
  Conv2dBackward(dinp.data(), dcol.data(), dweight.data(), dbias.data(), r.data(), col.data(),
                 weight.data(), B, C, H, W, OC, K, pad);
  testing::ExpectGradientMatches("dinp", inp, dinp, loss);
  testing::ExpectGradientMatches("dweight", weight, dweight, loss);
  testing::ExpectGradientMatches("dbias", bias, dbias, loss);

  // without dinp the parameter gradients are the same (and accumulate)
  std::vector<float> dweight2(weight.size(), 0.0f), dbias2(OC, 0.0f);
  loss();
  Conv2dBackward(nullptr, nullptr, dweight2.data(), dbias2.data(), r.data(), col.data(),
                 weight.data(), B, C, H, W, OC, K, pad);
  Conv2dBackward(nullptr, nullptr, dweight2.data(), dbias2.data(), r.data(), col.data(),
                 weight.data(), B, C, H, W, OC, K, pad);
  for (size_t i = 0; i < dweight.size(); ++i) EXPECT_NEAR(dweight2[i], 2 * dweight[i], 1e-4);
  for (int i = 0; i < OC; ++i) EXPECT_NEAR(dbias2[i], 2 * dbias[i], 1e-4);
}

TEST(Conv2d, GradientWithoutPaddingMatchesFiniteDifferences) {
  const int B = 1, C = 2, H = 5, W = 4, OC = 3, K = 3, pad = 0;
  const int OH = ConvOutSize(H, K, pad), OW = ConvOutSize(W, K, pad);
  std::vector<float> inp = testing::RandomVector(B * C * H * W, 5),
                     weight = testing::RandomVector(OC * C * K * K, 6),
                     r = testing::RandomVector(B * OC * OH * OW, 7);
  std::vector<float> out(B * OC * OH * OW), col(B * C * K * K * OH * OW);
  auto loss = [&] {
    Conv2dForward(out.data(), col.data(), inp.data(), weight.data(), nullptr, B, C, H, W, OC, K,
                  pad);
    return testing::Dot(out, r);
  };
  loss();
  std::vector<float> dinp(inp.size(), 0.0f), dweight(weight.size(), 0.0f),
      dcol(C * K * K * OH * OW);
  Conv2dBackward(dinp.data(), dcol.data(), dweight.data(), nullptr, r.data(), col.data(),
                 weight.data(), B, C, H, W, OC, K, pad);
  testing::ExpectGradientMatches("dinp", inp, dinp, loss);
  testing::ExpectGradientMatches("dweight", weight, dweight, loss);
}

}  // namespace
}  // namespace stepscope::nn
