// 2x2 max pooling with stride 2, as a forward/backward pair over raw buffers.
#pragma once

#include <cstdint>

namespace stepscope::nn {

// out (B,C,H/2,W/2) = max over each 2x2 window of inp (B,C,H,W); H and W must be even.
// argmax (B,C,H/2,W/2) records, for backward, the index within inp's (H,W) plane of the maximum.
void MaxPool2dForward(float* out, int32_t* argmax, const float* inp, int B, int C, int H, int W);

// Backward of the line above. Accumulates (+=) dout into dinp (B,C,H,W) at the argmax positions.
void MaxPool2dBackward(float* dinp, const float* dout, const int32_t* argmax, int B, int C, int H,
                       int W);

}  // namespace stepscope::nn
