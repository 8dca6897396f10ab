// Where each gpt parameter tensor lives in the one flat parameter buffer, and what the model
// costs (parameters, FLOPs, saved activations).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "nn/model.h"

namespace stepscope::nn {

// Vocabulary: bytes.
inline constexpr int kGptVocab = 256;
// Longest context a gpt accepts (position table rows).
inline constexpr int kGptMaxContext = 4096;

struct GptShape {
  int L = 0;   // blocks
  int C = 0;   // width
  int NH = 0;  // heads
  int T = 0;   // context
  int V = kGptVocab;
};

// Checks the gpt fields of `config` (all positive, heads divide width, context <= 4096); the
// message names the offending field.
Status ValidateGptConfig(const ModelConfig& config);
GptShape GptShapeFrom(const ModelConfig& config);

// Offsets (in floats) of one block's tensors; [begin, end) is the block's contiguous slice.
struct GptBlockOffsets {
  size_t begin = 0;
  size_t ln1w = 0, ln1b = 0;          // (C), (C)
  size_t qkvw = 0, qkvb = 0;          // (3C,C), (3C)
  size_t attprojw = 0, attprojb = 0;  // (C,C), (C)
  size_t ln2w = 0, ln2b = 0;          // (C), (C)
  size_t fcw = 0, fcb = 0;            // (4C,C), (4C)
  size_t fcprojw = 0, fcprojb = 0;    // (C,4C), (C)
  size_t end = 0;
};

// The flat buffer, in order: [wte (V,C) | wpe (T,C)] [block 0] ... [block L-1]
// [lnfw (C) | lnfb (C) | head (V,C)]. Backward finishes these groups last-to-first, so the
// slices it reports have decreasing offsets and tile the buffer. The LM head is untied from wte
// so that every group's gradient is final as soon as backward leaves it.
struct GptLayout {
  size_t wte = 0, wpe = 0;
  std::vector<GptBlockOffsets> blocks;
  size_t head_begin = 0;  // start of the final group
  size_t lnfw = 0, lnfb = 0, head = 0;
  size_t total = 0;
};

GptLayout ComputeGptLayout(const GptShape& s);

// Parameters, gradient bytes, forward+backward FLOPs per sequence of T bytes and the activation
// bytes saved per sequence for the backward pass.
ModelStats ComputeGptStats(const GptShape& s);

}  // namespace stepscope::nn
