// Token + learned position embedding, as a forward/backward pair over raw buffers.
#pragma once

#include <cstdint>

namespace stepscope::nn {

// out (B,T,C) = wte[tokens[b,t]] + wpe[t]; tokens (B,T) lie in [0, V); wte is (V,C), wpe has at
// least T rows of C.
void EmbeddingForward(float* out, const int32_t* tokens, const float* wte, const float* wpe, int B,
                      int T, int C);

// Backward of the line above. Accumulates (+=) dwte (V,C) and dwpe (T,C) from dout (B,T,C).
void EmbeddingBackward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B,
                       int T, int C);

}  // namespace stepscope::nn
