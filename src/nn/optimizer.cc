#include "nn/optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/cpu_dispatch.h"

namespace stepscope::nn {
namespace {

// v = mu v + g + wd p; p -= lr v, over one block.
STEPSCOPE_DISPATCH void SgdBlock(float* __restrict__ p, const float* __restrict__ g,
                                 float* __restrict__ v, size_t len, float lr, float mu, float wd) {
  for (size_t i = 0; i < len; ++i) {
    const float gi = g[i] + wd * p[i];
    v[i] = mu * v[i] + gi;
    p[i] -= lr * v[i];
  }
}

// The constants of one AdamW step t: bias corrections c1 = 1/(1 - b1^t), c2 = 1/(1 - b2^t), and
// the decoupled weight decay factor 1 - lr wd.
struct AdamWStep {
  float b1, b2, eps, lr, decay, c1, c2;
};

STEPSCOPE_DISPATCH void AdamWBlock(float* __restrict__ p, const float* __restrict__ g,
                                   float* __restrict__ m, float* __restrict__ v, size_t n,
                                   AdamWStep s) {
  for (size_t i = 0; i < n; ++i) {
    m[i] = s.b1 * m[i] + (1.0f - s.b1) * g[i];
    v[i] = s.b2 * v[i] + (1.0f - s.b2) * g[i] * g[i];
    const float mhat = m[i] * s.c1, vhat = v[i] * s.c2;
    p[i] = p[i] * s.decay - s.lr * mhat / (std::sqrt(vhat) + s.eps);
  }
}

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
      SgdBlock(params.data() + begin, grads + begin, velocity_.data() + begin, len, lr, mu, wd);
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
    AdamWStep s;
    s.b1 = config_.beta1;
    s.b2 = config_.beta2;
    s.eps = config_.eps;
    s.lr = config_.lr;
    s.decay = 1.0f - config_.lr * config_.weight_decay;
    s.c1 = 1.0f / static_cast<float>(1.0 - std::pow(static_cast<double>(s.b1), t_));
    s.c2 = 1.0f / static_cast<float>(1.0 - std::pow(static_cast<double>(s.b2), t_));
    AdamWBlock(params.data(), grads.data(), m_.data() + at, v_.data() + at, n, s);
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
