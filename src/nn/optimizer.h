// Optimizers over the flat parameter and gradient buffers.
#pragma once

#include <memory>
#include <span>

#include "core/status.h"

namespace stepscope::nn {

enum class OptimizerKind { kSgd, kAdamW };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kSgd;
  float lr = 0.05f;
  float momentum = 0.9f;      // sgd
  float beta1 = 0.9f;         // adamw
  float beta2 = 0.999f;       // adamw
  float eps = 1e-8f;          // adamw
  float weight_decay = 0.0f;  // sgd: L2; adamw: decoupled
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // One update of `params` from `grads` (same length as at construction).
  virtual void Step(std::span<float> params, std::span<const float> grads) = 0;
};

std::unique_ptr<Optimizer> MakeOptimizer(const OptimizerConfig& config, size_t num_params);

}  // namespace stepscope::nn
