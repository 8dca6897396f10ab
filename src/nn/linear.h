// Fully connected layer, as a forward/backward pair over raw buffers (OpenBLAS sgemm).
#pragma once

namespace stepscope::nn {

// out (B,OC) = inp (B,C) @ weight^T + bias; weight is (OC,C), bias (OC) or nullptr.
void LinearForward(float* out, const float* inp, const float* weight, const float* bias, int B,
                   int C, int OC);

// Backward of the line above. Accumulates (+=) into dinp (B,C), dweight (OC,C), dbias (OC);
// dinp or dbias may be nullptr to skip them.
void LinearBackward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                    const float* weight, int B, int C, int OC);

// The two halves of LinearBackward, so a caller can publish the parameter gradients before
// spending time on the input gradient. LinearBackwardParams accumulates dweight and dbias
// (dbias may be nullptr); LinearBackwardInput accumulates dinp.
void LinearBackwardParams(float* dweight, float* dbias, const float* dout, const float* inp, int B,
                          int C, int OC);
void LinearBackwardInput(float* dinp, const float* dout, const float* weight, int B, int C, int OC);

}  // namespace stepscope::nn
