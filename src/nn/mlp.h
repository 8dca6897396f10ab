// mlp: 784 -> hidden widths (ReLU after each) -> 10 classes, softmax cross-entropy loss.
#pragma once

#include <memory>

#include "nn/model.h"

namespace stepscope::nn {

// Builds an mlp from config.hidden (every width >= 1) and config.seed. Inputs are images
// (B,1,28,28); Forward on a malformed batch returns NaN and the following Backward adds nothing.
// Evaluate reuses the activation buffers, so Backward differentiates the latest Forward only if
// no Evaluate came in between.
Result<std::unique_ptr<Model>> MakeMlp(const ModelConfig& config);

}  // namespace stepscope::nn
