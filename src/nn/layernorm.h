// Layer normalisation over the last dimension, as a forward/backward pair over raw buffers.
#pragma once

namespace stepscope::nn {

// For each of the N rows of inp (N,C):
//   mean[n] = mean(inp[n,:]), rstd[n] = 1 / sqrt(var(inp[n,:]) + 1e-5)  (biased variance)
//   out[n,:] = (inp[n,:] - mean[n]) * rstd[n] * weight + bias       weight, bias are (C)
// mean and rstd (N) are saved for the backward pass.
void LayerNormForward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                      const float* bias, int N, int C);

// Backward of the line above. Accumulates (+=) dinp (N,C), dweight (C) and dbias (C) from dout.
void LayerNormBackward(float* dinp, float* dweight, float* dbias, const float* dout,
                       const float* inp, const float* weight, const float* mean, const float* rstd,
                       int N, int C);

}  // namespace stepscope::nn
