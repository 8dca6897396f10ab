// Test helpers for the gpt layers: a double-sided finite-difference gradient check (seeded
// random buffers come from grad_check_testing.h). Header-only; included by the *_test.cc files of
// the gpt layers only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "nn/grad_check_testing.h"

namespace stepscope::nn::gpt_testing {

// Worst relative error between analytic[i] and the double-sided difference
// (f(x[i] + eps) - f(x[i] - eps)) / (2 eps) over `indices`, where the relative error is
// |analytic - numeric| / max(|analytic| + |numeric|, floor). x is restored afterwards.
inline double MaxRelativeError(const std::function<double()>& f, float* x, const float* analytic,
                               const std::vector<size_t>& indices, float eps, double floor) {
  double worst = 0.0;
  for (size_t i : indices) {
    const float saved = x[i];
    x[i] = saved + eps;
    const double plus = f();
    x[i] = saved - eps;
    const double minus = f();
    x[i] = saved;
    const double numeric = (plus - minus) / (2.0 * static_cast<double>(eps));
    const double a = analytic[i];
    const double err = std::abs(a - numeric) / std::max(std::abs(a) + std::abs(numeric), floor);
    worst = std::max(worst, err);
  }
  return worst;
}

// 0, 1, ..., n-1.
inline std::vector<size_t> AllIndices(size_t n) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

// sum_i out[i] * w[i] in double: a scalar objective whose gradient with respect to out is w.
inline double Dot(const float* out, const std::vector<float>& w) {
  double s = 0.0;
  for (size_t i = 0; i < w.size(); ++i) s += static_cast<double>(out[i]) * w[i];
  return s;
}

}  // namespace stepscope::nn::gpt_testing
