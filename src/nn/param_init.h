// Deterministic parameter initialisation from a seed (same values on every platform).
#pragma once

#include <cstddef>
#include <cstdint>

namespace stepscope::nn {

// A small counter-based generator (SplitMix64): the same seed gives the same stream everywhere.
class InitRng {
 public:
  explicit InitRng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform in [-1, 1).
  float Symmetric();

 private:
  uint64_t state_;
};

// w (n) ~ U(-bound, bound).
void UniformInit(float* w, size_t n, float bound, InitRng& rng);

// He (Kaiming) uniform bound for a layer followed by ReLU: sqrt(6 / fan_in), variance 2/fan_in.
float HeUniformBound(int fan_in);
// Bound for the layer that produces the logits: 1 / sqrt(fan_in), variance 1/(3 fan_in), so
// the initial loss starts near log(classes).
float LogitsUniformBound(int fan_in);

}  // namespace stepscope::nn
