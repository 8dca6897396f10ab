#include "nn/gelu.h"

#include <cmath>
#include <numbers>

#include "core/cpu_dispatch.h"

namespace stepscope::nn {

namespace {
const float kSqrt2OverPi = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
constexpr float kCubic = 0.044715f;

// tanh(u) = 1 - 2 / (exp(2u) + 1): one exp instead of libm's tanhf, which dominated the MLP's
// time. Saturates correctly: exp overflow to inf gives 1, underflow to 0 gives -1.
inline float FastTanh(float u) { return 1.0f - 2.0f / (std::exp(2.0f * u) + 1.0f); }

}  // namespace

STEPSCOPE_DISPATCH void GeluForward(float* out, const float* inp, size_t N) {
  for (size_t i = 0; i < N; ++i) {
    const float x = inp[i];
    out[i] = 0.5f * x * (1.0f + FastTanh(kSqrt2OverPi * (x + kCubic * x * x * x)));
  }
}

STEPSCOPE_DISPATCH void GeluBackward(float* dinp, const float* inp, const float* dout, size_t N) {
  // out = 0.5 x (1 + tanh(u)), u = k (x + a x^3)  =>
  //   dout/dx = 0.5 (1 + tanh(u)) + 0.5 x (1 - tanh(u)^2) k (1 + 3 a x^2)
  for (size_t i = 0; i < N; ++i) {
    const float x = inp[i];
    const float th = FastTanh(kSqrt2OverPi * (x + kCubic * x * x * x));
    const float du_dx = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
    const float local = 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du_dx;
    dinp[i] += local * dout[i];
  }
}

}  // namespace stepscope::nn
