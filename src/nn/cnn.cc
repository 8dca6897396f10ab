#include "nn/cnn.h"

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "nn/conv2d.h"
#include "nn/image_classifier.h"
#include "nn/linear.h"
#include "nn/maxpool2d.h"
#include "nn/param_init.h"
#include "nn/relu.h"
#include "nn/softmax_xent.h"

namespace stepscope::nn {
namespace {

constexpr int kH = 28, kW = 28, kClasses = 10, kFc = 128, kK = 3, kPad = 1;

class Cnn final : public ImageClassifier {
 public:
  explicit Cnn(const ModelConfig& config) : c1_(config.cnn_channels), c2_(2 * config.cnn_channels) {
    flat_ = c2_ * (kH / 4) * (kW / 4);
    // parameter layout, in forward order: conv1 W,b | conv2 W,b | fc1 W,b | fc2 W,b
    const size_t sizes[kLayers][2] = {{static_cast<size_t>(c1_) * 1 * kK * kK, size_t(c1_)},
                                      {static_cast<size_t>(c2_) * c1_ * kK * kK, size_t(c2_)},
                                      {static_cast<size_t>(kFc) * flat_, size_t(kFc)},
                                      {static_cast<size_t>(kClasses) * kFc, size_t(kClasses)}};
    const int fan_in[kLayers] = {1 * kK * kK, c1_ * kK * kK, flat_, kFc};
    size_t offset = 0;
    for (int l = 0; l < kLayers; ++l) {
      w_[l] = offset;
      b_[l] = offset + sizes[l][0];
      offset = b_[l] + sizes[l][1];
    }
    params_.assign(offset, 0.0f);
    grads_.assign(offset, 0.0f);
    InitRng rng(config.seed);
    for (int l = 0; l < kLayers; ++l) {
      const float bound =
          l + 1 < kLayers ? HeUniformBound(fan_in[l]) : LogitsUniformBound(fan_in[l]);
      UniformInit(params_.data() + w_[l], sizes[l][0], bound, rng);
    }
  }

  std::string Describe() const override {
    return "cnn conv3x3(1->" + std::to_string(c1_) + ")-pool-conv3x3(" + std::to_string(c1_) +
           "->" + std::to_string(c2_) + ")-pool-" + std::to_string(flat_) + "-" +
           std::to_string(kFc) + "-" + std::to_string(kClasses) + " (" +
           FormatParameterCount(static_cast<int64_t>(params_.size())) + " parameters)";
  }

  ModelStats Stats() const override {
    ModelStats st;
    st.parameters = static_cast<int64_t>(params_.size());
    st.gradient_bytes = st.parameters * 4;
    const double conv1 = 2.0 * c1_ * (1 * kK * kK) * (kH * kW);
    const double conv2 = 2.0 * c2_ * (c1_ * kK * kK) * (kH / 2) * (kW / 2);
    const double fc1 = 2.0 * kFc * flat_, fc2 = 2.0 * kClasses * kFc;
    const double forward = conv1 + conv2 + fc1 + fc2;
    // backward: every weight gradient, plus the input gradient of all layers but conv1
    const double backward = forward + conv2 + fc1 + fc2;
    st.flops_per_sample = forward + backward;
    st.activation_bytes_per_sample = 4 * PerSampleSaved() + 4 * PerSampleIndices();
    return st;
  }

  void Backward(float loss_scale, const GradReadyFn& ready) override {
    if (!valid_) {
      for (int l = kLayers - 1; l >= 0; --l) Publish(l, ready);
      return;
    }
    const int B = B_;
    const int H2 = kH / 2, W2 = kW / 2;
    float* g = grads_.data();
    const float* p = params_.data();
    // logits = fc2(h); loss = mean xent(logits)
    Zero(dlogits_, static_cast<size_t>(B) * kClasses);
    SoftmaxXentBackward(dlogits_.data(), probs_.data(), targets_.data(), loss_scale, B, kClasses);
    // logits (B,10) = h (B,128) @ W4^T + b4
    LinearBackwardParams(g + w_[3], g + b_[3], dlogits_.data(), h_.data(), B, kFc, kClasses);
    Publish(3, ready);
    Zero(dh_, static_cast<size_t>(B) * kFc);
    LinearBackwardInput(dh_.data(), dlogits_.data(), p + w_[3], B, kFc, kClasses);
    // h = relu(p2 (B,flat) @ W3^T + b3)
    ReluBackward(dh_.data(), dh_.data(), h_.data(), static_cast<size_t>(B) * kFc);
    LinearBackwardParams(g + w_[2], g + b_[2], dh_.data(), pool2_.data(), B, flat_, kFc);
    Publish(2, ready);
    Zero(dpool2_, static_cast<size_t>(B) * flat_);
    LinearBackwardInput(dpool2_.data(), dh_.data(), p + w_[2], B, flat_, kFc);
    // pool2 (B,c2,7,7) = maxpool(a2); a2 (B,c2,14,14) = relu(conv2(pool1))
    Zero(da2_, static_cast<size_t>(B) * c2_ * H2 * W2);
    MaxPool2dBackward(da2_.data(), dpool2_.data(), idx2_.data(), B, c2_, H2, W2);
    ReluBackward(da2_.data(), da2_.data(), a2_.data(), static_cast<size_t>(B) * c2_ * H2 * W2);
    Zero(dpool1_, static_cast<size_t>(B) * c1_ * H2 * W2);
    Conv2dBackward(dpool1_.data(), dcol_.data(), g + w_[1], g + b_[1], da2_.data(), col2_.data(),
                   p + w_[1], B, c1_, H2, W2, c2_, kK, kPad);
    Publish(1, ready);
    // pool1 (B,c1,14,14) = maxpool(a1); a1 (B,c1,28,28) = relu(conv1(image))
    Zero(da1_, static_cast<size_t>(B) * c1_ * kH * kW);
    MaxPool2dBackward(da1_.data(), dpool1_.data(), idx1_.data(), B, c1_, kH, kW);
    ReluBackward(da1_.data(), da1_.data(), a1_.data(), static_cast<size_t>(B) * c1_ * kH * kW);
    Conv2dBackward(nullptr, nullptr, g + w_[0], g + b_[0], da1_.data(), col1_.data(), p + w_[0], B,
                   1, kH, kW, c1_, kK, kPad);
    Publish(0, ready);
  }

 private:
  static constexpr int kLayers = 4;

  static void Zero(std::vector<float>& v, size_t n) { std::memset(v.data(), 0, sizeof(float) * n); }

  // Floats kept per example for backward: image columns, conv outputs, pooled maps, hidden,
  // probabilities.
  int64_t PerSampleSaved() const {
    const int64_t hw = kH * kW, hw2 = hw / 4, hw4 = hw / 16;
    return hw * kK * kK + c1_ * hw + c1_ * hw2 + c1_ * kK * kK * hw2 + c2_ * hw2 + c2_ * hw4 + kFc +
           kClasses;
  }
  int64_t PerSampleIndices() const { return c1_ * (kH * kW / 4) + c2_ * (kH * kW / 16); }

  void Publish(int l, const GradReadyFn& ready) const {
    if (!ready) return;
    const size_t end = l + 1 < kLayers ? w_[l + 1] : params_.size();
    ready(w_[l], end - w_[l]);
  }

  void Reserve(int B) {
    if (B <= capacity_) return;
    capacity_ = B;
    const size_t b = B, hw = kH * kW, hw2 = hw / 4, hw4 = hw / 16;
    col1_.resize(b * kK * kK * hw);
    a1_.resize(b * c1_ * hw);
    da1_.resize(b * c1_ * hw);
    pool1_.resize(b * c1_ * hw2);
    dpool1_.resize(b * c1_ * hw2);
    idx1_.resize(b * c1_ * hw2);
    col2_.resize(b * c1_ * kK * kK * hw2);
    dcol_.resize(static_cast<size_t>(c1_) * kK * kK * hw2);
    a2_.resize(b * c2_ * hw2);
    da2_.resize(b * c2_ * hw2);
    pool2_.resize(b * c2_ * hw4);
    dpool2_.resize(b * c2_ * hw4);
    idx2_.resize(b * c2_ * hw4);
    h_.resize(b * kFc);
    dh_.resize(b * kFc);
    logits_.resize(b * kClasses);
    dlogits_.resize(b * kClasses);
    probs_.resize(b * kClasses);
    losses_.resize(b);
    targets_.resize(b);
  }

  double RunForward(const Batch& batch, int64_t* correct) override {
    valid_ = CheckImageBatch(batch, 1, kH, kW, kClasses).ok();
    if (!valid_) return 0.0;
    const int B = B_ = batch.size;
    Reserve(B);
    const int H2 = kH / 2, W2 = kW / 2;
    const float* p = params_.data();
    std::memcpy(targets_.data(), batch.targets.data(), sizeof(int32_t) * B);
    // a1 (B,c1,28,28) = relu(conv3x3(image (B,1,28,28))); pool1 (B,c1,14,14) = maxpool(a1)
    Conv2dForward(a1_.data(), col1_.data(), batch.inputs.data(), p + w_[0], p + b_[0], B, 1, kH, kW,
                  c1_, kK, kPad);
    ReluForward(a1_.data(), a1_.data(), static_cast<size_t>(B) * c1_ * kH * kW);
    MaxPool2dForward(pool1_.data(), idx1_.data(), a1_.data(), B, c1_, kH, kW);
    // a2 (B,c2,14,14) = relu(conv3x3(pool1)); pool2 (B,c2,7,7) = maxpool(a2)
    Conv2dForward(a2_.data(), col2_.data(), pool1_.data(), p + w_[1], p + b_[1], B, c1_, H2, W2,
                  c2_, kK, kPad);
    ReluForward(a2_.data(), a2_.data(), static_cast<size_t>(B) * c2_ * H2 * W2);
    MaxPool2dForward(pool2_.data(), idx2_.data(), a2_.data(), B, c2_, H2, W2);
    // h (B,128) = relu(pool2 flattened (B,flat) @ W3^T + b3); logits (B,10) = h @ W4^T + b4
    LinearForward(h_.data(), pool2_.data(), p + w_[2], p + b_[2], B, flat_, kFc);
    ReluForward(h_.data(), h_.data(), static_cast<size_t>(B) * kFc);
    LinearForward(logits_.data(), h_.data(), p + w_[3], p + b_[3], B, kFc, kClasses);
    return SoftmaxXentForward(probs_.data(), losses_.data(), correct, logits_.data(),
                              targets_.data(), B, kClasses);
  }

  int c1_, c2_, flat_;
  size_t w_[kLayers], b_[kLayers];  // offsets of each layer's weight and bias in params_
  std::vector<float> col1_, a1_, da1_, pool1_, dpool1_, col2_, dcol_, a2_, da2_, pool2_, dpool2_;
  std::vector<int32_t> idx1_, idx2_;
  std::vector<float> h_, dh_, logits_, dlogits_, probs_, losses_;
  std::vector<int32_t> targets_;
  int capacity_ = 0;
};

}  // namespace

Result<std::unique_ptr<Model>> MakeCnn(const ModelConfig& config) {
  if (config.cnn_channels < 1) {
    return Status::Error("model config: cnn_channels is " + std::to_string(config.cnn_channels) +
                         ", expected at least 1");
  }
  return std::unique_ptr<Model>(std::make_unique<Cnn>(config));
}

}  // namespace stepscope::nn
