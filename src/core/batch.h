// A batch of examples as the data module produces it and the models consume it.
#pragma once

#include <cstdint>
#include <vector>

namespace stepscope {

// A text target that carries no loss: a position past its example's length in a batch padded
// to its longest example (data/lengths.h). The position is computed and ignored.
inline constexpr int32_t kPaddedTarget = -1;

struct Batch {
  int size = 0;                  // examples in the batch (B)
  std::vector<float> inputs;     // images: (B, C, H, W) row-major, normalised; empty for text
  std::vector<int32_t> tokens;   // text: (B, T) input bytes; empty for images
  std::vector<int32_t> targets;  // images: (B) class labels; text: (B, T) next bytes, or
                                 // kPaddedTarget past an example's length
  int64_t epoch = 0;             // epoch this batch belongs to
  int64_t index = 0;             // batch number within the epoch on this rank
  // When a loader worker started and finished producing this batch, in seconds of
  // std::chrono::steady_clock (0 when unknown, e.g. synthetic input).
  double load_begin = 0;
  double load_end = 0;
};

}  // namespace stepscope
