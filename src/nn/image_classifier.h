// ImageClassifier: what the image models (mlp, cnn) share. Each runs a forward pass that
// returns the summed loss over the batch and counts correct answers; the mean loss of Forward
// and the sums of Evaluate follow from it in one place.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "nn/flat_buffer.h"
#include "nn/model.h"

namespace stepscope::nn {

class ImageClassifier : public Model {
 public:
  std::span<float> params() final { return params_; }
  std::span<float> grads() final { return grads_; }
  bool RelocateGrads(std::span<float> storage) final { return grads_.Relocate(storage); }

  float Forward(const Batch& batch) final {
    const double loss_sum = RunForward(batch, nullptr);
    return valid_ ? static_cast<float>(loss_sum / B_) : std::numeric_limits<float>::quiet_NaN();
  }

  EvalResult Evaluate(const Batch& batch) final {
    EvalResult r;
    const double loss_sum = RunForward(batch, &r.correct);
    if (!valid_) {
      r.loss_sum = std::numeric_limits<double>::quiet_NaN();
      return r;
    }
    r.loss_sum = loss_sum;
    r.count = B_;
    return r;
  }

 protected:
  // Checks the batch (sets valid_), runs forward keeping activations for Backward (sets B_),
  // returns the loss summed over the batch and adds correct answers to *correct if non-null.
  virtual double RunForward(const Batch& batch, int64_t* correct) = 0;

  std::vector<float> params_;
  FlatBuffer grads_;
  int B_ = 0;
  bool valid_ = false;
};

}  // namespace stepscope::nn
