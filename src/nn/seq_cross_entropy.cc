#include "nn/seq_cross_entropy.h"

#include <cmath>
#include <cstddef>

#include "core/cpu_dispatch.h"

namespace stepscope::nn {

STEPSCOPE_DISPATCH double SeqCrossEntropyForward(float* probs, float* losses, const float* logits,
                                                 const int32_t* targets, int N, int V) {
  double total = 0.0;
  for (int n = 0; n < N; ++n) {
    if (targets[n] == kPaddedTarget) {
      losses[n] = 0.0f;
      continue;
    }
    const float* z = logits + static_cast<size_t>(n) * V;
    float* p = probs + static_cast<size_t>(n) * V;
    const float target_logit = z[targets[n]];  // read before an in-place softmax overwrites it
    float max = z[0];
    for (int v = 1; v < V; ++v) max = z[v] > max ? z[v] : max;
    double sum = 0.0;
    for (int v = 0; v < V; ++v) {
      p[v] = std::exp(z[v] - max);
      sum += p[v];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int v = 0; v < V; ++v) p[v] *= inv;
    // -log softmax from the logits: finite even when the target probability underflows to 0
    const double loss = std::log(sum) + max - target_logit;
    losses[n] = static_cast<float>(loss);
    total += loss;
  }
  return total;
}

STEPSCOPE_DISPATCH void SeqCrossEntropyBackward(float* dlogits, const float* probs,
                                                const int32_t* targets, const float* dlosses, int N,
                                                int V) {
  // losses[n] = -log softmax(logits[n,:])[targets[n]]
  //   =>  dlogits[n,v] += dlosses[n] * (probs[n,v] - [v == targets[n]])
  for (int n = 0; n < N; ++n) {
    if (targets[n] == kPaddedTarget) continue;
    const float* p = probs + static_cast<size_t>(n) * V;
    float* dz = dlogits + static_cast<size_t>(n) * V;
    const float d = dlosses[n];
    for (int v = 0; v < V; ++v) dz[v] += d * p[v];
    dz[targets[n]] -= d;
  }
}

}  // namespace stepscope::nn
