#include "nn/optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace stepscope::nn {
namespace {

class Sgd final : public Optimizer {
 public:
  Sgd(const OptimizerConfig& config, size_t n) : config_(config), velocity_(n, 0.0f) {}

  void Step(std::span<float> params, std::span<const float> grads) override {
    Update(params, grads.data(), nullptr, std::min(params.size(), grads.size()));
  }
  void StepAndZeroGrads(std::span<float> params, std::span<float> grads) override {
    Update(params, grads.data(), grads.data(), std::min(params.size(), grads.size()));
  }
  void set_lr(float lr) override { config_.lr = lr; }
  float lr() const override { return config_.lr; }

 private:
  // v = mu v + g + wd p; p -= lr v; and (zero_grads != nullptr) g = 0, block by block so the
  // zeroing finds g still in cache: one pass over memory.
  void Update(std::span<float> params, const float* grads, float* zero_grads, size_t n) {
    n = std::min(n, velocity_.size());
    const float lr = config_.lr, mu = config_.momentum, wd = config_.weight_decay;
    constexpr size_t kBlock = 4096;
    for (size_t begin = 0; begin < n; begin += kBlock) {
      const size_t len = std::min(kBlock, n - begin);
      float* __restrict__ p = params.data() + begin;
      const float* __restrict__ g = grads + begin;
      float* __restrict__ v = velocity_.data() + begin;
      for (size_t i = 0; i < len; ++i) {
        const float gi = g[i] + wd * p[i];
        v[i] = mu * v[i] + gi;
        p[i] -= lr * v[i];
      }
      if (zero_grads) std::memset(zero_grads + begin, 0, sizeof(float) * len);
    }
  }

  OptimizerConfig config_;
  std::vector<float> velocity_;
};

class AdamW final : public Optimizer {
 public:
  AdamW(const OptimizerConfig& config, size_t n) : config_(config), m_(n, 0.0f), v_(n, 0.0f) {}

  void StepAndZeroGrads(std::span<float> params, std::span<float> grads) override {
    constexpr size_t kBlock = 4096;
    const size_t n = std::min(params.size(), grads.size());
    ++t_;
    for (size_t begin = 0; begin < n; begin += kBlock) {
      const size_t len = std::min(kBlock, n - begin);
      Update(params.subspan(begin, len), grads.subspan(begin, len), begin);
      std::memset(grads.data() + begin, 0, sizeof(float) * len);
    }
  }

  void Step(std::span<float> params, std::span<const float> grads) override {
    ++t_;
    Update(params, grads, 0);
  }
  void set_lr(float lr) override { config_.lr = lr; }
  float lr() const override { return config_.lr; }

 private:
  // One AdamW update (step t_) of params[i] for i in [0, n), moments at offset `at`.
  void Update(std::span<float> params, std::span<const float> grads, size_t at) {
    const size_t n = std::min({params.size(), grads.size(), m_.size() - std::min(at, m_.size())});
    const float b1 = config_.beta1, b2 = config_.beta2, eps = config_.eps;
    const float lr = config_.lr;
    const float decay = 1.0f - config_.lr * config_.weight_decay;
    const float c1 = 1.0f / static_cast<float>(1.0 - std::pow(static_cast<double>(b1), t_));
    const float c2 = 1.0f / static_cast<float>(1.0 - std::pow(static_cast<double>(b2), t_));
    float* p = params.data();
    const float* g = grads.data();
    float* m = m_.data() + at;
    float* v = v_.data() + at;
    for (size_t i = 0; i < n; ++i) {
      m[i] = b1 * m[i] + (1.0f - b1) * g[i];
      v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
      const float mhat = m[i] * c1, vhat = v[i] * c2;
      p[i] = p[i] * decay - lr * mhat / (std::sqrt(vhat) + eps);
    }
  }
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
