#include "nn/optimizer.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace stepscope::nn {
namespace {

class Sgd final : public Optimizer {
 public:
  Sgd(const OptimizerConfig& config, size_t n) : config_(config), velocity_(n, 0.0f) {}

  void Step(std::span<float> params, std::span<const float> grads) override {
    const size_t n = std::min({params.size(), grads.size(), velocity_.size()});
    float* p = params.data();
    const float* g = grads.data();
    float* v = velocity_.data();
    const float lr = config_.lr, mu = config_.momentum, wd = config_.weight_decay;
    for (size_t i = 0; i < n; ++i) {
      const float gi = g[i] + wd * p[i];
      v[i] = mu * v[i] + gi;
      p[i] -= lr * v[i];
    }
  }
  void set_lr(float lr) override { config_.lr = lr; }
  float lr() const override { return config_.lr; }

 private:
  OptimizerConfig config_;
  std::vector<float> velocity_;
};

class AdamW final : public Optimizer {
 public:
  AdamW(const OptimizerConfig& config, size_t n) : config_(config), m_(n, 0.0f), v_(n, 0.0f) {}

  void Step(std::span<float> params, std::span<const float> grads) override {
    ++t_;
    const size_t n = std::min({params.size(), grads.size(), m_.size()});
    const float b1 = config_.beta1, b2 = config_.beta2, eps = config_.eps;
    const float lr = config_.lr;
    const float decay = 1.0f - config_.lr * config_.weight_decay;
    const float c1 = 1.0f / static_cast<float>(1.0 - std::pow(static_cast<double>(b1), t_));
    const float c2 = 1.0f / static_cast<float>(1.0 - std::pow(static_cast<double>(b2), t_));
    float* p = params.data();
    const float* g = grads.data();
    float* m = m_.data();
    float* v = v_.data();
    for (size_t i = 0; i < n; ++i) {
      m[i] = b1 * m[i] + (1.0f - b1) * g[i];
      v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
      const float mhat = m[i] * c1, vhat = v[i] * c2;
      p[i] = p[i] * decay - lr * mhat / (std::sqrt(vhat) + eps);
    }
  }
  void set_lr(float lr) override { config_.lr = lr; }
  float lr() const override { return config_.lr; }

 private:
  OptimizerConfig config_;
  std::vector<float> m_, v_;
  int64_t t_ = 0;
};

}  // namespace

std::unique_ptr<Optimizer> MakeOptimizer(const OptimizerConfig& config, size_t num_params) {
  if (config.kind == OptimizerKind::kAdamW) return std::make_unique<AdamW>(config, num_params);
  return std::make_unique<Sgd>(config, num_params);
}

}  // namespace stepscope::nn
