#include "nn/model.h"

#include <algorithm>
#include <cstdio>

#include "nn/cnn.h"
#include "nn/gpt.h"
#include "nn/mlp.h"

namespace stepscope::nn {

void Model::ZeroGrads() {
  std::span<float> g = grads();
  std::fill(g.begin(), g.end(), 0.0f);
}

Result<std::unique_ptr<Model>> MakeModel(const ModelConfig& config) {
  switch (config.kind) {
    case ModelKind::kMlp:
      return MakeMlp(config);
    case ModelKind::kCnn:
      return MakeCnn(config);
    case ModelKind::kGpt:
      return MakeGpt(config);
  }
  return Status::Error("model config: unknown model kind " +
                       std::to_string(static_cast<int>(config.kind)) +
                       " (expected mlp, cnn or gpt)");
}

std::string FormatParameterCount(int64_t parameters) {
  char text[32];
  if (parameters >= 1000000) {
    std::snprintf(text, sizeof(text), "%.1f M", static_cast<double>(parameters) / 1e6);
  } else if (parameters >= 1000) {
    std::snprintf(text, sizeof(text), "%.1f k", static_cast<double>(parameters) / 1e3);
  } else {
    std::snprintf(text, sizeof(text), "%lld", static_cast<long long>(parameters));
  }
  return text;
}

Status CheckImageBatch(const Batch& batch, int C, int H, int W, int classes) {
  const size_t B = static_cast<size_t>(std::max(batch.size, 0));
  if (batch.size <= 0) {
    return Status::Error("batch: size is " + std::to_string(batch.size) +
                         ", expected at least 1 example");
  }
  const size_t want = B * static_cast<size_t>(C) * H * W;
  if (batch.inputs.size() != want) {
    return Status::Error("batch: inputs has " + std::to_string(batch.inputs.size()) +
                         " floats, expected size*C*H*W = " + std::to_string(want) +
                         " (is this an image batch of shape (" + std::to_string(C) + "," +
                         std::to_string(H) + "," + std::to_string(W) + ")?)");
  }
  if (batch.targets.size() != B) {
    return Status::Error("batch: targets has " + std::to_string(batch.targets.size()) +
                         " labels, expected one per example (" + std::to_string(B) + ")");
  }
  for (size_t b = 0; b < B; ++b) {
    if (batch.targets[b] < 0 || batch.targets[b] >= classes) {
      return Status::Error("batch: targets[" + std::to_string(b) + "] is " +
                           std::to_string(batch.targets[b]) + ", expected a class in [0, " +
                           std::to_string(classes) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace stepscope::nn
