#include "nn/relu.h"

#include "core/cpu_dispatch.h"

namespace stepscope::nn {

STEPSCOPE_DISPATCH void ReluForward(float* out, const float* inp, size_t N) {
  for (size_t i = 0; i < N; ++i) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

STEPSCOPE_DISPATCH void ReluBackward(float* dinp, const float* dout, const float* out, size_t N) {
  // out = max(0, inp)  =>  dinp = dout where inp > 0 (equivalently out > 0), else 0
  for (size_t i = 0; i < N; ++i) dinp[i] = out[i] > 0.0f ? dout[i] : 0.0f;
}

}  // namespace stepscope::nn
