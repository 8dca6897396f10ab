#include "core/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace stepscope {

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(p, 0.0, 100.0) / 100 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (rank - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

double Median(std::vector<double> values) { return Percentile(std::move(values), 50); }

double Mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

Estimate Bootstrap(const std::vector<double>& values,
                   const std::function<double(const std::vector<double>&)>& statistic,
                   const BootstrapOptions& options) {
  if (values.empty()) return {};
  const double point = statistic(values);
  if (values.size() == 1 || options.resamples < 2) return Estimate::Exact(point);
  const size_t n = values.size();
  const size_t block = std::clamp<size_t>(static_cast<size_t>(std::max(options.block, 1)), 1, n);
  std::mt19937_64 rng(options.seed);
  std::uniform_int_distribution<size_t> start(0, n - block);
  std::vector<double> stats;
  stats.reserve(static_cast<size_t>(options.resamples));
  std::vector<double> resample(n);
  for (int b = 0; b < options.resamples; ++b) {
    for (size_t i = 0; i < n;) {
      const size_t s = start(rng);
      for (size_t k = 0; k < block && i < n; ++k) resample[i++] = values[s + k];
    }
    stats.push_back(statistic(resample));
  }
  const double tail = 100 * (1 - std::clamp(options.level, 0.0, 1.0)) / 2;
  const double low = Percentile(stats, tail);
  const double high = Percentile(stats, 100 - tail);
  // The point lies inside its own interval even when the statistic is skewed.
  return {point, std::min(low, point), std::max(high, point)};
}

Estimate BootstrapMean(const std::vector<double>& values, const BootstrapOptions& options) {
  return Bootstrap(
      values, [](const std::vector<double>& v) { return Mean(v); }, options);
}

}  // namespace stepscope
