#include "nn/mlp.h"

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "nn/image_classifier.h"
#include "nn/linear.h"
#include "nn/param_init.h"
#include "nn/relu.h"
#include "nn/softmax_xent.h"

namespace stepscope::nn {
namespace {

constexpr int kImageC = 1, kImageH = 28, kImageW = 28;
constexpr int kInputs = kImageC * kImageH * kImageW;
constexpr int kClasses = 10;

class Mlp final : public ImageClassifier {
 public:
  explicit Mlp(const ModelConfig& config) {
    dims_.push_back(kInputs);
    for (int h : config.hidden) dims_.push_back(h);
    dims_.push_back(kClasses);
    const int L = num_layers();
    size_t offset = 0;
    for (int l = 0; l < L; ++l) {
      weight_offset_.push_back(offset);
      offset += static_cast<size_t>(dims_[l]) * dims_[l + 1];
      bias_offset_.push_back(offset);
      offset += dims_[l + 1];
    }
    params_.assign(offset, 0.0f);
    grads_.assign(offset, 0.0f);
    // weights ~ U(-bound, bound), He bound before a ReLU; biases start at zero
    InitRng rng(config.seed);
    for (int l = 0; l < L; ++l) {
      const float bound = l + 1 < L ? HeUniformBound(dims_[l]) : LogitsUniformBound(dims_[l]);
      UniformInit(params_.data() + weight_offset_[l], static_cast<size_t>(dims_[l]) * dims_[l + 1],
                  bound, rng);
    }
    acts_.resize(L + 1);
    dacts_.resize(L + 1);
  }

  std::string Describe() const override {
    std::string s = "mlp ";
    for (size_t i = 0; i < dims_.size(); ++i) {
      if (i) s += "-";
      s += std::to_string(dims_[i]);
    }
    return s + " (" + FormatParameterCount(static_cast<int64_t>(params_.size())) + " parameters)";
  }

  ModelStats Stats() const override {
    ModelStats st;
    st.parameters = static_cast<int64_t>(params_.size());
    st.gradient_bytes = st.parameters * 4;
    double forward = 0, backward = 0;
    int64_t saved = kInputs + kClasses;  // the input copy and the softmax probabilities
    for (int l = 0; l < num_layers(); ++l) {
      const double macs = static_cast<double>(dims_[l]) * dims_[l + 1];
      forward += 2 * macs;
      backward += 2 * macs;             // dweight
      if (l > 0) backward += 2 * macs;  // dinp (not needed for the image itself)
      saved += dims_[l + 1];
    }
    st.flops_per_sample = forward + backward;
    st.activation_bytes_per_sample = saved * 4;
    return st;
  }

  void Backward(float loss_scale, const GradReadyFn& ready) override {
    const int L = num_layers();
    if (!valid_) {  // nothing to differentiate; still publish every slice so no reducer waits
      for (int l = L - 1; l >= 0; --l) Publish(l, ready);
      return;
    }
    // dlogits (B,10) = d(loss_scale * mean loss)/dlogits
    std::memset(dacts_[L].data(), 0, sizeof(float) * B_ * kClasses);
    SoftmaxXentBackward(dacts_[L].data(), probs_.data(), targets_.data(), loss_scale, B_, kClasses);
    for (int l = L - 1; l >= 0; --l) {
      const int C = dims_[l], OC = dims_[l + 1];
      // acts[l+1] = acts[l] @ W^T + b, then (hidden layers) ReLU in place
      LinearBackwardParams(grads_.data() + weight_offset_[l], grads_.data() + bias_offset_[l],
                           dacts_[l + 1].data(), acts_[l].data(), B_, C, OC);
      Publish(l, ready);
      if (l == 0) break;  // the image needs no gradient
      float* dinp = dacts_[l].data();
      std::memset(dinp, 0, sizeof(float) * B_ * C);
      LinearBackwardInput(dinp, dacts_[l + 1].data(), params_.data() + weight_offset_[l], B_, C,
                          OC);
      // acts[l] = relu(pre-activation), so dpre = dacts[l] * (acts[l] > 0)
      ReluBackward(dinp, dinp, acts_[l].data(), static_cast<size_t>(B_) * C);
    }
  }

 private:
  int num_layers() const { return static_cast<int>(dims_.size()) - 1; }

  void Publish(int l, const GradReadyFn& ready) const {
    if (!ready) return;
    const size_t end = l + 1 < num_layers() ? weight_offset_[l + 1] : params_.size();
    ready(weight_offset_[l], end - weight_offset_[l]);
  }

  // Grows activation buffers to hold B examples (never shrinks, so steady state allocates
  // nothing).
  void Reserve(int B) {
    if (B <= capacity_) return;
    capacity_ = B;
    for (int l = 0; l <= num_layers(); ++l) {
      acts_[l].resize(static_cast<size_t>(B) * dims_[l]);
      dacts_[l].resize(static_cast<size_t>(B) * dims_[l]);
    }
    probs_.resize(static_cast<size_t>(B) * kClasses);
    losses_.resize(B);
    targets_.resize(B);
  }

  double RunForward(const Batch& batch, int64_t* correct) override {
    valid_ = CheckImageBatch(batch, kImageC, kImageH, kImageW, kClasses).ok();
    if (!valid_) return 0.0;
    B_ = batch.size;
    Reserve(B_);
    std::memcpy(acts_[0].data(), batch.inputs.data(), sizeof(float) * B_ * kInputs);
    std::memcpy(targets_.data(), batch.targets.data(), sizeof(int32_t) * B_);
    const int L = num_layers();
    for (int l = 0; l < L; ++l) {
      const int C = dims_[l], OC = dims_[l + 1];
      // acts[l+1] (B,OC) = acts[l] (B,C) @ W^T + b
      LinearForward(acts_[l + 1].data(), acts_[l].data(), params_.data() + weight_offset_[l],
                    params_.data() + bias_offset_[l], B_, C, OC);
      if (l + 1 < L) {
        ReluForward(acts_[l + 1].data(), acts_[l + 1].data(), static_cast<size_t>(B_) * OC);
      }
    }
    return SoftmaxXentForward(probs_.data(), losses_.data(), correct, acts_[L].data(),
                              targets_.data(), B_, kClasses);
  }

  std::vector<int> dims_;  // 784, hidden..., 10
  std::vector<size_t> weight_offset_, bias_offset_;
  // acts_[0] is the input copy (B,784); acts_[l] (B,dims[l]) the output of layer l, after ReLU
  // for hidden layers; acts_[L] holds the logits. dacts_ are their gradients.
  std::vector<std::vector<float>> acts_, dacts_;
  std::vector<float> probs_, losses_;
  std::vector<int32_t> targets_;
  int capacity_ = 0;
};

}  // namespace

Result<std::unique_ptr<Model>> MakeMlp(const ModelConfig& config) {
  for (size_t i = 0; i < config.hidden.size(); ++i) {
    if (config.hidden[i] < 1) {
      return Status::Error("model config: mlp hidden width #" + std::to_string(i) + " is " +
                           std::to_string(config.hidden[i]) + ", expected at least 1");
    }
  }
  return std::unique_ptr<Model>(std::make_unique<Mlp>(config));
}

}  // namespace stepscope::nn
