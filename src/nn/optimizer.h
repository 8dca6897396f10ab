// Optimizers over the flat parameter and gradient buffers.
#pragma once

#include <algorithm>
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
  // Step, then set grads to zero, in one pass over memory: the same result as Step followed by
  // Model::ZeroGrads, cheaper for large models whose step is bound by memory bandwidth.
  virtual void StepAndZeroGrads(std::span<float> params, std::span<float> grads) {
    Step(params, grads);
    std::fill(grads.begin(), grads.end(), 0.0f);
  }
  // Learning rate used by the next Step (for schedules); starts at OptimizerConfig::lr. The
  // optimizers MakeOptimizer returns implement both; the defaults are for test doubles.
  virtual void set_lr(float lr) {}
  virtual float lr() const { return 0.0f; }
};

// sgd:   g = grad + weight_decay * p;  v = momentum * v + g;  p -= lr * v   (v starts at 0)
// adamw: t += 1;  p -= lr * weight_decay * p;  m = beta1 m + (1-beta1) g;
//        v = beta2 v + (1-beta2) g^2;  p -= lr * (m / (1-beta1^t)) / (sqrt(v / (1-beta2^t)) + eps)
// Step updates min(params.size(), grads.size(), num_params) entries.
std::unique_ptr<Optimizer> MakeOptimizer(const OptimizerConfig& config, size_t num_params);

}  // namespace stepscope::nn
