// Model: a network whose parameters and gradients each live in one flat buffer, so a gradient
// bucket is a contiguous slice of grads(). Layers are explicit forward/backward pairs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/status.h"

namespace stepscope::nn {

enum class ModelKind { kMlp, kCnn, kGpt };

struct ModelConfig {
  ModelKind kind = ModelKind::kMlp;
  std::vector<int> hidden = {256, 256};  // mlp: hidden widths
  int cnn_channels = 32;                 // cnn: channels of the first conv (second is 2x)
  int gpt_layers = 2;                    // gpt: transformer blocks
  int gpt_width = 128;                   // gpt: embedding width C
  int gpt_heads = 4;                     // gpt: attention heads (must divide width)
  int gpt_context = 64;                  // gpt: context length T
  uint64_t seed = 1;                     // parameter initialisation
};

// What --print-model shows and what the analysis needs to reason about scaling.
struct ModelStats {
  int64_t parameters = 0;
  int64_t gradient_bytes = 0;               // fp32 gradient bytes (parameters * 4)
  double flops_per_sample = 0;              // forward + backward (about 3x forward)
  int64_t activation_bytes_per_sample = 0;  // saved for backward
};

// Result of evaluating one held-out batch.
struct EvalResult {
  double loss_sum = 0;  // summed over examples (text: over predicted bytes), natural log
  int64_t correct = 0;  // images: correctly classified examples
  int64_t count = 0;    // examples (images) or predicted bytes (text)
};

// Called during backward as soon as the gradients of parameters [offset, offset + count)
// are final for this micro-batch, in reverse layer order.
using GradReadyFn = std::function<void(size_t offset, size_t count)>;

class Model {
 public:
  virtual ~Model() = default;

  virtual std::string Describe() const = 0;  // e.g. "mlp 784-256-256-10"
  virtual ModelStats Stats() const = 0;
  // Input shape the model expects: images (C, H, W) or text context T (H = W = 0).
  virtual std::span<float> params() = 0;
  virtual std::span<float> grads() = 0;
  // Moves the gradients into `storage` (its first grads().size() floats, contents copied), for
  // example memory an all-reduce can reduce in place. Returns false, changing nothing, when
  // `storage` is too small. `storage` must outlive the model's use of it.
  virtual bool RelocateGrads(std::span<float> storage) = 0;

  // Runs forward on `batch`, keeps activations for Backward, returns the mean loss.
  virtual float Forward(const Batch& batch) = 0;
  // Adds d(loss_scale * mean loss)/d(params) into grads() (accumulates: call ZeroGrads first).
  // Calls `ready` for each layer's parameter slice when its gradient is final (may be empty).
  virtual void Backward(float loss_scale, const GradReadyFn& ready) = 0;
  virtual EvalResult Evaluate(const Batch& batch) = 0;

  void ZeroGrads();
};

Result<std::unique_ptr<Model>> MakeModel(const ModelConfig& config);

// "5.8 M", "269.3 k" or "950": a parameter count for Describe().
std::string FormatParameterCount(int64_t parameters);

// Checks that `batch` holds `batch.size` images of shape (C,H,W) and labels in [0, classes);
// the error names the field that is wrong.
Status CheckImageBatch(const Batch& batch, int C, int H, int W, int classes);

}  // namespace stepscope::nn
