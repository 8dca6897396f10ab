// cnn: conv3x3(1->c, pad 1) ReLU maxpool, conv3x3(c->2c, pad 1) ReLU maxpool,
// linear(2c*7*7 -> 128) ReLU, linear(128 -> 10), softmax cross-entropy; c = cnn_channels.
#pragma once

#include <memory>

#include "nn/model.h"

namespace stepscope::nn {

// Builds the cnn from config.cnn_channels (>= 1) and config.seed. Inputs are images
// (B,1,28,28); Forward on a malformed batch returns NaN and the following Backward adds nothing.
// Evaluate reuses the activation buffers, so Backward differentiates the latest Forward only if
// no Evaluate came in between.
Result<std::unique_ptr<Model>> MakeCnn(const ModelConfig& config);

}  // namespace stepscope::nn
