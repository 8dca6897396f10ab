// Softmax cross-entropy over class logits, as a forward/backward pair over raw buffers.
#pragma once

#include <cstdint>

namespace stepscope::nn {

// probs (B,V) = softmax(logits (B,V)) row-wise; losses (B) = -log probs[b, targets[b]].
// Returns the summed loss (natural log) over the batch; *correct (if not null) receives the
// number of rows whose largest logit is at the target (ties go to the lowest index).
// Targets must lie in [0, V).
double SoftmaxXentForward(float* probs, float* losses, int64_t* correct, const float* logits,
                          const int32_t* targets, int B, int V);

// Backward of the mean loss scaled by dloss: loss = dloss * (1/B) sum_b losses[b].
// Accumulates (+=) dlogits (B,V) += dloss/B * (probs - onehot(targets)).
void SoftmaxXentBackward(float* dlogits, const float* probs, const int32_t* targets, float dloss,
                         int B, int V);

}  // namespace stepscope::nn
