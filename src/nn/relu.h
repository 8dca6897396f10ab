// Rectified linear unit, as a forward/backward pair over raw buffers.
#pragma once

#include <cstddef>

namespace stepscope::nn {

// out (N) = max(0, inp) elementwise; out may alias inp (in place).
void ReluForward(float* out, const float* inp, size_t N);

// Backward of the line above, written from the forward's output: dinp (N) = dout * (out > 0).
// Overwrites dinp (does not accumulate) and may alias dout (in place).
void ReluBackward(float* dinp, const float* dout, const float* out, size_t N);

}  // namespace stepscope::nn
