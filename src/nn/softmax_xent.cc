#include "nn/softmax_xent.h"

#include <cmath>

#include "core/cpu_dispatch.h"

namespace stepscope::nn {

STEPSCOPE_DISPATCH double SoftmaxXentForward(float* probs, float* losses, int64_t* correct, const float* logits,
                          const int32_t* targets, int B, int V) {
  double loss_sum = 0.0;
  int64_t hits = 0;
  for (int b = 0; b < B; ++b) {
    const float* z = logits + static_cast<long>(b) * V;  // z is (V)
    float* p = probs + static_cast<long>(b) * V;         // p is (V)
    int arg = 0;
    float maxz = z[0];
    for (int v = 1; v < V; ++v) {
      if (z[v] > maxz) maxz = z[v], arg = v;
    }
    float sum = 0.0f;
    for (int v = 0; v < V; ++v) {
      p[v] = std::exp(z[v] - maxz);
      sum += p[v];
    }
    const float inv = 1.0f / sum;
    for (int v = 0; v < V; ++v) p[v] *= inv;
    const int t = targets[b];
    // -log p[t] = log(sum) - (z[t] - maxz), more accurate than -log of a tiny probability
    const float loss = std::log(sum) - (z[t] - maxz);
    losses[b] = loss;
    loss_sum += loss;
    hits += (arg == t);
  }
  if (correct) *correct = hits;
  return loss_sum;
}

STEPSCOPE_DISPATCH void SoftmaxXentBackward(float* dlogits, const float* probs, const int32_t* targets, float dloss,
                         int B, int V) {
  // loss = dloss/B * sum_b (-log softmax(z_b)[t_b])  =>  dz_b = dloss/B * (p_b - onehot(t_b))
  const float scale = dloss / static_cast<float>(B);
  for (int b = 0; b < B; ++b) {
    const float* p = probs + static_cast<long>(b) * V;
    float* dz = dlogits + static_cast<long>(b) * V;
    for (int v = 0; v < V; ++v) dz[v] += scale * p[v];
    dz[targets[b]] -= scale;
  }
}

}  // namespace stepscope::nn
