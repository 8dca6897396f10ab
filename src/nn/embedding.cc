#include "nn/embedding.h"

#include <cstddef>

#include "core/cpu_dispatch.h"

namespace stepscope::nn {

STEPSCOPE_DISPATCH void EmbeddingForward(float* out, const int32_t* tokens, const float* wte, const float* wpe, int B,
                      int T, int C) {
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const size_t bt = static_cast<size_t>(b) * T + t;
      float* out_bt = out + bt * C;
      const float* wte_ix = wte + static_cast<size_t>(tokens[bt]) * C;
      const float* wpe_t = wpe + static_cast<size_t>(t) * C;
      for (int c = 0; c < C; ++c) out_bt[c] = wte_ix[c] + wpe_t[c];
    }
  }
}

STEPSCOPE_DISPATCH void EmbeddingBackward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B,
                       int T, int C) {
  // out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]  =>  both rows receive dout[b,t,:]
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const size_t bt = static_cast<size_t>(b) * T + t;
      const float* dout_bt = dout + bt * C;
      float* dwte_ix = dwte + static_cast<size_t>(tokens[bt]) * C;
      float* dwpe_t = dwpe + static_cast<size_t>(t) * C;
      for (int c = 0; c < C; ++c) {
        dwte_ix[c] += dout_bt[c];
        dwpe_t[c] += dout_bt[c];
      }
    }
  }
}

}  // namespace stepscope::nn
