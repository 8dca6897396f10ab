// Test helper: compares an analytic gradient with double-sided finite differences.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace stepscope::nn::testing {

struct GradCheckOptions {
  float eps = 1e-2f;      // perturbation of each checked entry
  int max_checks = 200;   // entries checked (a random subset when x is larger)
  double rel_tol = 1e-2;  // on ||fd - analytic|| / max(||fd||, ||analytic||)
  double abs_tol = 1e-3;  // per entry, added to rel_tol * max(|fd|, |analytic|) * 5
  uint64_t seed = 7;
  int max_outliers = 0;  // entries allowed past the per-entry tolerance (ReLU kinks)
};

// For a subset of entries i of x: fd_i = (loss(x + eps e_i) - loss(x - eps e_i)) / (2 eps),
// compared with analytic[i]. `loss` must read x each time it is called. x is restored.
inline void ExpectGradientMatches(const std::string& name, std::span<float> x,
                                  const std::vector<float>& analytic,
                                  const std::function<double()>& loss,
                                  const GradCheckOptions& opt = {}) {
  ASSERT_EQ(x.size(), analytic.size()) << name;
  std::vector<size_t> idx(x.size());
  std::iota(idx.begin(), idx.end(), 0);
  if (static_cast<int>(idx.size()) > opt.max_checks) {
    std::mt19937_64 rng(opt.seed);
    std::shuffle(idx.begin(), idx.end(), rng);
    idx.resize(opt.max_checks);
  }
  double diff2 = 0, fd2 = 0, an2 = 0;
  int bad = 0;
  for (size_t i : idx) {
    const float saved = x[i];
    x[i] = saved + opt.eps;
    const double up = loss();
    x[i] = saved - opt.eps;
    const double down = loss();
    x[i] = saved;
    const double fd = (up - down) / (2.0 * opt.eps);
    const double an = analytic[i];
    diff2 += (fd - an) * (fd - an);
    fd2 += fd * fd;
    an2 += an * an;
    const double tol = opt.abs_tol + 5 * opt.rel_tol * std::max(std::fabs(fd), std::fabs(an));
    if (std::fabs(fd - an) > tol && ++bad <= opt.max_outliers + 5 && bad > opt.max_outliers) {
      ADD_FAILURE() << name << "[" << i << "]: finite difference " << fd << " vs analytic " << an;
    }
  }
  const double denom = std::max({std::sqrt(fd2), std::sqrt(an2), 1e-12});
  EXPECT_LT(std::sqrt(diff2) / denom, opt.rel_tol) << name << ": relative error of the gradient";
  EXPECT_GT(an2, 0.0) << name << ": analytic gradient is all zero";
}

// A deterministic vector of n values uniform in [lo, hi).
inline std::vector<float> RandomVector(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

// sum_i a[i] * r[i] in double: the scalar loss whose gradient with respect to a is r.
inline double Dot(const std::vector<float>& a, const std::vector<float>& r) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * r[i];
  return s;
}

}  // namespace stepscope::nn::testing
