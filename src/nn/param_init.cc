#include "nn/param_init.h"

#include <cmath>

namespace stepscope::nn {

uint64_t InitRng::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

float InitRng::Symmetric() {
  // 24 random bits -> [0, 1) exactly representable in float, then -> [-1, 1)
  const float u = static_cast<float>(Next() >> 40) * (1.0f / 16777216.0f);
  return 2.0f * u - 1.0f;
}

void UniformInit(float* w, size_t n, float bound, InitRng& rng) {
  for (size_t i = 0; i < n; ++i) w[i] = bound * rng.Symmetric();
}

float HeUniformBound(int fan_in) { return std::sqrt(6.0f / static_cast<float>(fan_in)); }
float LogitsUniformBound(int fan_in) { return 1.0f / std::sqrt(static_cast<float>(fan_in)); }

}  // namespace stepscope::nn
