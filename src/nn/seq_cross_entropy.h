// Cross-entropy of next-token predictions over a sequence, as a forward/backward pair.
#pragma once

#include <cstdint>

#include "core/batch.h"

namespace stepscope::nn {

// For each of the N = B*T positions: probs[n,:] = softmax(logits[n,:]) over V classes and
// losses[n] = -log probs[n, targets[n]] (natural log). probs may alias logits (in place).
// Targets must lie in [0, V) or be kPaddedTarget (core/batch.h): such a position has loss 0,
// its probs row is left as it was, and backward adds nothing to it. Returns the summed loss.
double SeqCrossEntropyForward(float* probs, float* losses, const float* logits,
                              const int32_t* targets, int N, int V);

// Backward of the line above, given dlosses (N) = d(objective)/d(losses[n]).
// Accumulates (+=) dlogits[n,:] += dlosses[n] * (probs[n,:] - onehot(targets[n])).
void SeqCrossEntropyBackward(float* dlogits, const float* probs, const int32_t* targets,
                             const float* dlosses, int N, int V);

}  // namespace stepscope::nn
