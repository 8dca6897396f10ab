#include "nn/layernorm.h"

#include <cmath>
#include <cstddef>

#include "core/cpu_dispatch.h"

namespace stepscope::nn {

namespace {
constexpr float kEps = 1e-5f;
}  // namespace

STEPSCOPE_DISPATCH void LayerNormForward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                      const float* bias, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const float* x = inp + static_cast<size_t>(n) * C;
    float* y = out + static_cast<size_t>(n) * C;
    float m = 0.0f;
    for (int c = 0; c < C; ++c) m += x[c];
    m /= C;
    float v = 0.0f;
    for (int c = 0; c < C; ++c) v += (x[c] - m) * (x[c] - m);
    v /= C;
    const float s = 1.0f / std::sqrt(v + kEps);
    for (int c = 0; c < C; ++c) y[c] = (x[c] - m) * s * weight[c] + bias[c];
    mean[n] = m;
    rstd[n] = s;
  }
}

STEPSCOPE_DISPATCH void LayerNormBackward(float* dinp, float* dweight, float* dbias, const float* dout,
                       const float* inp, const float* weight, const float* mean, const float* rstd,
                       int N, int C) {
  // out = norm * weight + bias, norm = (inp - mean) * rstd  =>
  //   dweight += dout * norm, dbias += dout, dnorm = dout * weight,
  //   dinp += rstd * (dnorm - mean(dnorm) - norm * mean(dnorm * norm))
  for (int n = 0; n < N; ++n) {
    const float* x = inp + static_cast<size_t>(n) * C;
    const float* dy = dout + static_cast<size_t>(n) * C;
    float* dx = dinp + static_cast<size_t>(n) * C;
    const float m = mean[n];
    const float s = rstd[n];
    float dnorm_mean = 0.0f;
    float dnorm_norm_mean = 0.0f;
    for (int c = 0; c < C; ++c) {
      const float norm = (x[c] - m) * s;
      const float dnorm = weight[c] * dy[c];
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * norm;
    }
    dnorm_mean /= C;
    dnorm_norm_mean /= C;
    for (int c = 0; c < C; ++c) {
      const float norm = (x[c] - m) * s;
      const float dnorm = weight[c] * dy[c];
      dweight[c] += norm * dy[c];
      dbias[c] += dy[c];
      dx[c] += s * (dnorm - dnorm_mean - norm * dnorm_norm_mean);
    }
  }
}

}  // namespace stepscope::nn
