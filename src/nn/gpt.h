// gpt: byte-level decoder-only transformer (token + position embedding, pre-LayerNorm blocks of
// causal multi-head self-attention and GELU MLP, final LayerNorm, LM head).
#pragma once

#include <memory>

#include "nn/model.h"

namespace stepscope::nn {

Result<std::unique_ptr<Model>> MakeGpt(const ModelConfig& config);

}  // namespace stepscope::nn
