// GELU (tanh approximation), as a forward/backward pair over raw buffers.
#pragma once

#include <cstddef>

namespace stepscope::nn {

// out (N) = 0.5 * inp * (1 + tanh(sqrt(2/pi) * (inp + 0.044715 * inp^3))); out may alias inp.
void GeluForward(float* out, const float* inp, size_t N);

// Backward of the line above, written from the forward's input. Accumulates (+=) dinp (N).
void GeluBackward(float* dinp, const float* inp, const float* dout, size_t N);

}  // namespace stepscope::nn
