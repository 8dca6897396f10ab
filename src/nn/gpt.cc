#include "nn/gpt.h"

namespace stepscope::nn {

Result<std::unique_ptr<Model>> MakeGpt(const ModelConfig&) {
  return Status::Error("model 'gpt' is not available in this build yet");
}

}  // namespace stepscope::nn
